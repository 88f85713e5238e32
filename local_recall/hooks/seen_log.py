"""Each session's record of what its prompts were shown (context/seen.py): one JSON-lines file
per session in state/sessions/, appended once per prompt that got anything.

Cheap on every prompt: one bounded read and one small append, no fsync (the record is derived
and only saves tokens; losing it repeats a memory once, nothing more). Never through a symlink
(a committed `state/` may be hostile); the file name is a hash of the session id, so an odd id
names no other path. Files of sessions idle for SESSION_TTL_DAYS are pruned when a new session
starts its record.
"""

import contextlib
import hashlib
import os
import time
from pathlib import Path

from local_recall.context.seen import ShownLine, parse_lines
from local_recall.repo.files import open_append_nofollow, read_tail_nofollow, through_symlink

SESSIONS_DIR = "sessions"
# A session's record is read on every prompt: its tail only, past this (a long session's
# earliest prompts then count as unseen, which costs a repeat, never a miss).
MAX_READ_BYTES = 128 * 1024
SESSION_TTL_DAYS = 7


def record_path(state_dir: Path, session_id: str) -> Path:
    name = hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()[:32]
    return state_dir / SESSIONS_DIR / f"{name}.jsonl"


def read_shown(state_dir: Path, session_id: str) -> list[ShownLine]:
    """The session's record; [] when there is none or it cannot be read."""
    if not session_id:
        return []
    path = record_path(state_dir, session_id)
    try:
        data = read_tail_nofollow(path, MAX_READ_BYTES)
    except OSError:
        return []
    return parse_lines(data.decode("utf-8", "replace").splitlines())


def append_shown(state_dir: Path, session_id: str, line: ShownLine) -> None:
    """Adds one prompt's answer to the session's record (OSError: not recorded)."""
    if not session_id:
        return
    path = record_path(state_dir, session_id)
    if through_symlink(path.parent):  # checked before prune: it deletes files in there
        raise OSError(f"{path.parent} leads through a symbolic link")
    if not os.path.lexists(path):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        prune(path.parent)
    fd = open_append_nofollow(path)
    try:
        os.write(fd, line.to_line().encode("utf-8"))
    finally:
        os.close(fd)


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
