"""File access inside the repository: atomic writes, and reads that never follow a symlink.

Atomic writes: temp file in the same directory, fsync, os.replace, fsync the directory. A reader
(or a crash) sees the old file or the new one, never half of either. Temp files are named
`.<name>.<random>.tmp` so listings of `*.md` never see them and .gitignore covers them.

The repository may be hostile (docs/security.md): whoever can push can commit a symbolic link
as `local-recall/state`, `recall.log` or a memory file. Nothing here reads, writes or creates
through one: a folder on the way that is a symlink, or a final name that is one, is refused
(reads raise OSError ELOOP, so every caller's `except OSError` already treats it as unreadable;
writes raise StorageError). Paths are expected below a resolved repository root (`Settings`
and `discover_root` resolve it), so any symlink in a path's chain is one inside the repo."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from local_recall.errors import StorageError

_STALE_TEMP_SECONDS = 3600


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO planted in the tree must not hang a reader

# A file's identity and content stamp, (inode, mtime_ns, size): what every cache in the
# repository compares to know a file changed (a rename in, a rewrite, an append, an edit in place).
StatKey = tuple[int, int, int]


def key_of(info: os.stat_result) -> StatKey:
    """The stat key of a stat result already at hand (an fstat, a listing's entry)."""
    return (info.st_ino, info.st_mtime_ns, info.st_size)


def stat_key(path: str | os.PathLike[str]) -> StatKey | None:
    """(inode, mtime_ns, size) of `path` itself (a symlink's own); None when it is gone."""
    try:
        return key_of(os.lstat(path))
    except OSError:
        return None


def through_symlink(path: Path) -> bool:
    """Does `path` (existing or not) lead through a symbolic link, itself included?"""
    absolute = os.path.abspath(path)
    return os.path.realpath(absolute) != absolute


def is_real_dir(path: Path) -> bool:
    """A directory reached without any symbolic link on the way."""
    return not through_symlink(path) and os.path.isdir(path)


def is_private_dir(directory: Path, uid: int | None = None) -> bool:
    """A real directory (not a symlink) owned by `uid` that nobody else can write or list."""
    try:
        info = os.lstat(directory)
    except OSError:
        return False
    owner = os.getuid() if uid is None else uid
    return stat.S_ISDIR(info.st_mode) and info.st_uid == owner and not info.st_mode & 0o077


def _refused(path: Path, why: str) -> OSError:
    return OSError(errno.ELOOP, f"{why}; not followed", str(path))


def read_bytes_nofollow(path: Path, limit: int | None = None) -> bytes:
    """The bytes of a regular file, refusing a symlink (the file or a folder above it), a
    non-regular file, and more than `limit` bytes: all as OSError."""
    return read_stat_nofollow(path, limit)[0]


def read_stat_nofollow(path: Path, limit: int | None = None) -> tuple[bytes, os.stat_result]:
    """`read_bytes_nofollow`, and the file's stat as it was read (a cache keys on it)."""
    if through_symlink(path.parent):
        raise _refused(path, "a folder on its path is a symbolic link")
    return _read_nofollow(path, str(path), limit, None)


def open_folder_nofollow(path: Path) -> int | None:
    """A descriptor of a folder reached through no symlink, for `read_stat_in` to read many of
    its files after one check of the way to it (a first scan reads 100,000 memory files: a
    `realpath` each was ~6 lstats and ~10 % of its CPU). None where the platform cannot open
    files relative to a folder: callers then read by path. OSError: not such a folder."""
    if os.open not in os.supports_dir_fd or not hasattr(os, "O_DIRECTORY"):
        return None
    if through_symlink(path):
        raise _refused(path, "the folder or one above it is a symbolic link")
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)


def read_stat_in(folder: int, name: str, limit: int | None = None) -> tuple[bytes, os.stat_result]:
    """`read_bytes_nofollow` of the file `name` in a folder from `open_folder_nofollow`, and
    the file's stat as it was read (a first scan keys each file on it rather than on a stat of
    its own in the listing: a syscall a file)."""
    if os.sep in name or name in ("", ".", ".."):
        raise OSError(errno.EINVAL, "not a file name", name)
    return _read_nofollow(name, name, limit, folder)


