"""What the extraction pipeline has done, per transcript: `local-recall/state/pipeline.json`.

The state is machine-local and gitignored. It is only a cache of progress: memory creation is
idempotent by content hash, so losing the file (or finding it corrupt) makes the next pass
re-read transcripts from the start and spend API calls again, but it can never duplicate a
memory file. Writes are atomic (temp file + rename), so a killed pass leaves the previous state.

The decisions over this state (`plan_pass`, `retry_delay`, ...) live in `pipeline_plan.py`;
this module only holds the values and reads/writes them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from local_recall.errors import InvalidInput, StorageError
from local_recall.memory.model import format_timestamp, parse_timestamp
from local_recall.repo.files import write_bytes_atomic

log = logging.getLogger(__name__)

STATE_VERSION = 1
STATE_FILENAME = "pipeline.json"
# The fingerprint of a processed prefix reads at most this much from its head and its tail:
# O(1) per check instead of re-hashing a many-megabyte transcript on every append.
FINGERPRINT_SAMPLE_BYTES = 64 * 1024


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
        )


@dataclass(frozen=True, slots=True)
class PipelineState:
    transcripts: Mapping[str, TranscriptState] = field(default_factory=lambda: MappingProxyType({}))
    # Set when the API said "rate limited": no extraction before this time (all transcripts).
    paused_until: datetime | None = None

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
            "transcripts": {p: t.to_json() for p, t in sorted(self.transcripts.items())},
        }


@dataclass(frozen=True, slots=True)
class LoadedState:
    state: PipelineState
    problem: str | None  # why the file was not usable (it was set aside), None when it was


def state_path(state_dir: Path) -> Path:
    return state_dir / STATE_FILENAME


def load_state(state_dir: Path) -> LoadedState:
    """Read the state; a missing file is an empty state. A corrupt file is renamed to
    `pipeline.json.corrupt` (for a person to look at) and the pass starts over from an empty
    state, which is safe because memory creation is idempotent. Bad entries are dropped alone."""
    path = state_path(state_dir)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return LoadedState(PipelineState(), None)
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw)
        if not isinstance(data, dict) or not isinstance(data.get("transcripts"), dict):
            raise ValueError("not a pipeline state object")
        if data.get("version") != STATE_VERSION:
            raise ValueError(f"unknown version {data.get('version')!r}")
    except (ValueError, UnicodeDecodeError) as exc:
        problem = f"{path} was unreadable ({str(exc)[:120]}); starting over"
        log.warning("%s", problem)
        _set_aside(path)
        return LoadedState(PipelineState(), problem)
    entries: dict[str, TranscriptState] = {}
    dropped = 0
    for key, value in data["transcripts"].items():
        try:
            if not isinstance(value, dict):
                raise TypeError("entry is not an object")
            entries[str(key)] = TranscriptState.from_json(str(key), value)
        except (ValueError, TypeError, KeyError) as exc:
            dropped += 1
            log.warning("pipeline state: dropped the entry for %s: %s", key, exc)
    try:
        paused = _parse_when(data.get("paused_until"))
    except (ValueError, TypeError):
        paused = None
    note = f"{dropped} malformed entries dropped from {path}" if dropped else None
    return LoadedState(PipelineState(MappingProxyType(entries), paused), note)


def save_state(state_dir: Path, state: PipelineState) -> None:
    payload = json.dumps(state.to_json(), indent=1, ensure_ascii=False).encode("utf-8")
    write_bytes_atomic(state_path(state_dir), payload)


def prefix_fingerprint(path: Path, offset: int) -> str | None:
    """A fingerprint of the first `offset` bytes of `path`: its length, its head and its tail
    (each up to FINGERPRINT_SAMPLE_BYTES). Claude Code only appends to a transcript, so a
    changed head or a changed end of the processed part means the file was replaced or
    rewritten. None when the file is shorter than `offset` or cannot be read."""
    digest = hashlib.sha256(str(offset).encode())
    try:
        with path.open("rb") as stream:
            if os.fstat(stream.fileno()).st_size < offset:
                return None
            digest.update(stream.read(min(offset, FINGERPRINT_SAMPLE_BYTES)))
            if offset > FINGERPRINT_SAMPLE_BYTES:
                tail_start = max(FINGERPRINT_SAMPLE_BYTES, offset - FINGERPRINT_SAMPLE_BYTES)
                stream.seek(tail_start)
                digest.update(stream.read(offset - tail_start))
    except OSError:
        return None
    return digest.hexdigest()


def _set_aside(path: Path) -> None:
    try:
        os.replace(path, path.with_name(path.name + ".corrupt"))
    except OSError as exc:
        log.warning("cannot set aside %s: %s", path, exc)


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
