"""The scan a store keeps between calls (store.py), and how a write of its own joins it.

A save at 100,000 memories listed the folder twice (a stat of every file: ~1 s of CPU, issue
36). A store keeps its last scan with the folder's stat: while neither that nor the catalog's
moved, a save takes the kept scan; its own write joins it here, no listing again."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any, NamedTuple

from local_recall.errors import InvalidMemoryFile
from local_recall.memory.model import Memory

StatKey = tuple[int, int, int]  # (inode, mtime_ns, size)
Listing = dict[str, tuple[StatKey, str | None]]  # name -> (stat key, why not read) per file
ListedFile = tuple[str, StatKey | None, str | None]  # (name, stat key or None, why not read)


@dataclass(frozen=True, slots=True)
class Scan:
    """Everything in the folder: the memories that parse, and the files that do not."""

    memories: tuple[Memory, ...]
    problems: tuple[InvalidMemoryFile, ...]


class Seen(NamedTuple):
    """The last scan, the listing it read and the folder's stat before that listing, or right
    after this process wrote a file into a folder it knew (None: unknown)."""

    listing: Listing
    folder: StatKey | None
    scan: Scan


class Rebuilt(NamedTuple):
    """A scan rebuilt from the files (file_entries.py), and what the store keeps of it."""

    scan: Scan
    listing: Listing  # each file's stat key, as read or listed
    entries: dict[str, dict[str, Any]]  # the catalog's entries now
    changed: bool  # they differ from the catalog's as loaded
    memo: dict[str, tuple[StatKey, Memory]]  # each memory by file name, with its stat key


def with_file(seen: Seen, name: str, key: StatKey, memory: Memory, folder: StatKey | None) -> Seen:
    """`seen` with file `name` (new or rewritten) listed at `key` and holding `memory`, the
    folder's stat `folder` after the write (None: unknown)."""
    memories = list(seen.scan.memories)
    if name in seen.listing:  # rewritten (`put`): its old memory goes (a file is `<id>.md`)
        memories = [m for m in memories if m.id != memory.id]
    bisect.insort(memories, memory, key=lambda m: (m.occurred_at, m.id))
    problems = tuple(p for p in seen.scan.problems if p.path.name != name)
    listing = {**seen.listing, name: (key, None)}
    return Seen(listing, folder, Scan(tuple(memories), problems))