def _read_nofollow(
    path: Path | str, shown: str, limit: int | None, folder: int | None
) -> tuple[bytes, os.stat_result]:
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK, dir_fd=folder)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refused(Path(shown), "it is a symbolic link") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", shown)
        # one read of the size fstat gave (+1 to see growth), not a buffer of `limit` per file
        want = info.st_size + 1 if limit is None else min(info.st_size, limit) + 1
        first = os.read(fd, want)
        if len(first) == want - 1:  # all fstat saw, and not one byte more: no second read to
            return first, info  # see the end (a first scan reads 100,000 files: a syscall each)
        data = bytearray(first)
        want = 1 << 16
        while (limit is None or len(data) <= limit) and (chunk := os.read(fd, want)):
            data += chunk
    finally:
        os.close(fd)
    if limit is not None and len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {limit} bytes", shown)
    return bytes(data), info


def read_tail_nofollow(path: Path, size: int) -> bytes:
    """The last `size` bytes of a regular file from its first whole line on (all of it when
    smaller), refused as `read_bytes_nofollow` refuses: a planted huge file costs one read."""
    if through_symlink(path.parent):
        raise _refused(path, "a folder on its path is a symbolic link")
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if info.st_size <= size:
            return handle.read(size)
        handle.seek(info.st_size - size)
        data = handle.read(size)
    return data[data.find(b"\n") + 1 :]


def read_text_nofollow(path: Path, limit: int | None = None) -> str:
    """`read_bytes_nofollow` decoded as UTF-8 (UnicodeDecodeError, a ValueError, if not)."""
    return read_bytes_nofollow(path, limit).decode("utf-8")


def open_append_nofollow(path: Path) -> int:
    """A descriptor appending to a regular file (created 0644 if missing), never through a
    symlink: for the log, which a committed `recall.log` symlink would otherwise redirect."""
    if through_symlink(path.parent):
        raise _refused(path, "a folder on its path is a symbolic link")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _NONBLOCK, 0o644)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return fd


def check_writable_place(path: Path) -> None:
    """Refuse (StorageError) to create or replace `path` when a folder on its way or the name
    itself is a symbolic link: the write would land outside the repository."""
    if through_symlink(path.parent):
        raise StorageError(f"cannot write {path}: a folder on its path is a symbolic link")
    if os.path.islink(path):
        raise StorageError(f"cannot write {path}: it is a symbolic link (not replaced)")


def write_bytes_atomic(path: Path, data: bytes) -> None:
    check_writable_place(path)
    try:
        _replace(path, lambda handle: handle.write(data))
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc.strerror or exc}") from None


def replace_derived(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write a derived file (state/: rebuildable) atomically through `write(handle)`. A
    symlink planted at its name is replaced, never written through; a folder on the way that
    is one is refused. Raises OSError."""
    if through_symlink(path.parent):
        raise _refused(path, "a folder on its path is a symbolic link")
    _replace(path, write)


def _replace(path: Path, write: Callable[[BinaryIO], object]) -> None:
    import tempfile  # lazily: ~6 ms the hooks' read-only hot path never needs

    directory = path.parent
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            # mkstemp makes 0600 files: a memory written by one user of a shared checkout would
            # be unreadable to the others (their hooks would skip it). An existing file keeps
            # its mode; a new one gets what the umask gives, as any editor's would.
            os.fchmod(handle.fileno(), _mode_for(path))
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    _fsync_directory(directory)


def _mode_for(path: Path) -> int:
    try:
        info = os.lstat(path)
    except OSError:
        info = None
    if info is None or not stat.S_ISREG(info.st_mode):  # a symlink's 0777 is not a file's
        return 0o666 & ~_umask()
    return stat.S_IMODE(info.st_mode)


def _umask() -> int:
    """This process's umask, read without changing it (Linux: /proc), else set and restored."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current


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


def is_temp_name(name: str) -> bool:
    """A name `write_bytes_atomic` gives its temp files (`.<name>.<random>.tmp`)."""
    return name.startswith(".") and name.endswith(".tmp")


def remove_stale_temp_files(directory: Path, *, older_than: float = _STALE_TEMP_SECONDS) -> int:
    """Temp files left by a killed writer; only old ones, so a live writer's is never touched.
    Returns how many temp files are left (young ones): a caller lists again only while some
    are (the listing is the cost: ~70 ms of CPU at 100,000 files)."""
    left = 0
    cutoff = time.time() - older_than
    if through_symlink(directory):
        return 0
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            if is_temp_name(entry.name):
                with contextlib.suppress(OSError):
                    if entry.stat().st_mtime < cutoff:
                        os.unlink(entry.path)
                        continue
                left += 1
    return left
