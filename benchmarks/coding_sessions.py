"""Tokens a realistic session spends on memory: coding_bench.py's prompts replayed as 12-prompt
sessions, with today's tiers and session record against the hook before them.

A session (per project, deterministic): four answered questions, each asked twice (a follow-up
later in the session re-asks it, as people do), two in-domain questions with no answer and two
generic instructions, interleaved:

    p1 g1 p2 n1 p3 p1' g2 p4 p2' n2 p3' p4'

Each prompt's hits are the ones coding_bench.py's search found (the hook's search, the hook's
limit); the two policies differ only in what they make of them:

* *before tiers*: full text at hooks.prompt_min_score, nothing else, no memory of the session
  (every re-ask injects the same text again);
* *tiers*: context/prompt.py's `select` with hooks.prompt_pointers, whether the prompt asks
  something of this repository, and the session's record (learning/shown.py), as the hook runs
  it.

Reported: mean tokens per session (characters / 4 of every injected block, all 12 prompts) and
per prompt, and how many answers were in the agent's context when first asked for (shown in
full or as a pointer then, or shown in full earlier in the session).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from local_recall.context.hook_settings import HookSettings
from local_recall.context.notes import CHARS_PER_TOKEN
from local_recall.context.prompt import prompt_query, render_selection, select
from local_recall.learning.shown import Shown, ShownLine, shown_line, shown_of
from local_recall.search.query_intent import asks_of_repository

PATTERN = ("p1", "g1", "p2", "n1", "p3", "p1", "g2", "p4", "p2", "n2", "p3", "p4")


def sessions_of(rows: Sequence[tuple[Any, Any, frozenset[str]]]) -> list[list[int]]:
    """Row indexes of each session, per project, in PATTERN's order (a project with too few
    prompts of a kind gives fewer sessions)."""
    by_project: dict[str, dict[str, list[int]]] = {}
    for index, (prompt, _, answers) in enumerate(rows):
        kind = {"positive": "p", "negative": "n", "generic": "g"}[prompt.kind]
        if kind == "p" and not answers:
            continue
        by_project.setdefault(prompt.project, {}).setdefault(kind, []).append(index)
    sessions = []
    for kinds in by_project.values():
        count = min(
            len(kinds.get("p", [])) // 4, len(kinds.get("n", [])) // 2, len(kinds.get("g", [])) // 2
        )
        for n in range(count):
            picked = {
                **{f"p{i + 1}": kinds["p"][4 * n + i] for i in range(4)},
                **{f"n{i + 1}": kinds["n"][2 * n + i] for i in range(2)},
                **{f"g{i + 1}": kinds["g"][2 * n + i] for i in range(2)},
            }
            sessions.append([picked[slot] for slot in PATTERN])
    return sessions


def _tokens(
    notes: Sequence[Any],
    settings: HookSettings,
    *,
    tiers: bool,
    shown_before: Shown,
    asks: bool = True,
) -> tuple[int, Any]:
    policy = settings.tiers if tiers else settings.tiers._replace(pointers=0)
    selection = select(notes, policy, shown_before, asks=asks)
    text = render_selection(selection, budget_tokens=settings.prompt_tokens)
    return len(text) // CHARS_PER_TOKEN, selection if text else None


def measure(
    rows: Sequence[tuple[Any, Any, frozenset[str]]], settings: HookSettings
) -> dict[str, Any]:
    sessions = sessions_of(rows)
    if not sessions:
        return {"sessions": 0}
    before: list[int] = []
    after: list[int] = []
    reached_before = reached_after = asked = 0
    for session in sessions:
        record: list[ShownLine] = []
        spent_before = spent_after = 0
        first_ask: set[int] = set()
        for index in session:
            prompt, outcome, answers = rows[index]
            shown_before = shown_of(record)  # what the session's context already holds
            old, old_selection = _tokens(outcome.notes, settings, tiers=False, shown_before=Shown())
            query = prompt_query(prompt.text) or ""
            asks = bool(query) and asks_of_repository(query)  # as the hook decides it
            new, selection = _tokens(
                outcome.notes, settings, tiers=True, shown_before=shown_before, asks=asks
            )
            spent_before += old
            spent_after += new
            if selection is not None:
                full = (n.id for n in selection.shown)
                pointers = (n.id for n in selection.pointers)
                record.append(shown_line(full, pointers, at="", prompt_id=str(index)))
            if prompt.kind == "positive" and index not in first_ask:
                first_ask.add(index)
                asked += 1
                reached_before += bool(
                    old_selection and {n.id for n in old_selection.shown} & answers
                )
                shown = (
                    {n.id for n in (*selection.shown, *selection.pointers)} if selection else set()
                )
                reached_after += bool((shown | shown_before.full) & answers)
        before.append(spent_before)
        after.append(spent_after)
    return {
        "sessions": len(sessions),
        "tokens_per_session_before": round(statistics.fmean(before), 1),
        "tokens_per_session_tiers": round(statistics.fmean(after), 1),
        "tokens_per_prompt_before": round(statistics.fmean(before) / len(PATTERN), 1),
        "tokens_per_prompt_tiers": round(statistics.fmean(after) / len(PATTERN), 1),
        "answers_reached_before": round(reached_before / max(1, asked), 3),
        "answers_reached_tiers": round(reached_after / max(1, asked), 3),
    }
