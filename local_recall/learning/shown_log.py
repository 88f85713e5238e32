"""The session record's file I/O (its format: learning/shown.py): one JSON-lines file per
session in state/sessions/, appended once per prompt that got anything (the prompt hook) and
read from its tail (the prompt hook, the daemon's pass).

Cheap on every prompt: one bounded read and one small append, no fsync (the record is derived
and only saves tokens; losing it repeats a memory once, nothing more). Never through a symlink
(a committed `state/` may be hostile); the file name is a hash of the session id, so an odd id
names no other path. Files of sessions idle for SESSION_TTL_DAYS are pruned when a new session
starts its record.
"""

import contextlib
import os
import re
import time
from collections.abc import Callable
from pathlib import Path

from local_recall.learning.shown import (
    SESSIONS_DIR,
    ShownLine,
    parse_lines,
    record_path,
    session_key,
)
from local_recall.repo.files import open_append_nofollow, read_tail_nofollow, through_symlink

__all__ = [
    "MAX_READ_BYTES",
    "SESSIONS_DIR",
    "append_shown",
    "prune",
    "read_shown",
    "record_path",
    "record_shown",
]
SESSION_TTL_DAYS = 7
# A session's record is read on every prompt: its tail only, past this (a long session's
# earliest prompts then count as unseen, which costs a repeat, never a miss).
MAX_READ_BYTES = 128 * 1024
_KEY = re.compile(r"[0-9a-f]{32}")


def append_shown(state_dir: Path, session_id: str, line: ShownLine) -> None:
    """Adds one prompt's answer to the session's record (OSError: not recorded)."""
    if session_id:
        append_line(state_dir, session_key(session_id), line.to_line())


def append_line(state_dir: Path, key: str, text: str) -> None:
    """Adds `text`, one line, to the record of the session whose `session_key` is `key` (the
    daemon hashes it for a hook's process, which then needs no hashlib). OSError: not
    recorded; ValueError: not a key or not one line."""
    if not _KEY.fullmatch(key) or not text.endswith("\n") or "\n" in text[:-1]:
        raise ValueError("not a session key and one line")
    path = state_dir / SESSIONS_DIR / f"{key}.jsonl"
    if through_symlink(path.parent):  # checked before prune: it deletes files in there
        raise OSError(f"{path.parent} leads through a symbolic link")
    if not os.path.lexists(path):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        prune(path.parent)
    fd = open_append_nofollow(path)
    try:
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)


def record_shown(state_dir: Path, key: str, text: str, report: Callable[[str, str], None]) -> None:
    """append_line, whose failure only means the session may see a memory again: handed to
    `report(level, message)`, never raised."""
    try:
        append_line(state_dir, key, text)
    except (OSError, ValueError) as exc:  # a read-only cache, a planted symlink: shown again
        report("INFO", f"session record not written: {exc}")


def prune(directory: Path, *, now: float | None = None) -> int:
    """Removes the records of sessions idle for SESSION_TTL_DAYS; regular files only."""
    cutoff = (time.time() if now is None else now) - SESSION_TTL_DAYS * 86_400
    removed = 0
    if through_symlink(directory):
        return 0
    with contextlib.suppress(OSError), os.scandir(directory) as entries:
        for entry in entries:
            if not entry.name.endswith(".jsonl") or not entry.is_file(follow_symlinks=False):
                continue
            with contextlib.suppress(OSError):
                if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(entry.path)
                    removed += 1
    return removed


def read_shown(state_dir: Path, session_id: str) -> list[ShownLine]:
    """A session's record of what it was shown; [] when there is none or it cannot be read."""
    if not session_id:
        return []
    try:
        data = read_tail_nofollow(record_path(state_dir, session_id), MAX_READ_BYTES)
    except OSError:
        return []
    return parse_lines(data.decode("utf-8", "replace").splitlines())
