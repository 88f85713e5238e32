"""A scan rebuilt (store.py): each memory file's catalog entry, taken from the catalog while its
stat key matches, else read and parsed, and the memory it stands for. A file listed without a
key (a first scan lists none: nothing to match them with) is keyed on the stat its read took."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from local_recall.errors import InvalidMemoryFile
from local_recall.memory.catalog_entry import entry_and_memory, memory_from_entry
from local_recall.memory.format import WrittenAt, parse_memory_text
from local_recall.memory.kept_scan import ListedFile, Listing, Rebuilt, Scan
from local_recall.memory.model import Memory
from local_recall.memory.store_files import opened_folder, read_memory_file_keyed
from local_recall.repo.files import StatKey, stat_key

log = logging.getLogger(__name__)


def rebuild(
    directory: Path,
    kind: str,
    listed: Iterable[ListedFile],
    catalog: Mapping[str, Any],
    memo: Mapping[str, tuple[StatKey, Memory]],
    written_at: WrittenAt | None = None,
) -> Rebuilt:
    """The scan of the `listed` files of `directory`, through `catalog` and `memo` (the last
    rebuild's memories, kept while their file's key matches)."""
    fresh: dict[str, dict[str, Any]] = {}
    memories: list[Memory] = []
    problems: list[InvalidMemoryFile] = []
    kept: dict[str, tuple[StatKey, Memory]] = {}
    changed = False
    with opened_folder(directory) as folder:
        entries = list(file_entries(directory, kind, listed, catalog, folder, written_at))
    listing: Listing = {}
    for name, key, entry, parsed in entries:
        listing[name] = (key, entry if isinstance(entry, str) else None)
        if isinstance(entry, str):  # never read: a symlink, a non-canonical name, a folder
            problems.append(InvalidMemoryFile(directory / name, entry))
            continue
        changed = changed or entry is not catalog.get(name)
        fresh[name] = entry
        if "error" in entry:
            problems.append(InvalidMemoryFile(directory / name, entry["error"]))
            continue
        known = memo.get(name)
        if known is not None and known[0] == key:
            memory = known[1]
        elif parsed is not None:  # read just now: the memory its entry stands for
            memory = parsed
        else:
            memory = memory_from_entry(entry["memory"], directory / name, kind)
        kept[name] = (key, memory)
        memories.append(memory)
    memories.sort(key=lambda m: (m.occurred_at, m.id))
    problems.sort(key=lambda p: str(p.path))
    scan = Scan(tuple(memories), tuple(problems))
    return Rebuilt(scan, listing, fresh, changed or len(fresh) != len(catalog), kept)


def file_entries(
    directory: Path,
    kind: str,
    listed: Iterable[ListedFile],
    catalog: Mapping[str, Any],
    folder: int | None,
    written_at: WrittenAt | None = None,
) -> Iterator[tuple[str, StatKey, dict[str, Any] | str, Memory | None]]:
    """(name, stat key, its catalog entry or why it is not read, the memory if read now) per
    file: the cached entry while the stat key matches, else the file parsed anew."""
    for name, key, unusable in listed:
        if key is None:  # not stated when listed: keyed as read
            yield name, *parse_entry(directory / name, None, kind, folder, written_at)
            continue
        cached = catalog.get(name)
        if unusable is not None:
            yield name, key, unusable, None
        elif isinstance(cached, dict) and cached.get("stat") == list(key):
            yield name, key, cached, None
        else:
            entry, memory = parse_entry(directory / name, key, kind, folder, written_at)[1:]
            yield name, key, entry, memory


def parse_entry(
    path: Path,
    key: StatKey | None,
    kind: str,
    folder: int | None = None,
    written_at: WrittenAt | None = None,
) -> tuple[StatKey, dict[str, Any], Memory | None]:
    """The file's stat key (`key`, or as it was read), its catalog entry and the memory it
    stands for (None: an error entry)."""
    try:
        text, read_key = read_memory_file_keyed(path, folder)
        key = key or read_key
        parsed = parse_memory_text(text, path, kind=kind, written_at=written_at)
    except InvalidMemoryFile as exc:
        log.warning("skipping unreadable memory file %s: %s", path, exc.reason)
        key = key or stat_key(path) or (0, 0, 0)
        return key, {"stat": list(key), "error": exc.reason}, None
    except (OSError, UnicodeDecodeError) as exc:
        key = key or stat_key(path) or (0, 0, 0)  # gone: a key no later listing matches
        return key, {"stat": list(key), "error": f"cannot read: {exc}"}, None
    entry, memory = entry_and_memory(parsed)
    return key, {"stat": list(key), "memory": entry}, memory
