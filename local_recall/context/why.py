"""Why a prompt got the memories it got — or none: `explain_prompt`, the prompt hook's steps
with their inputs kept (hooks/answers.py: `answer_prompt`, on `ContextService`): the prompt as a
query, the chit-chat filter, the search with the hook's limit, the store-aware decision
(search/decision.py), the tiers and the token budget (context/prompt.py). `local-recall why`
asks the daemon for it (warm: its model and index are loaded) and computes it in its own process
when no daemon answers; both print the same JSON through `search.explain.explanation_text`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

from local_recall.context.hook_answers import choose, learned_tiers
from local_recall.context.hook_settings import HookSettings, load_hook_settings
from local_recall.context.prompt import prompt_query, render_selection
from local_recall.context.service import ContextService, hit_note
from local_recall.learning.calibration import calibrate
from local_recall.learning.learned import Learned, LearnSettings, read_learned
from local_recall.learning.track import tracks
from local_recall.learning.usage_log import read_outcomes
from local_recall.search.explain import Explanation
from local_recall.search.limits import MAX_LIMIT
from local_recall.search.query import SearchQuery
from local_recall.search.query_intent import asks_of_repository, has_nothing_to_look_up

if TYPE_CHECKING:
    from local_recall.recall import Recall


def explain_prompt(
    recall: Recall,
    prompt: str,
    *,
    sync: bool = False,
    environ: Mapping[str, str] | None = None,
) -> Explanation:
    """The hook's decision for `prompt` with its inputs. `sync`: bring the index (and the
    background) up to date first; the hook's daemon keeps it current by itself. `environ`:
    the asking process's LOCAL_RECALL_* and XDG variables (a warm `why` in the daemon decides
    with the settings the CLI's own process would read, as a hook's answer does)."""
    settings = load_hook_settings(
        recall.layout, recall.settings.environ if environ is None else environ
    )
    limit = min(settings.search_limit, MAX_LIMIT)
    memories = len(recall.list())
    query = prompt_query(prompt)
    reason = ""
    if query is None:
        reason = "empty, too short, or a slash command (Claude Code handles those)"
    elif has_nothing_to_look_up(query):
        reason = "chat or a go-ahead: no word in it could name a topic (query_intent.py)"
    elif settings.prompt_tokens <= 0:
        reason = "hooks.prompt_tokens is 0: the prompt hook injects nothing"
    if query is None or reason:
        return Explanation(prompt, False, reason, (), None, None, memories, 0.0, ())
    if sync:
        recall.sync_index()
    # the hook's search: anchors checked now, the org copy when `[org] hook` is on; LanceDB's
    # full text, so that the raw signals print alike with and without the daemon
    asked = SearchQuery(query, limit=limit, min_score=0.0, lancedb_text=True)
    context = ContextService(recall)
    result = context.prompt_search(asked)
    notes = context.with_id_chars([hit_note(hit) for hit in result.hits])
    learning, records = _learned(recall, [hit.id for hit in result.hits], settings)
    tiers = learned_tiers(settings.tiers, learning.learned)
    chosen = choose(query, notes, settings, tiers, learning.learned)
    every = settings.inject_unreviewed
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
        pointer_ranks=tiers.pointers,
        held_back=tuple(n.id for n in notes if n.unreviewed and not every),
        full_tokens=tiers.full_tokens if tiers.pointers > 0 else 0,
        learning=learning.summary,
        tracks=records,
        reasons=dict(chosen.reasons),
        asks=asks_of_repository(query),
        pointer_gap=tiers.pointer_gap,
        shown_text=render_selection(chosen, budget_tokens=settings.prompt_tokens),
    )


class _Learning(NamedTuple):
    learned: Learned  # what the hook decides with
    summary: dict[str, object] | None  # for the explanation (None: nothing is learned)


def _learned(
    recall: Recall, ids: list[str], hook: HookSettings
) -> tuple[_Learning, dict[str, dict[str, object]]]:
    """The hook's learned cut-offs and order factors (learning/learned.py, the same cache), and
    for people: the calibration's evidence and each candidate's track record."""
    settings: LearnSettings = hook.learning
    now = recall.settings.clock()
    learned = read_learned(recall.layout, settings, now)
    if not settings.calibrate and not settings.track_record:
        return _Learning(learned, None), {}
    outcomes = read_outcomes(recall.layout, now)
    calibration = calibrate(
        outcomes,
        min_score=settings.min_score,
        pointer_min_score=settings.pointer_min_score,
        now=now,
        half_life_days=settings.half_life_days,
    )
    summary: dict[str, object] = {
        "calibrate": settings.calibrate,
        "track_record": settings.track_record,
        "half_life_days": settings.half_life_days,
        "outcomes": len(outcomes),
        "configured_min_score": settings.min_score,
        "configured_pointer_min_score": settings.pointer_min_score,
        "calibration": calibration.to_json() if settings.calibrate else None,
    }
    records = tracks(outcomes, now, settings.half_life_days) if settings.track_record else {}
    shown = {
        memory_id: {**records[memory_id].to_json(), "factor": learned.factors.get(memory_id, 1.0)}
        for memory_id in ids
        if memory_id in records
    }
    return _Learning(learned, summary), shown
