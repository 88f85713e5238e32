"""A base file written whole and an append-only log of what changed since: the mechanics.

Three caches in `state/` are kept this way (the catalog: memory/catalog_file.py; the term
statistics: search/term_log.py; the relevance cache's vectors: search/vector_log.py). A save
appends a line of what it changed instead of rewriting the whole (megabytes at 100,000
memories); a later write folds the log into a new base. Each store keeps only its format —
what a line holds, how its base names the log (a header line, a token in a file name), how
lines fold. What they share is here, once:

- reads are bounded and never follow a symlink (repo/files.py): the state folder is
  gitignored, but a hostile repository can plant anything there; a refused or oversize file
  reads as OSError, which every store takes as "no cache" (rebuilt from the memory files);
- only complete lines count: a torn tail (a crash mid-append, no newline) is left out by
  readers, and cut by the next writer that appends at the complete lines' end;
- a log names the base it extends in its first line (`after_header`): a log of another base
  is never applied to this one;
- a base is replaced atomically (repo/files.py `replace_derived`), and `outgrown` is when a
  log is long enough to be folded into a new one.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from local_recall.repo.files import (
    StatKey,
    key_of,
    read_stat_nofollow,
    replace_derived,
    stat_key,
    through_symlink,
)

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO planted in its place must not hang a save


@dataclass(frozen=True, slots=True)
class LogLines:
    """A log as read: its complete lines (without their newlines), their bytes (where the next
    append goes: a torn tail after them is cut), and the log's stat key as read."""

    lines: tuple[bytes, ...]
    length: int
    key: StatKey


def complete_lines(raw: bytes) -> tuple[tuple[bytes, ...], int]:
    """The complete lines of `raw` and their length; a torn tail (no newline) is left out."""
    end = raw.rfind(b"\n") + 1
    return tuple(raw[:end].splitlines()), end


def after_header(lines: tuple[bytes, ...], header: bytes) -> tuple[bytes, ...] | None:
    """The lines after the first when it is `header` (the log extends this base); else None."""
    if not lines or lines[0] != header.rstrip(b"\n"):
        return None
    return lines[1:]


def read_file(path: Path, limit: int) -> tuple[bytes, StatKey]:
    """A regular file's bytes (at most `limit`) and its stat key, from one open handle; no
    symlink (the file's or a folder's on the way), no FIFO. Raises OSError."""
    data, info = read_stat_nofollow(path, limit)
    return data, key_of(info)


def read_log(path: Path, limit: int) -> LogLines:
    """The log's complete lines (`read_file`'s refusals: OSError, FileNotFoundError if none)."""
    data, key = read_file(path, limit)
    lines, length = complete_lines(data)
    return LogLines(lines, length, key)


def read_json(path: Path, limit: int) -> object:
    """The JSON value of a base file read as `read_file` reads; None for anything wrong."""
    try:
        return json.loads(read_file(path, limit)[0])
    except (OSError, ValueError, RecursionError):
        return None


def open_regular(path: Path, limit: int | None = None) -> BinaryIO | None:
    """A binary handle on a regular file (no symlink, no FIFO) of at most `limit` bytes, for a
    base read in place (a matrix memory-mapped); None otherwise."""
    if through_symlink(path.parent):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode) and (limit is None or info.st_size <= limit):
            return os.fdopen(fd, "rb")
    except OSError:
        pass
    os.close(fd)
    return None


def complete_length(path: Path, limit: int) -> int:
    """The bytes of the log's complete lines, for an append after them; 0 when there is no
    usable log (missing, refused, empty, over `limit`). Only a torn tail is read whole."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except OSError:
        return 0
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size == 0 or info.st_size > limit:
            return 0
        if os.pread(fd, 1, info.st_size - 1) == b"\n":
            return info.st_size
        return os.pread(fd, info.st_size, 0).rfind(b"\n") + 1
    finally:
        os.close(fd)


def append(path: Path, data: bytes, *, at: int | None = None, create: bool = False) -> StatKey:
    """Write `data` at the log's end and flush it to disk; the log's stat key after.

    `at=None`: one O_APPEND write, for a writer without a lock (two processes appending at once
    do not interleave inside a write). `at=n` (under the store's lock): the log is cut to its
    first n bytes — a torn tail, or all of it to start the log again — and `data` goes there.
    `create`: a missing log is created (0644). Raises OSError (a symlink, not a regular file)."""
    flags = os.O_WRONLY | _NOFOLLOW | _NONBLOCK | (os.O_APPEND if at is None else 0)
    fd = os.open(path, flags | (os.O_CREAT if create else 0), 0o644)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if at is not None:
            if info.st_size != at:
                os.ftruncate(fd, at)
            os.lseek(fd, at, os.SEEK_SET)
        view = memoryview(data)
        while view:  # one call in practice: O_APPEND writers rely on it
            view = view[os.write(fd, view) :]
        os.fsync(fd)
        return key_of(os.fstat(fd))
    finally:
        os.close(fd)


def write_base(path: Path, write: Callable[[BinaryIO], object]) -> StatKey | None:
    """Replace the base whole (atomically: a reader sees the old one or the new one); its stat
    key after (None if it went at once). Raises OSError."""
    replace_derived(path, write)
    return stat_key(path)


def outgrown(log_size: int, base_size: int, *, share: float, floor: int = 0) -> bool:
    """Is the log `share` of its base (counted at least `floor`, so that a small base is not
    rewritten for every few lines) or more: is a new base due?"""
    return log_size >= share * max(base_size, floor)
