"""What a hook shows, whoever searched. At a prompt: the memories that bear on it (full text
when sure, the best others as pointers by rank) within the budget, minus what the session
already saw. At session start: the branch's last summaries, then an index of the memories.

One code path for every place that answers: the daemon (a hook's whole answer over its
socket: daemon/hook_requests.py), the MCP server's prompt tool, and a hook's own process when
no daemon answers (hooks/answers.py). Only where the notes come from differs (`find`).

The session's record is not written here: `PromptAnswer.shown` is the line to append once the
text has really been shown (learning/shown_log.py `record_shown`). A command that gave up, or
lost the prompt's claim to the MCP server (claude_code/hooks/handoff.py), shows nothing and
records nothing. Problems are handed to `report(level, message)`: the library does not log,
its caller does.
"""

# No `from __future__ import annotations`: NamedTuple string annotations cost at import.

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from local_recall.context.hook_settings import HookSettings
from local_recall.context.notes import Note
from local_recall.context.prompt import (
    PromptAsk,
    Selection,
    Tiers,
    prompt_query,
    render_selection,
    select,
)
from local_recall.context.session import SESSION_CANDIDATES, SessionAsk, SessionNotes
from local_recall.context.session import session_context as render_session
from local_recall.learning.learned import Learned, read_learned, static
from local_recall.learning.shown import Shown, ShownLine, shown_line, shown_of
from local_recall.learning.shown_log import read_shown
from local_recall.repo.layout import Layout
from local_recall.search.limits import MAX_LIMIT

Report = Callable[[str, str], None]  # (level, message) into the caller's log
# A prompt's notes from wherever the caller searches; None: it could not search (not ready)
FindNotes = Callable[[PromptAsk], list[Note] | None]


class PromptAnswer(NamedTuple):
    """A prompt's answer: the text ("" for nothing) and the line the session's record gets
    once that text is shown (None: nothing to record, or no session)."""

    text: str
    shown: ShownLine | None


NOTHING = PromptAnswer("", None)


def prompt_answer(
    prompt: str,
    settings: HookSettings,
    layout: Layout,
    find: FindNotes,
    report: Report,
    *,
    session_id: str = "",
    prompt_id: str = "",
    tools: bool = True,
) -> PromptAnswer | None:
    """The memories that bear on `prompt`, within the prompt budget: sure ones in full, the
    best others as pointers by rank, none the session (given `session_id`) already saw.
    `tools` False: the agent has no MCP tools yet (Claude Code's first request), the pointer
    block says how else to open one. None: `find` could not search (another place may)."""
    query = prompt_query(prompt)
    if query is None or settings.prompt_tokens <= 0:
        return NOTHING
    from local_recall.search.query_intent import has_nothing_to_look_up

    if has_nothing_to_look_up(query):  # "thanks", "continue": no search
        return NOTHING
    learned = learned_of(layout, settings, report)
    tiers = learned_tiers(settings.tiers, learned)
    # what either tier may show: choose sorts them
    limit = min(settings.search_limit, MAX_LIMIT)
    notes = find(PromptAsk(query, limit, tiers.search_floor, min(tiers.at_least, limit)))
    if notes is None:
        return None
    shown_before = shown_of(read_shown(layout.state_dir, session_id))
    selection = choose(query, notes, settings, tiers, learned, shown_before)
    text = render_selection(selection, budget_tokens=settings.prompt_tokens, tools=tools)
    if not text:
        return NOTHING
    if not session_id:
        return PromptAnswer(text, None)
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    full = (note.id for note in selection.shown)
    pointers = (note.id for note in selection.pointers)
    return PromptAnswer(text, shown_line(full, pointers, at=at, prompt_id=prompt_id))


def choose(
    query: str,
    notes: list[Note],
    settings: HookSettings,
    tiers: Tiers,
    learned: Learned,
    shown_before: Shown = Shown(),  # noqa: B008 - an immutable NamedTuple
) -> Selection:
    """What a prompt's hits become: the hook's and `local-recall why`'s one selection, the
    reviewed-only filter, the track record, disputes and whether the prompt asks something
    of this repository included."""
    from local_recall.search.query_intent import asks_of_repository

    if not settings.inject_unreviewed:  # [review] inject_unreviewed
        notes = [note for note in notes if not note.unreviewed]
    if learned.factors:  # [learning] track_record: the order among these hits
        notes = [note._replace(track=learned.factors.get(note.id, 1.0)) for note in notes]
    if not settings.learn_disputed:  # [learning] disputed off: a dispute holds nothing back
        notes = [note._replace(disputed="") if note.disputed else note for note in notes]
    return select(notes, tiers, shown_before, asks=asks_of_repository(query))


def tools_ready(agent: str, *, server: bool) -> bool:
    """Whether the agent can open a pointer with an MCP tool now. Claude Code's command hook
    answers only until the session's MCP server answers prompts itself (the guard, docs/
    hooks.md#two-handlers-one-answer), and Claude Code offers MCP tools from the request after
    the servers connect: until then a pointer is opened with `local-recall show`."""
    return server or agent != "claude_code"


def learned_tiers(tiers: Tiers, learned: Learned) -> Tiers:
    """The [hooks] tiers with the cut-offs calibrated from this repository's sessions."""
    return tiers._replace(min_score=learned.min_score, pointer_min_score=learned.pointer_min_score)


def learned_of(layout: Layout, settings: HookSettings, report: Report) -> Learned:
    """What the sessions' outcomes teach ([learning]); the static settings should reading them
    fail (reported: a prompt is never lost to it)."""
    learning = settings.learning
    try:
        return read_learned(layout, learning, datetime.now(UTC))
    except Exception as exc:  # fail open: today's cut-offs, no track record
        report("WARNING", f"learned settings not read: {exc!r}")
        return static(learning)


def session_ask(settings: HookSettings, source: str, session_id: str, root: Path) -> SessionAsk:
    """What a starting session asks for: the index's candidates, the branch's summaries."""
    from local_recall.repo.git_head import read_git_head

    branch = read_git_head(root).branch
    return SessionAsk(source, SESSION_CANDIDATES, settings.summaries_count, session_id, branch)


def session_start_answer(settings: HookSettings, ask: SessionAsk, found: SessionNotes) -> str:
    """The last session summaries of the branch, then an index of the memories; "" for none.
    `ask.source`: startup, resume, clear or compact (context/session.py)."""
    if not settings.inject_unreviewed:
        found = found._replace(notes=[note for note in found.notes if not note.unreviewed])
    return render_session(
        found,
        source=ask.source,
        branch=ask.branch,
        index_tokens=settings.session_start_tokens,
        summary_tokens=settings.summaries_tokens if settings.summaries_count > 0 else 0,
    )
