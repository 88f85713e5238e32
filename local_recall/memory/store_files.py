"""Which files of a memory folder are read, and reading one: never through a symlink.

Only regular files named `<canonical uuid>.md` are memories. The same UUID spelled in upper
case, without dashes or with a leading space would be a second file for one id (listed twice,
deleted once), and a symlink — committed by anyone who can push — would show content from
outside the repository. Such entries are reported by path with the reason, never read.
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from local_recall.errors import (
    DuplicateMemoryId,
    InvalidMemoryFile,
    InvalidMemoryId,
    StorageError,
)
from local_recall.memory.model import parse_memory_id
from local_recall.repo.files import (
    StatKey,
    is_temp_name,
    key_of,
    open_folder_nofollow,
    read_bytes_nofollow,
    read_stat_in,
    stat_key,
    through_symlink,
)

MAX_FILE_BYTES = 2_000_000  # a memory body is capped at 1 MB; anything far larger is not ours


class FolderListing(NamedTuple):
    """A memory folder's `*.md` entries, and whether a writer's temp file was among its
    entries (maybe one a killed writer left: only then does a save look for them)."""

    # (name, stat key, why it is not read or None); the key None: not stated (`stat` False)
    files: list[tuple[str, StatKey | None, str | None]]
    temp_files: bool


def list_memory_files(directory: Path, *, stat: bool = True) -> FolderListing:
    """The `*.md` entries, each with why it is not read (None: read). Only regular files named
    `<canonical uuid>.md` are read: one id has one file, and a symlink (committed by anyone who
    can push) would show content from outside the repository. `stat` False: a file to read
    is not stated (a first scan takes each key from the read: 100,000 lstats, ~0.5 s)."""
    if through_symlink(directory):
        if os.path.isdir(directory):
            return FolderListing(
                [("", (0, 0, 0), "the folder is a symbolic link (not followed)")], False
            )
        return FolderListing([], False)
    try:
        entries = list(os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return FolderListing([], False)
    files: list[tuple[str, StatKey | None, str | None]] = []
    temp_files = False
    for entry in entries:
        if not entry.name.endswith(".md") or entry.name.startswith("."):
            temp_files = temp_files or is_temp_name(entry.name)
            continue
        unusable = _unusable(entry)  # from the listing's file types: no syscall on Linux
        if unusable is not None and is_folder_note(entry.name):  # a README: no memory at all
            continue
        if not stat and unusable is None:
            files.append((entry.name, None, None))
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue  # deleted between listing and stat
        files.append((entry.name, key_of(st), unusable))
    return FolderListing(files, temp_files)


# A file system may stamp a change with a coarse clock (a tick: 1-10 ms on Linux, HZ=1000..100): a
# folder changed in the same tick as it was listed can change again without its mtime moving
# (git's "racy" entries). A file system of coarser times (FAT: 2 s) can miss such a change: only
# another program's (every local-recall writer also moves the catalog); the next scan sees it.
RACY_NS = 10_000_000


def folder_stamp(directory: Path, listed_at_ns: int) -> StatKey | None:
    """The folder's own (inode, mtime_ns, size) before a listing at `listed_at_ns` (wall clock:
    what the file system stamps with): a file added, removed or renamed in moves its mtime.
    None when it cannot be read, or when it changed too close to the listing to tell."""
    stamp = stat_key(directory)
    return None if stamp is None else settled_stamp(stamp, listed_at_ns)


def settled_stamp(stamp: StatKey, listed_at_ns: int) -> StatKey | None:
    """`stamp` if its mtime is older than the listing by more than a tick, else None."""
    return stamp if stamp[1] < listed_at_ns - RACY_NS else None


# The folder's own notes, not memories (compared in lower case, without the extension): a team
# may keep a README.md in the memory folder; doctor names it as such, nothing else does.
FOLDER_NOTES = frozenset({"readme", "index", "_index", "contents", "toc"})


def is_folder_note(name: str) -> bool:
    stem = name.rsplit(".", 1)[0] if name.lower().endswith(".md") else name
    return stem.lower() in FOLDER_NOTES


def folder_notes(directory: Path) -> list[Path]:
    """The folder notes in `directory` (doctor lists them as not memories)."""
    try:
        names = sorted(entry.name for entry in os.scandir(directory))
    except OSError:
        return []
    return [directory / n for n in names if n.endswith(".md") and is_folder_note(n)]


def _unusable(entry: os.DirEntry[str]) -> str | None:
    if entry.is_symlink():
        return "a symbolic link (not followed)"
    if not _CANONICAL_NAME.fullmatch(entry.name):
        return "not named <id>.md with a lowercase, dashed UUID id (not read)"
    if not entry.is_file(follow_symlinks=False):
        return "not a regular file"
    return None


def claimed_id(name: str) -> str | None:
    """The memory id a file name claims, in any spelling the id parser accepts (upper case, no
    dashes, surrounding spaces), or None. `<id>.md` is the one spelling that is read; the
    others are reported, and commands that act on an id act on them too."""
    if not name.endswith(".md") or name.startswith("."):
        return None
    try:
        return parse_memory_id(name[:-3])
    except InvalidMemoryId:
        return None


def claimants(directory: Path, memory_id: str) -> tuple[Path, ...]:
    """Every entry of `directory` claiming `memory_id` (a symlink too: it is the entry that is
    removed, never its target), the canonical `<id>.md` first."""
    if through_symlink(directory):
        return ()
    try:
        names = [entry.name for entry in os.scandir(directory)]
    except (FileNotFoundError, NotADirectoryError):
        return ()
    canonical = f"{memory_id}.md"
    found = sorted(name for name in names if claimed_id(name) == memory_id)
    found.sort(key=lambda name: name != canonical)
    return tuple(directory / name for name in found)


def duplicated_claims(problem_paths: Iterable[Path]) -> dict[str, list[Path]]:
    """Ids that a reported (misspelled) file claims beside its canonical file or another
    spelling: {id: [canonical if present, the others]}."""
    claimed: dict[tuple[Path, str], list[Path]] = {}
    for path in problem_paths:
        memory_id = claimed_id(path.name)
        if memory_id is not None and path.name != f"{memory_id}.md":
            claimed.setdefault((path.parent, memory_id), []).append(path)
    found: dict[str, list[Path]] = {}
    for (folder, memory_id), paths in claimed.items():
        canonical = folder / f"{memory_id}.md"
        every = ([canonical] if os.path.lexists(canonical) else []) + sorted(paths)
        if len(every) > 1:
            found[memory_id] = every
    return found


def only_claimant(directory: Path, memory_id: str) -> None:
    """DuplicateMemoryId when more than one file claims the id: a rewrite of one would leave
    the others."""
    paths = claimants(directory, memory_id)
    if len(paths) > 1:
        raise DuplicateMemoryId(memory_id, paths)


def remove_files(paths: tuple[Path, ...]) -> None:
    for path in paths:
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot delete {path}: {exc.strerror or exc}") from None


_CANONICAL_NAME = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.md")


def read_memory_file(path: Path, folder: int | None = None) -> str:
    """The file's text; `folder`: its folder's descriptor from `open_folder_nofollow` (a scan
    checks the way to the folder once, not once per file). FileNotFoundError: gone."""
    return read_memory_file_keyed(path, folder)[0]


def read_memory_file_keyed(path: Path, folder: int | None = None) -> tuple[str, StatKey]:
    """`read_memory_file`, and the file's stat key as it was read."""
    try:
        if folder is None:
            data = read_bytes_nofollow(path, MAX_FILE_BYTES)
            key = stat_key(path) or (0, 0, 0)  # gone since: a key no later listing matches
        else:
            data, st = read_stat_in(folder, path.name, MAX_FILE_BYTES)
            key = key_of(st)
    except FileNotFoundError:
        raise
    except OSError as exc:  # a symlink, a folder, a FIFO, too large: reported, never followed
        raise InvalidMemoryFile(path, f"cannot read: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8"), key
    except UnicodeDecodeError:
        raise InvalidMemoryFile(path, "not UTF-8 text") from None


@contextlib.contextmanager
def opened_folder(directory: Path) -> Iterator[int | None]:
    """`directory`'s descriptor for `read_memory_file`, closed after; None when it cannot be
    opened so (a platform without dir_fd, a missing or symlinked folder): then each file is
    read by path, with its own check."""
    try:
        folder = open_folder_nofollow(directory)
    except OSError:
        folder = None
    try:
        yield folder
    finally:
        if folder is not None:
            os.close(folder)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a scan lists, loads and builds: many
    small containers, none of them garbage, and the collector's passes over them were ~30 % of
    a first scan's CPU at 100,000 files, and ~10 % more while only the entries
    were built under it. Reference counting still frees memory."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def settle_built() -> None:
    """What a scan just rebuilt is long-lived (the memories, the catalog): moved to the oldest
    generation, the collector's first young pass after it does not walk all of it again
    (~0.6 s at 100,000 files: paused, the collector still counts them young). A list splice,
    O(1); called after a rebuild only, not on every scan a daemon or a server makes, since the
    young garbage of the moment (cycles a request left) then waits for a full pass."""
    gc.freeze()
    gc.unfreeze()
