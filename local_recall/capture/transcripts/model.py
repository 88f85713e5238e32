"""The values a transcript turns into, and the pure functions over them: `Turn` (with its
`ToolCall`s and `ToolResult`s), `ParsedTranscript`, `TranscriptFile` (a file found on disk) and
`Chunk` (condensed text for an extractor). Imports nothing that does I/O: the planners
(`capture.pipeline_plan`) decide over these values alone.

Field contract: a `Turn`'s `text`, tool-call key arguments and tool-result snippets are
already cleaned when `parse_transcript` builds them (`<private>` spans removed, secrets
redacted): once, before anything folds or cuts them. `thinking` is kept raw; it is redacted
when it is written as a thinking memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

KEY_ARGUMENT_CHARS = 200
RESULT_SNIPPET_CHARS = 200

Role = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class TranscriptFile:
    path: Path
    # The file's stem: the session UUID, or `agent-<id>` for a subagent transcript.
    session_id: str
    is_subagent: bool
    parent_session_id: str | None  # the session that spawned a subagent
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    key_argument: str  # one line, at most KEY_ARGUMENT_CHARS, cleaned; "" if the tool has none
    tool_use_id: str = ""


@dataclass(frozen=True, slots=True)
class ToolResult:
    ok: bool
    snippet: str  # one line, at most RESULT_SNIPPET_CHARS, cleaned
    tool_use_id: str = ""
    tool_name: str = ""  # "" when the call was not in the same parse


@dataclass(frozen=True, slots=True)
class Turn:
    """One user message, or one assistant API message (its lines merged). A user entry that
    only carries tool results is a `user` turn with empty text."""

    uuid: str
    role: Role
    timestamp: datetime  # UTC
    text: str  # cleaned by the parser: <private> spans removed, secrets redacted
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    thinking: str = ""  # never rendered by `condense`; kept raw for thinking memories
    session_id: str = ""  # the entry's sessionId (a subagent's entries carry its parent's)
    is_sidechain: bool = False
    message_id: str | None = None
    start_offset: int = 0  # byte offset of the turn's first line
    end_offset: int = 0  # byte offset just past the turn's last line


@dataclass(frozen=True, slots=True)
class ParseStats:
    lines: int = 0  # complete lines consumed (blank ones included)
    malformed_lines: int = 0  # not JSON, or not a JSON object
    oversized_lines: int = 0  # longer than max_line_bytes: skipped unread
    merged_lines: int = 0  # assistant lines folded into an earlier line's turn
    skipped_entries: int = 0  # known non-conversation entries (attachments, summaries, ...)
    unknown_entries: int = 0  # entry types this version does not know
    injected_spans_removed: int = 0  # hook/harness text cut out of user content


@dataclass(frozen=True, slots=True)
class ParsedTranscript:
    turns: tuple[Turn, ...]
    # Where the next pass starts. A last line without its newline is still being written: it is
    # not consumed. If the file is now shorter than `start_offset` it was replaced: re-read it
    # from 0 (nothing is returned and end_offset == start_offset).
    end_offset: int
    stats: ParseStats


@dataclass(frozen=True, slots=True)
class Chunk:
    text: str
    session_id: str
    first_timestamp: datetime
    last_timestamp: datetime
    turn_uuids: tuple[str, ...]  # the new turns rendered in this chunk, in order


def split_turns_at(turns: Sequence[Turn], offset: int) -> tuple[tuple[Turn, ...], tuple[Turn, ...]]:
    """(context, new): turns wholly before `offset` were handled by an earlier pass. A turn
    that straddles it (an assistant message still being written then) counts as new."""
    context = tuple(turn for turn in turns if turn.end_offset <= offset)
    return context, tuple(turn for turn in turns if turn.end_offset > offset)


def resume_offset(turns: Sequence[Turn], end_offset: int, *, keep: int = 2) -> int:
    """Where the next pass should start reading so that the last `keep` turns come back as
    context for `split_turns_at(..., end_offset)`; `end_offset` itself when keep is 0 or there
    are no turns."""
    if keep <= 0 or not turns:
        return end_offset
    return min(turn.start_offset for turn in turns[-keep:])
