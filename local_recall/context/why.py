"""Why a prompt got the memories it got — or none: `explain_prompt`, the prompt hook's steps
with their inputs kept (hooks/answers.py: `answer_prompt`, on `ContextService`): the prompt as a
query, the chit-chat filter, the search with the hook's limit, the store-aware decision
(search/decision.py), the tiers and the token budget (context/prompt.py). `local-recall why`
asks the daemon for it (warm: its model and index are loaded) and computes it in its own process
when no daemon answers; both print the same JSON through `search.explain.explanation_text`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from local_recall.context.hook_answers import learned_tiers
from local_recall.context.prompt import POINTER_RANKS, Tiers, prompt_query, select
from local_recall.context.service import ContextService, hit_note
from local_recall.learning.calibration import calibrate
from local_recall.learning.learned import Learned, LearnSettings, read_learned
from local_recall.learning.track import tracks
from local_recall.learning.usage_log import read_outcomes
from local_recall.search.explain import Explanation
from local_recall.search.limits import MAX_LIMIT
from local_recall.search.query import SearchQuery
from local_recall.search.query_intent import has_nothing_to_look_up

if TYPE_CHECKING:
    from local_recall.recall import Recall


def explain_prompt(recall: Recall, prompt: str, *, sync: bool = False) -> Explanation:
    """The hook's decision for `prompt` with its inputs. `sync`: bring the index (and the
    background) up to date first; the hook's daemon keeps it current by itself."""
    hooks, limit = recall.config.hooks, min(recall.config.search.default_limit, MAX_LIMIT)
    memories = len(recall.list())
    query = prompt_query(prompt)
    reason = ""
    if query is None:
        reason = "empty, too short, or a slash command (Claude Code handles those)"
    elif has_nothing_to_look_up(query):
        reason = "chat or a go-ahead: no word in it could name a topic (query_intent.py)"
    elif hooks.prompt_tokens <= 0:
        reason = "hooks.prompt_tokens is 0: the prompt hook injects nothing"
    if query is None or reason:
        return Explanation(prompt, False, reason, (), None, None, memories, 0.0, ())
    if sync:
        recall.sync_index()
    # the hook's search: anchors checked now, the org copy when `[org] hook` is on; LanceDB's
    # full text, so that the raw signals print alike with and without the daemon
    asked = SearchQuery(query, limit=limit, min_score=0.0, lancedb_text=True)
    result = ContextService(recall).prompt_search(asked)
    notes = [hit_note(hit) for hit in result.hits]
    every = recall.config.review.inject_unreviewed
    kept = [n for n in notes if every or not n.unreviewed]
    if not recall.config.learning.disputed:  # as the hook: a dispute then holds nothing back
        kept = [n._replace(disputed="") for n in kept]
    tiers = Tiers(
        hooks.prompt_tokens,
        hooks.prompt_min_score,
        hooks.prompt_pointers,
        hooks.prompt_pointer_min_score,
        hooks.prompt_full_tokens,
    )
    learning, records = _learned(recall, [hit.id for hit in result.hits])
    learned = learning.learned
    tiers = learned_tiers(tiers, learned)
    kept = [note._replace(track=learned.factors.get(note.id, 1.0)) for note in kept]
    chosen = select(kept, tiers)
    return Explanation(
        prompt,
        True,
        "",
        result.hits,
        result.decision,
        recall.searcher.relevance.background(),
        memories,
        tiers.min_score,
        tuple(note.id for note in chosen.shown),
        result.degraded_reason,
        pointers=tuple(note.id for note in chosen.pointers),
        pointer_threshold=tiers.pointer_min_score,
        max_pointers=tiers.pointers,
        pointer_ranks=POINTER_RANKS,
        held_back=tuple(n.id for n in notes if n.unreviewed and not every),
        full_tokens=tiers.full_tokens if tiers.pointers > 0 else 0,
        learning=learning.summary,
        tracks=records,
    )


class _Learning(NamedTuple):
    learned: Learned  # what the hook decides with
    summary: dict[str, object] | None  # for the explanation (None: nothing is learned)


def _learned(recall: Recall, ids: list[str]) -> tuple[_Learning, dict[str, dict[str, object]]]:
    """The hook's learned cut-offs and order factors (learning/learned.py, the same cache), and
    for people: the calibration's evidence and each candidate's track record."""
    config, hooks = recall.config.learning, recall.config.hooks
    settings = LearnSettings(
        config.calibrate,
        config.track_record,
        config.half_life_days,
        hooks.prompt_min_score,
        hooks.prompt_pointer_min_score,
    )
    now = recall.settings.clock()
    learned = read_learned(recall.layout, settings, now)
    if not config.calibrate and not config.track_record:
        return _Learning(learned, None), {}
    outcomes = read_outcomes(recall.layout, now)
    calibration = calibrate(
        outcomes,
        min_score=hooks.prompt_min_score,
        pointer_min_score=hooks.prompt_pointer_min_score,
        now=now,
        half_life_days=config.half_life_days,
    )
    summary: dict[str, object] = {
        "calibrate": config.calibrate,
        "track_record": config.track_record,
        "half_life_days": config.half_life_days,
        "outcomes": len(outcomes),
        "configured_min_score": hooks.prompt_min_score,
        "configured_pointer_min_score": hooks.prompt_pointer_min_score,
        "calibration": calibration.to_json() if config.calibrate else None,
    }
    records = tracks(outcomes, now, config.half_life_days) if config.track_record else {}
    shown = {
        memory_id: {**records[memory_id].to_json(), "factor": learned.factors.get(memory_id, 1.0)}
        for memory_id in ids
        if memory_id in records
    }
    return _Learning(learned, summary), shown
