"""Whether anything was written in a few folders since the last look: Linux's inotify, read
without blocking, so a prompt asks with one `select` instead of a stat of every memory file.

The kernel queues an event as the change is made, so a change finished before the question is
always seen (no thread, no delay: watchdog pairs moves for half a second before it reports).
Reads, opens and closes without a write are not watched: the process's own reads of the
memories never count as a change. Elsewhere (no inotify, its limits reached) `open` is None
and the caller stats the files instead.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

# linux/inotify.h: content written, metadata changed, an entry created, deleted or renamed in
# or out, the folder itself deleted or moved; IN_Q_OVERFLOW and IN_IGNORED come regardless.
_CHANGES: Final = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800
_NONBLOCK_CLOEXEC: Final = os.O_NONBLOCK | os.O_CLOEXEC  # IN_NONBLOCK, IN_CLOEXEC
_READ_BYTES: Final = 65536


class FolderEvents:
    """An inotify descriptor watching `folders` (not recursively): `changed()` says whether an
    event came since the last call and drains them. Close it when done."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    @classmethod
    def open(cls, folders: Sequence[Path]) -> FolderEvents | None:
        """Watching every folder of `folders` that exists; None where inotify is unavailable
        (not Linux, the per-user instance or watch limit reached)."""
        if not sys.platform.startswith("linux"):
            return None
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = libc.inotify_init1(_NONBLOCK_CLOEXEC)
        except (OSError, AttributeError):
            return None
        if fd < 0:
            return None
        for folder in folders:
            if not folder.is_dir():
                continue
            if libc.inotify_add_watch(fd, os.fsencode(folder), _CHANGES) < 0:
                os.close(fd)
                return None
        return cls(fd)

    def changed(self) -> bool:
        """Whether any watched folder changed since the last call (events are drained)."""
        ready, _, _ = select.select([self._fd], [], [], 0)
        if not ready:
            return False
        with contextlib.suppress(BlockingIOError, InterruptedError):
            while os.read(self._fd, _READ_BYTES):
                pass
        return True

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)
