"""Each session's record of what its prompts were shown (context/seen.py): one JSON-lines file
per session in state/sessions/, appended once per prompt that got anything.

Cheap on every prompt: one bounded read and one small append, no fsync (the record is derived
and only saves tokens; losing it repeats a memory once, nothing more). Never through a symlink
(a committed `state/` may be hostile); the file name is a hash of the session id, so an odd id
names no other path. Files of sessions idle for SESSION_TTL_DAYS are pruned when a new session
starts its record.
"""

import contextlib
import os
import time
from pathlib import Path

from local_recall.context.seen import ShownLine
from local_recall.learning.shown import SESSIONS_DIR, record_path
from local_recall.learning.usage_log import MAX_READ_BYTES, read_shown
from local_recall.repo.files import open_append_nofollow, through_symlink

# Named in learning/shown.py, read in learning/usage_log.py: the daemon's pass reads it too.
__all__ = ["MAX_READ_BYTES", "SESSIONS_DIR", "append_shown", "prune", "read_shown", "record_path"]
SESSION_TTL_DAYS = 7


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
