"""The pipeline's progress (state/pipeline.json) as values, pure: what was done per transcript
(`TranscriptState`) and for the whole repo (`PipelineState`), and their JSON form. The planner
(`pipeline_plan`) decides over these; `progress_file` reads and writes the file; `ledger` holds
them during a pass, beside the day's spend (`budget`, a file of its own)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from local_recall.errors import InvalidInput
from local_recall.memory.timestamps import format_timestamp, parse_timestamp

STATE_VERSION = 1


@dataclass(frozen=True, slots=True)
class TranscriptState:
    """Progress on one transcript file (keyed by its absolute path)."""

    path: str
    session_id: str
    offset: int = 0  # bytes fully processed: memories of everything before are written
    read_from: int = 0  # where the next parse starts (<= offset: re-reads a few context turns)
    prefix_hash: str = ""  # prefix_fingerprint(path, offset) when offset was stored
    size: int = 0  # size and mtime when last looked at: equal again means "nothing to do"
    mtime_ns: int = 0
    memory_ids: tuple[str, ...] = ()  # episodic memories this transcript produced (or matched)
    thinking_ids: tuple[str, ...] = ()
    pending_turns: int = 0  # new turns left waiting for `extraction.min_turns` (or idleness)
    attempts: int = 0  # consecutive failed attempts; 0 after a success
    failures: int = 0  # failed attempts in total
    next_retry_at: datetime | None = None
    last_error: str | None = None
    processed_at: datetime | None = None
    failing_since: datetime | None = None  # the first failure of the current streak

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "offset": self.offset,
            "read_from": self.read_from,
            "prefix_hash": self.prefix_hash,
            "size": self.size,
            "mtime_ns": self.mtime_ns,
            "memory_ids": list(self.memory_ids),
            "thinking_ids": list(self.thinking_ids),
            "pending_turns": self.pending_turns,
            "attempts": self.attempts,
            "failures": self.failures,
            "next_retry_at": _when(self.next_retry_at),
            "last_error": self.last_error,
            "processed_at": _when(self.processed_at),
            "failing_since": _when(self.failing_since),
        }

    @classmethod
    def from_json(cls, path: str, data: Mapping[str, Any]) -> TranscriptState:
        """Raises ValueError/TypeError/KeyError on a malformed entry (the loader drops it)."""
        offset = _count(data.get("offset", 0))
        return cls(
            path=path,
            session_id=str(data.get("session_id") or Path(path).stem),
            offset=offset,
            read_from=min(_count(data.get("read_from", offset)), offset),
            prefix_hash=str(data.get("prefix_hash") or ""),
            size=_count(data.get("size", 0)),
            mtime_ns=_count(data.get("mtime_ns", 0)),
            memory_ids=_strings(data.get("memory_ids")),
            thinking_ids=_strings(data.get("thinking_ids")),
            pending_turns=_count(data.get("pending_turns", 0)),
            attempts=_count(data.get("attempts", 0)),
            failures=_count(data.get("failures", 0)),
            next_retry_at=_parse_when(data.get("next_retry_at")),
            last_error=None if data.get("last_error") is None else str(data["last_error"]),
            processed_at=_parse_when(data.get("processed_at")),
            failing_since=_parse_when(data.get("failing_since")),
        )


@dataclass(frozen=True, slots=True)
class PipelineState:
    transcripts: Mapping[str, TranscriptState] = field(default_factory=lambda: MappingProxyType({}))
    # Set when the API said "rate limited": no extraction before this time (all transcripts).
    paused_until: datetime | None = None
    # The extractor could not run at all (no `claude`, bad credentials): since when, and why.
    unavailable_since: datetime | None = None
    unavailable_reason: str | None = None

    def get(self, path: str) -> TranscriptState | None:
        return self.transcripts.get(path)

    def with_transcript(self, entry: TranscriptState) -> PipelineState:
        merged = dict(self.transcripts)
        merged[entry.path] = entry
        return replace(self, transcripts=MappingProxyType(merged))

    def to_json(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "paused_until": _when(self.paused_until),
            "unavailable_since": _when(self.unavailable_since),
            "unavailable_reason": self.unavailable_reason,
            "transcripts": {p: t.to_json() for p, t in sorted(self.transcripts.items())},
        }


def advanced(
    entry: TranscriptState,
    offset: int,
    read_from: int,
    prefix_hash: str,
    now: datetime,
    memory_ids: Sequence[str] = (),
    thinking_ids: Sequence[str] = (),
) -> TranscriptState:
    """`entry` once everything before `offset` is done (its memories written)."""
    return replace(
        entry,
        offset=offset,
        read_from=min(read_from, offset),
        prefix_hash=prefix_hash,
        memory_ids=_merged(entry.memory_ids, memory_ids),
        thinking_ids=_merged(entry.thinking_ids, thinking_ids),
        pending_turns=0,
        attempts=0,
        next_retry_at=None,
        last_error=None,
        processed_at=now,
        failing_since=None,
    )


def failed(
    entry: TranscriptState, reason: str, *, retry_at: datetime, now: datetime | None = None
) -> TranscriptState:
    """`entry` after one more failed attempt at `now`, to be tried again at `retry_at`."""
    return replace(
        entry,
        attempts=entry.attempts + 1,
        failures=entry.failures + 1,
        next_retry_at=retry_at,
        last_error=reason[:500],
        failing_since=entry.failing_since or now,
    )


def _merged(old: Sequence[str], new: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*old, *new]))


def state_from_json(data: Mapping[str, Any]) -> tuple[PipelineState, tuple[str, ...]]:
    """The state in a decoded `pipeline.json` object (its version already checked), and why
    each malformed entry was dropped (bad entries are dropped alone)."""
    entries: dict[str, TranscriptState] = {}
    dropped: list[str] = []
    for key, value in data["transcripts"].items():
        try:
            if not isinstance(value, dict):
                raise TypeError("entry is not an object")
            entries[str(key)] = TranscriptState.from_json(str(key), value)
        except (ValueError, TypeError, KeyError) as exc:
            dropped.append(f"dropped the entry for {key}: {exc}")
    try:
        paused = _parse_when(data.get("paused_until"))
        down = _parse_when(data.get("unavailable_since"))
    except (ValueError, TypeError):
        paused = down = None
    why = data.get("unavailable_reason")
    why = str(why)[:500] if down is not None and why is not None else None
    return PipelineState(MappingProxyType(entries), paused, down, why), tuple(dropped)


def _when(moment: datetime | None) -> str | None:
    return None if moment is None else format_timestamp(moment)


def _parse_when(value: object) -> datetime | None:
    if value is None or value == "":
        return None
    try:
        return parse_timestamp(value)
    except InvalidInput as exc:  # a hand-edited value
        raise ValueError(str(exc)) from None


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"expected a non-negative integer, got {value!r}")
    return value


def _strings(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise TypeError("expected a list of ids")
    return tuple(str(v) for v in value)
