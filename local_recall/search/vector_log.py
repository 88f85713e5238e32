"""The relevance cache's append-only part: what changed since its base was written.

A save used to rewrite the whole cache (every vector of the store, 15–30 MB at 5,000 memories,
with fsync). Now a sync that changed a few memories appends their vectors to a log beside the
base (`vector_cache.py`), and a compaction folds the log into a new base later, off the save
path (`search/index/sync.py` decides when).

Two files per log, named by the manifest (`vectors.json`, "log": <16 hex>):

    vectors-<hex>.rows   float32 rows, little-endian, no header: appended
    vectors-<hex>.log    one JSON line per append: {"rows": n, "keys": [...], "covers": [...]}

A line's `keys` name its `rows` (one per row: a memory's whole text, then its passages);
`covers` are the memories it speaks for: their rows in the base and in earlier lines are
stale, whether or not the line holds new ones (a deleted memory is covered, with no row). The
rows go first, the line after them: a line only counts once complete (ends in a newline), and
only as many rows as complete lines name; a torn tail (a crash mid-append) is ignored by
readers and cut by the next writer, under the cache lock (repo/base_log.py, as every log).
Hostile files are read as the base is: no symlinks, sizes capped, keys validated; anything
wrong reads as "no log" (the caller then ignores the whole cache)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from local_recall.repo import base_log
from local_recall.repo.files import stat_key

VECTORS_JSON: Final = "vectors.json"  # the cache's manifest (vector_cache.py)
LOG_TOKEN: Final = re.compile(r"^[0-9a-f]{16}$")
_KEY: Final = re.compile(r"^(?:episodic|thinking)/[0-9a-f-]{36}$")
MAX_LOG_BYTES: Final = 64 * 1024 * 1024

Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class LogEntry:
    keys: tuple[str, ...]  # one per row
    covers: frozenset[str]


@dataclass(frozen=True, slots=True)
class VectorLog:
    entries: tuple[LogEntry, ...]
    matrix: Matrix  # every entry's rows, in order
    log_bytes: int  # the complete lines' length: what a writer keeps

    @property
    def rows(self) -> int:
        return int(self.matrix.shape[0])


def log_paths(state_dir: Path, token: str) -> tuple[Path, Path]:
    return state_dir / f"vectors-{token}.rows", state_dir / f"vectors-{token}.log"


def parse_log(text: bytes) -> tuple[list[tuple[int, LogEntry]], int] | None:
    """(rows, entry) of each complete line and the complete lines' byte length; None when a
    complete line is malformed."""
    lines, end = base_log.complete_lines(text)
    entries: list[tuple[int, LogEntry]] = []
    for line in lines:
        try:
            entry = _entry(json.loads(line))
        except ValueError:
            return None
        if entry is None:
            return None
        entries.append((len(entry.keys), entry))
    return entries, end


def _entry(data: object) -> LogEntry | None:
    if not isinstance(data, dict):
        return None
    rows, keys, covers = data.get("rows"), data.get("keys"), data.get("covers")
    if not isinstance(rows, int) or not isinstance(keys, list) or not isinstance(covers, list):
        return None
    if rows != len(keys) or not all(isinstance(k, str) and _KEY.match(k) for k in keys):
        return None
    if not all(isinstance(k, str) and _KEY.match(k) for k in covers):
        return None
    if not set(keys) <= set(covers):
        return None
    return LogEntry(tuple(keys), frozenset(covers))


def read_vector_log(state_dir: Path, token: str, dim: int, max_rows: int) -> VectorLog | None:
    """The log's complete entries and their rows; None if missing or malformed."""
    rows_path, log_path = log_paths(state_dir, token)
    try:
        text = base_log.read_file(log_path, MAX_LOG_BYTES)[0]
    except OSError:  # missing, a symlink, not a regular file, too large
        return None
    parsed = parse_log(text)
    if parsed is None:
        return None
    entries, log_bytes = parsed
    total = sum(rows for rows, _ in entries)
    if total > max_rows:
        return None
    matrix = _read_rows(rows_path, total, dim)
    if matrix is None:
        return None
    return VectorLog(tuple(entry for _, entry in entries), matrix, log_bytes)


def _read_rows(path: Path, rows: int, dim: int) -> Matrix | None:
    handle = base_log.open_regular(path)
    if handle is None:
        return None
    with handle:
        if os.fstat(handle.fileno()).st_size < rows * dim * 4:
            return None  # fewer rows than the complete lines name: not this log's file
        if rows == 0:
            return np.zeros((0, dim), dtype=np.float32)
        try:  # rows past the complete lines (a torn append) are left out
            return np.memmap(handle, dtype="<f4", mode="r", shape=(rows, dim))
        except (ValueError, OSError):
            return None


def start_log(state_dir: Path, token: str) -> None:
    """Empty files for a new base's log (written before the manifest names them)."""
    for path in log_paths(state_dir, token):
        with open(path, "xb") as handle:
            os.fsync(handle.fileno())


def append_to_log(
    state_dir: Path,
    token: str,
    current: VectorLog,
    keys: Sequence[str],
    matrix: Matrix,
    covers: Sequence[str],
) -> None:
    """Append one entry after `current` (the log as read under the cache lock): a torn tail
    is cut first, then the rows, then the line, each flushed to disk."""
    rows_path, log_path = log_paths(state_dir, token)
    data = np.ascontiguousarray(matrix, dtype="<f4")
    line = json.dumps({"rows": len(keys), "keys": list(keys), "covers": sorted(set(covers))})
    base_log.append(rows_path, data.tobytes(), at=current.rows * current.matrix.shape[1] * 4)
    base_log.append(log_path, line.encode() + b"\n", at=current.log_bytes)


def live_rows(
    base_keys: Sequence[str], log: VectorLog
) -> tuple[npt.NDArray[np.bool_], tuple[str, ...], npt.NDArray[np.bool_]]:
    """(which base rows are live, the log's row keys, which log rows are live): a row is live
    unless a later line covers its memory."""
    covered: set[str] = set()
    masks: list[npt.NDArray[np.bool_]] = []
    for entry in reversed(log.entries):  # newest first: a memory's newest line decides
        masks.append(np.array([key not in covered for key in entry.keys], dtype=bool))
        covered |= entry.covers
    log_live = np.concatenate(masks[::-1]) if masks else np.zeros(0, dtype=bool)
    log_keys = tuple(key for entry in log.entries for key in entry.keys)
    base_live = np.fromiter((key not in covered for key in base_keys), bool, len(base_keys))
    return base_live, log_keys, log_live


def cache_stamp(state_dir: Path) -> object:
    """Changes whenever the cache does (its json, or a log's length): readers re-read then.
    None: no cache."""
    meta = stat_key(state_dir / VECTORS_JSON)
    if meta is None:
        return None
    logs = sorted((path.name, stat_key(path)) for path in state_dir.glob("vectors-*.log"))
    return (meta, tuple(logs))
