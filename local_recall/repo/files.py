"""Atomic file writes: temp file in the same directory, fsync, os.replace, fsync the directory.

A reader (or a crash) sees the old file or the new one, never half of either. Temp files are
named `.<name>.<random>.tmp` so listings of `*.md` never see them and .gitignore covers them."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from local_recall.errors import StorageError

_STALE_TEMP_SECONDS = 3600


def write_bytes_atomic(path: Path, data: bytes) -> None:
    import tempfile  # lazily: ~6 ms the hooks' read-only hot path never needs

    directory = path.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise StorageError(f"cannot write {path}: {exc.strerror or exc}") from None
    _fsync_directory(directory)


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def _fsync_directory(directory: Path) -> None:
    # Makes the rename itself durable; not possible on every platform/filesystem.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def remove_stale_temp_files(directory: Path, *, older_than: float = _STALE_TEMP_SECONDS) -> int:
    """Temp files left by a killed writer; only old ones, so a live writer's is never touched."""
    removed = 0
    cutoff = time.time() - older_than
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            if entry.name.startswith(".") and entry.name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    if entry.stat().st_mtime < cutoff:
                        os.unlink(entry.path)
                        removed += 1
    return removed
