"""Which session summaries SessionStart shows, and how they fit its budget: pure functions over
plain values (the daemon and the hook's fallback pick with `pick_summaries`, the hook renders
with `render_summaries`). docs/hooks.md#sessionstart-session-summaries.

- startup / resume: the newest summaries of the checked-out branch (the story so far);
- compact / clear: the summary of the session being continued first — the same session id
  after /compact; after /clear the session id is new, so the newest summary of the branch —
  then the other recent ones.

Light, like hook_context.py: the SessionStart hook imports it.
"""

# No `from __future__ import annotations` here: NamedTuple turns string annotations into
# ForwardRefs, compiling each one at import (~0.25 ms a field) on every session start.

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from local_recall.claude_code.hook_context import (
    CLOSE_TAG,
    NOTICE,
    OPEN_TAG,
    char_budget,
    defang_wrapper,
)

CONTINUED_SOURCES = ("compact", "clear")
MIN_CUT_CHARS = 200  # a continued session's summary cut shorter than this is not worth showing


class SummaryNote(NamedTuple):
    """A session summary as the hooks show it."""

    id: str  # the session id
    subject: str
    occurred_at: str  # ISO 8601 UTC
    body: str
    branch: str = ""  # "" when unknown or detached
    commit: str = ""

    def to_json(self) -> dict[str, object]:
        return self._asdict()


def summary_note_from_json(data: object) -> SummaryNote | None:
    if not isinstance(data, Mapping):
        return None
    values = [data.get(key) for key in SummaryNote._fields]
    if not all(isinstance(v, str) or v is None for v in values):
        return None
    sid, subject, occurred, body, branch, commit = (v or "" for v in values)
    if not sid or not subject or not body:
        return None
    return SummaryNote(sid, subject, occurred, body, branch, commit)


def summaries_from_json(items: object) -> list[SummaryNote]:
    if not isinstance(items, list):
        return []
    return [n for n in map(summary_note_from_json, items) if n is not None]


def pick_summaries(
    notes: Sequence[SummaryNote],
    *,
    source: str,
    session_id: str,
    branch: str | None,
    count: int,
) -> list[SummaryNote]:
    """At most `count` summaries in the order they are shown. `branch` None (unknown or
    detached): summaries of every branch."""
    if count <= 0:
        return []
    newest = sorted(notes, key=lambda n: (n.occurred_at, n.id), reverse=True)
    on_branch = [n for n in newest if branch is None or n.branch == branch]
    if source not in CONTINUED_SOURCES:
        return on_branch[:count]
    continued = [n for n in newest if session_id and n.id == session_id]
    if not continued and source == "clear":
        continued = on_branch[:1]
    rest = [n for n in on_branch if n not in continued]
    return (continued + rest)[:count]


def summary_block(note: SummaryNote) -> str:
    where = f"branch {note.branch}" if note.branch else "branch unknown"
    if note.commit:
        where += f" @ {note.commit[:10]}"
    lines = [f"### {note.occurred_at[:16].replace('T', ' ')} session {note.id} ({where})"]
    for line in note.body.splitlines():
        lines.append(line[3:] + ":" if line.startswith("## ") else line)
    return _defang("\n".join(line for line in lines if line.strip()))


def render_summaries(
    picked: Sequence[SummaryNote],
    *,
    source: str,
    branch: str | None,
    budget_tokens: int,
    max_chars: int,
) -> str:
    """The summaries block: whole summaries while they fit, newest first (the continued one
    first on compact/clear, cut to fit if it must be). Empty string when none fits."""
    limit = char_budget(budget_tokens, max_chars)
    if not picked or limit <= 0:
        return ""
    where = f" on branch {branch}" if branch else ""
    if source in CONTINUED_SOURCES:
        heading = f"The session being continued, then earlier sessions{where}, newest first:"
    else:
        heading = f"Recent sessions{where}, newest first (what was asked, done and left to do):"
    lines = [OPEN_TAG, NOTICE, heading]
    used = sum(len(line) + 1 for line in lines) + len(CLOSE_TAG)
    for position, note in enumerate(picked):
        block = summary_block(note)
        room = limit - used - 1
        if len(block) > room:
            if position > 0 or source not in CONTINUED_SOURCES or room < MIN_CUT_CHARS:
                continue
            block = block[: room - 12] + "\n[... cut]"
        lines.append(block)
        used += len(block) + 1
    if len(lines) == 3:
        return ""
    return "\n".join([*lines, CLOSE_TAG])


def _defang(text: str) -> str:
    """A summary cannot close (or reopen) the wrapper and talk outside it."""
    return defang_wrapper(text)
