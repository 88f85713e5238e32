"""The one inter-process lock helper: a lock file (filelock) held for a `with` block.

Used by the memory store (one writer of a store's files and catalog), the index sync (one
writer of the LanceDB table) and the extraction pipeline (one pass at a time). The daemon's
own pid lock is different (it must outlive a block and name its holder; daemon/control.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from local_recall.errors import StorageError
from local_recall.repo.files import check_writable_place


class LockBusy(StorageError):
    """Another process held the lock for the whole timeout."""


@contextlib.contextmanager
def held_lock(path: Path, *, timeout: float, what: str = "the lock") -> Iterator[None]:
    """Hold the lock file `path` (its folder is created) for the block; -1 waits forever.

    Raises LockBusy after `timeout` seconds, StorageError when the lock file cannot be made."""
    # imported here: a hook that only reads (no daemon: the prompt's answer in its own process)
    # never takes a lock, and filelock costs ~20 ms of its start
    from filelock import FileLock
    from filelock import Timeout as _Timeout

    check_writable_place(path)  # filelock refuses a symlinked lock file, not a folder
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(path), timeout=timeout)
        lock.acquire()
    except _Timeout:
        raise LockBusy(f"timed out waiting for {what} {path}") from None
    except OSError as exc:
        raise StorageError(f"cannot lock {path}: {exc.strerror or exc}") from None
    try:
        yield
    finally:
        lock.release()
