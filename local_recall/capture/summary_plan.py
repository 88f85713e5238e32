"""Session summaries, the pure part: when a session's summary is due, what goes into it (the
files it changed, the markdown body, the subject) and the per-transcript progress values.
Carried out by capture/summaries.py; docs/pipeline.md#session-summaries.

One summary per session: its file is `session-summaries/<session id>.md` (Claude Code session
ids are UUIDs), rewritten in place when the session goes on, never a new file per pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from local_recall.capture.extraction.summary_prompt import SummaryFields
from local_recall.capture.transcripts.model import Turn
from local_recall.memory.model import MAX_FILES, repo_relative
from local_recall.memory.timestamps import iso_time

# Tools whose key argument is a file they change.
CHANGING_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
SUBJECT_CHARS = 150
_RETRY_CAP = timedelta(hours=6)


@dataclass(frozen=True, slots=True)
class SummaryEntry:
    """How far one transcript is summarised (state/summaries.json, keyed by its path)."""

    session_id: str
    offset: int = 0  # bytes already summarised
    attempts: int = 0  # consecutive failures
    next_retry_at: datetime | None = None
    updated_at: datetime | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "offset": self.offset,
            "attempts": self.attempts,
            "next_retry_at": _when(self.next_retry_at),
            "updated_at": _when(self.updated_at),
        }


def entries_from_json(data: object) -> dict[str, SummaryEntry]:
    """The state file's entries; a malformed entry is dropped alone (it costs one call)."""
    entries = data.get("transcripts") if isinstance(data, Mapping) else None
    if not isinstance(entries, Mapping):
        return {}
    kept: dict[str, SummaryEntry] = {}
    for path, raw in entries.items():
        if not isinstance(path, str) or not isinstance(raw, Mapping):
            continue
        session, offset, attempts = raw.get("session_id"), raw.get("offset"), raw.get("attempts")
        if not isinstance(session, str) or not isinstance(offset, int) or offset < 0:
            continue
        kept[path] = SummaryEntry(
            session,
            offset,
            attempts if isinstance(attempts, int) and attempts > 0 else 0,
            _parse_when(raw.get("next_retry_at")),
            _parse_when(raw.get("updated_at")),
        )
    return kept


def entries_to_json(entries: Mapping[str, SummaryEntry]) -> dict[str, Any]:
    return {"version": 1, "transcripts": {p: e.to_json() for p, e in sorted(entries.items())}}


def summary_due(
    entry: SummaryEntry | None, size: int, *, ended: bool, quiet: bool, now: datetime
) -> bool:
    """A summary is (re)written when the transcript grew since the last one AND the session is
    at a resting point: it ended (SessionEnd), is about to be compacted (PreCompact) or has
    been quiet for `idle_minutes`. Not on every pass: each rewrite is a model call."""
    if entry is not None and entry.next_retry_at is not None and now < entry.next_retry_at:
        return False
    done = entry.offset if entry is not None else 0
    return size > done and (ended or quiet)


def summary_failed(entry: SummaryEntry, now: datetime) -> SummaryEntry:
    attempts = entry.attempts + 1
    delay = min(timedelta(minutes=5) * 2 ** (attempts - 1), _RETRY_CAP)
    return replace(entry, attempts=attempts, next_retry_at=now + delay)


def summary_done(entry: SummaryEntry, offset: int, now: datetime) -> SummaryEntry:
    return replace(entry, offset=offset, attempts=0, next_retry_at=None, updated_at=now)


def files_changed(turns: Sequence[Turn], root: str) -> tuple[str, ...]:
    """Repo-relative paths the session's Edit / MultiEdit / Write / NotebookEdit calls named,
    in the order first touched. Paths outside the repository, or cut short, are left out."""
    found: dict[str, None] = {}
    for turn in turns:
        for call in turn.tool_calls:
            if call.name in CHANGING_TOOLS and call.key_argument:
                rel = repo_relative(call.key_argument, root)
                if rel is not None:
                    found[rel] = None
    return tuple(found)


def merged_files(earlier: Sequence[str], new: Sequence[str]) -> tuple[str, ...]:
    """The files of the whole session (first touched first), at most MAX_FILES."""
    return tuple(dict.fromkeys([*earlier, *new]))[:MAX_FILES]


def summary_subject(fields: SummaryFields) -> str:
    request = fields.request or (fields.done[0] if fields.done else "work in progress")
    text = " ".join(f"Session: {request}".split())
    return text if len(text) <= SUBJECT_CHARS else text[: SUBJECT_CHARS - 1] + "…"


# What a model writes for "nothing": a one-turn session's summary is "Session: n/a" with
# every section "(none)" — committed and injected, it would only cost context.
_PLACEHOLDERS = frozenset(
    {"", "n/a", "na", "none", "nothing", "no", "unknown", "not stated", "no request", "-", "tbd"}
)


def is_placeholder(text: str) -> bool:
    return text.strip().strip("()[].!*_`\"' ").casefold() in _PLACEHOLDERS


def is_empty_summary(fields: SummaryFields, files: Sequence[str]) -> bool:
    """Nothing done, learned or left to do and no file changed: not worth a file. A stated
    request alone is not enough (a one-question session)."""
    items = (*fields.done, *fields.learned, *fields.next_steps)
    return not files and all(is_placeholder(item) for item in items)


def render_summary_body(fields: SummaryFields, files: Sequence[str]) -> str:
    """The markdown body of a summary file (its sections are what the next session reads)."""
    parts = [f"## Request\n\n{fields.request or '(not stated)'}"]
    for title, items in (
        ("Done", fields.done),
        ("Learned", fields.learned),
        ("Next steps", fields.next_steps),
    ):
        listed = "\n".join(f"- {item}" for item in items) if items else "- (none)"
        parts.append(f"## {title}\n\n{listed}")
    if files:
        parts.append("## Files changed\n\n" + "\n".join(f"- `{path}`" for path in files))
    return "\n\n".join(parts)


def _when(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def _parse_when(value: object) -> datetime | None:
    return iso_time(value)
