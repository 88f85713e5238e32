"""Memory files on disk: list, get, create (idempotent across processes), update, delete.

The folder of `<uuid>.md` files is the source of truth. A catalog in the state folder caches
what each file parsed to, keyed by (inode, mtime_ns, size) — atomic writes give every new
version a new inode — so listing 10k memories does not re-parse 10k YAML headers. The catalog is
only a cache: a missing or broken one is rebuilt from the files.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from local_recall.errors import InvalidMemoryFile, MemoryNotFound, StorageError
from local_recall.memory.catalog_file import CatalogFile
from local_recall.memory.file_entries import parse_entry, rebuild
from local_recall.memory.format import WrittenAt, parse_memory_text, render_memory
from local_recall.memory.kept_scan import ListedFile, Listing, Scan, Seen, with_file
from local_recall.memory.model import Draft, Memory, content_hash, parse_memory_id
from local_recall.memory.store_files import (
    FolderListing,
    claimants,
    collector_paused,
    folder_stamp,
    list_memory_files,
    only_claimant,
    read_memory_file,
    remove_files,
    settle_built,
)
from local_recall.repo.files import (
    StatKey,
    key_of,
    remove_stale_temp_files,
    stat_key,
    write_text_atomic,
)
from local_recall.repo.locks import LockBusy, held_lock

__all__ = ["Created", "Deleted", "MemoryStore", "ParaphraseOf", "Scan"]  # Scan: from kept_scan.py


# the memory a draft says in other words, among the store's memories (`create`'s `paraphrase_of`)
ParaphraseOf = Callable[[Sequence[Memory]], Memory | None]
# 2: provenance and review fields; 3: superseded_by/_reason; 4: disputed; 5: a file without
# occurred_at is a memory (its time from git or the file), no longer an error entry
_CATALOG_VERSION = 5
_LOCK_TIMEOUT_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class Created:
    memory: Memory
    created: bool  # False: the same content already existed and that memory is returned
    paraphrase: bool = False  # the memory returned says the same in other words (not a copy)


@dataclass(frozen=True, slots=True)
class Deleted:
    memory: Memory
    paths: tuple[Path, ...]  # every file that claimed the id, the canonical one first


class MemoryStore:
    def __init__(
        self,
        directory: Path,
        state_dir: Path,
        *,
        kind: str = "episodic",
        new_id: Callable[[], str],
        lock_timeout: float = _LOCK_TIMEOUT_SECONDS,
        written_at: WrittenAt | None = None,
    ) -> None:
        self.directory = directory
        self.lock_timeout = lock_timeout  # seconds a writer waits for the store's lock
        self.kind = kind
        self._state_dir = state_dir
        self._catalog = CatalogFile(state_dir / f"catalog-{kind}.json", _CATALOG_VERSION)
        self.lock_path = state_dir / f"store-{kind}.lock"
        self._new_id = new_id
        # a hand-written file without occurred_at: when git added it, else its mtime
        self.written_at = written_at or _modified_at
        # name -> (stat key, Memory): a long-lived process re-scanning an unchanged folder builds
        # no objects at all (at 100k files, a Path + Memory per file cost ~2 s per scan).
        self._memo: dict[str, tuple[StatKey, Memory]] = {}
        self._last: Seen | None = None
        self._temp_files = False  # the last listing saw a writer's temp file (a killed one's?)

    # --- reading ------------------------------------------------------------------------------

    def path_of(self, memory_id: str) -> Path:
        return self.directory / f"{parse_memory_id(memory_id)}.md"

    def claimants(self, memory_id: str) -> tuple[Path, ...]:
        return claimants(self.directory, parse_memory_id(memory_id))  # any spelling of the id

    def get(self, memory_id: str) -> Memory:
        path = self.path_of(memory_id)
        try:
            text = read_memory_file(path)
        except FileNotFoundError:
            others = self.claimants(memory_id)  # only a misspelled file: it is not read
            if others:
                raise InvalidMemoryFile(others[0], f"not read: not named {path.name}") from None
            raise MemoryNotFound(parse_memory_id(memory_id)) from None
        return parse_memory_text(text, path, kind=self.kind, written_at=self.written_at)

    def scan(self) -> Scan:
        """Every memory file, parsed through the catalog cache. Never raises for a bad file."""
        # before the listing: a change during it moves it (a file-system clock: not Settings')
        stamp = folder_stamp(self.directory, time.time_ns())
        with collector_paused():  # the listing, the catalog, the memories: none of it garbage
            last = self._last
            # nothing to match a stat key with: each file is keyed as it is read
            first = last is None and not self._memo and not self._catalog.load()
            listed = self._files(stat=not first)
            self._temp_files = listed.temp_files
            if (
                last is not None
                and self._catalog.unchanged()
                and last.listing == {name: (key, why) for name, key, why in listed.files}
            ):
                self._last = last._replace(folder=stamp)
                return last.scan  # files and catalog as last scanned or written
            scan, listing = self._rebuilt(listed.files)
            settle_built()
        self._last = Seen(listing, stamp, scan)
        return scan

    def _rebuilt(self, listed: Iterable[ListedFile]) -> tuple[Scan, Listing]:
        """The scan of the `listed` files and their listing (file_entries.py); the catalog
        records what changed."""
        catalog = self._catalog.load()  # from memory while unchanged
        done = rebuild(self.directory, self.kind, listed, catalog, self._memo, self.written_at)
        self._memo = done.memo
        if done.changed:
            self._catalog.save(done.entries)  # what changed appended (catalog_file.py)
        return done.scan, done.listing

    def _files(self, *, stat: bool = True) -> FolderListing:
        return list_memory_files(self.directory, stat=stat)

    # --- writing ------------------------------------------------------------------------------

    def create(self, draft: Draft, paraphrase_of: ParaphraseOf | None = None) -> Created:
        """Write a new memory unless one with the same normalised body exists, or `paraphrase_of`
        names one it paraphrases: that one is returned. `paraphrase_of` (it may sync an index,
        load a model: seconds) is decided outside the cross-process lock; under it come the hash
        check and, only if memories were written since, `paraphrase_of` again (warm by then:
        milliseconds). One
        fact saved by 20 processes at once leaves one file, none waits out another's model
        load, and one that waited too long answers with the memory now holding its fact."""
        digest = content_hash(draft.body)
        seen = self._rescan().memories  # the folder is listed only if it moved (`_rescan`)
        if (found := self._holding(seen, digest, paraphrase_of)) is not None:
            return found
        try:
            with self._lock():
                now = self._rescan().memories
                moved = now is not seen and _state(now) != _state(seen)
                recheck = paraphrase_of if moved else None
                # the same scan: its hash was checked (a pass over 100,000 memories)
                if now is not seen and (found := self._holding(now, digest, recheck)) is not None:
                    return found
                if self._temp_files:  # only a listing that saw one looks for them
                    self._temp_files = remove_stale_temp_files(self.directory) > 0
                memory = _from_draft(self, self._new_id(), draft, digest, draft.extra)
                known = self._unmoved()
                self._write(memory)
                path = self.path_of(memory.id)
                return Created(self._record_new_file(path, known), created=True)
        except LockBusy:  # timed out on the lock: a paraphrase saved meanwhile holds the fact
            if (found := _holder(self.scan().memories, digest, paraphrase_of)) is None:
                raise
            return found

    def _holding(
        self, memories: Sequence[Memory], digest: str, paraphrase_of: ParaphraseOf | None
    ) -> Created | None:
        """`_holder`, its answer's file checked (one lstat): an edit in place moves neither the
        folder's stat nor the catalog's, and a save must not answer with a memory that may no
        longer hold its fact. Edited since its listing: the folder is listed again."""
        found = _holder(memories, digest, paraphrase_of)
        if found is None or self._as_listed(found.memory):
            return found
        return _holder(self.scan().memories, digest, paraphrase_of)

    def _as_listed(self, memory: Memory) -> bool:
        last = self._last
        if last is None:
            return True
        listed = last.listing.get(f"{memory.id}.md")
        return listed is not None and listed[0] == stat_key(self.directory / f"{memory.id}.md")

    def _record_new_file(self, path: Path, known: bool) -> Memory:
        """Add a file this process just wrote to the catalog without re-scanning the folder
        (the scan before the write was fresh, under the same lock). `known`: the folder was as
        last listed right before the write, so its stat after it stands for the kept listing
        and the next save need not list it (2 listings of 100,000 files a save)."""
        after = stat_key(self.directory) if known else None
        key = key_of(path.stat())
        _key, entry, memory = parse_entry(path, key, self.kind)
        if memory is None:  # cannot happen for a file we rendered; never hide it if it does
            raise StorageError(f"{path}: written but does not parse: {entry['error']}")
        self._catalog.put(path.name, entry)  # its line appended: the other entries as loaded
        if self._last is not None:  # the next scan that lists the same files returns this one
            self._last = with_file(self._last, path.name, key, memory, after)
        self._memo[path.name] = (key, memory)
        return memory

    def _rescan(self) -> Scan:
        """A save's scan: the last one while neither the folder's stat (a file added, removed
        or renamed in: atomic writes rename) nor the catalog's (every writer records its file
        there) moved since it listed the folder or this process wrote into it (three stats,
        where a listing stats every file: ~1 s of CPU at 100,000), else `scan`. A hand edit in
        place moves neither: a full scan (a list, a search, the daemon's) sees it, and a save
        checks the file of the memory it answers with (`_holding`)."""
        last = self._last
        if last is not None and self._unmoved():
            return last.scan
        return self.scan()

    def _unmoved(self) -> bool:
        """Neither the folder nor the catalog moved since the kept scan knew them (the folder's
        stat was settled when listed, or taken right after this process's own write)."""
        last = self._last
        return (
            last is not None
            and last.folder is not None
            and last.folder == stat_key(self.directory)
            and self._catalog.unchanged()
        )

    def put(self, memory_id: str, draft: Draft) -> Created:
        """Write the memory with this id, new or rewritten (session summaries: one file per
        session, updated as the session goes on). Keys a person added to an existing file are
        kept. Same body and subject as on disk: nothing is written (`created` False). A file
        that does not parse raises InvalidMemoryFile: it is never overwritten."""
        path = self.path_of(memory_id)
        with self._lock():
            try:
                current: Memory | None = self.get(memory_id)
            except MemoryNotFound:
                current = None
            digest = content_hash(draft.body)
            if current is not None and (current.content_hash, current.subject) == (
                digest,
                draft.subject,
            ):
                return Created(current, created=False)
            extra = dict(current.extra) if current is not None else {}
            extra.update(draft.extra)
            memory = _from_draft(
                self, parse_memory_id(memory_id), draft, digest, MappingProxyType(extra)
            )
            known = self._unmoved()
            self._write(memory)
            written = self._record_new_file(path, known)
        return Created(written, created=True)

    def find_by_hash(self, digest: str) -> Memory | None:
        return next((m for m in self.scan().memories if m.content_hash == digest), None)

    def update(self, memory_id: str, apply: Callable[[Memory], Memory]) -> Memory:
        """Rewrite one memory with `apply(current)`; unknown frontmatter keys are kept."""
        with self._lock():
            only_claimant(self.directory, parse_memory_id(memory_id))
            current = self.get(memory_id)  # raises for an unparsable file: never rewritten
            updated = apply(current)
            updated = replace(updated, content_hash=content_hash(updated.body), stale_hash=None)
            self._write(updated)
            self.scan()
        return self.get(memory_id)

    def delete(self, memory_id: str) -> tuple[Path, ...]:
        """Remove every file claiming the id (its canonical file and any other spelling), so
        the memory is gone from the tree, not only from listings. Returns their paths."""
        with self._lock():
            paths = self.claimants(memory_id)
            if not paths:
                raise MemoryNotFound(parse_memory_id(memory_id))
            remove_files(paths)
        return paths

    def remove(self, ids: Sequence[str], before: Callable[[list[Memory]], None]) -> list[Memory]:
        """Delete memories in one step under the store lock, after `before(memories)` (which
        remembers rejected hashes: a crash in between keeps a file, never loses a decision).
        Every id is read first: a missing or unparsable one raises and nothing changes."""
        with self._lock():
            memories = [self.get(memory_id) for memory_id in dict.fromkeys(ids)]
            before(memories)
            for memory in memories:
                remove_files(self.claimants(memory.id))  # every spelling of its id
            self.scan()
        return memories

    def _write(self, memory: Memory) -> None:
        assert memory.path is not None
        write_text_atomic(memory.path, render_memory(memory))

    def _lock(self) -> contextlib.AbstractContextManager[None]:
        return held_lock(self.lock_path, timeout=self.lock_timeout, what="the store lock")


def _holder(
    memories: Sequence[Memory], digest: str, paraphrase_of: ParaphraseOf | None
) -> Created | None:
    """The memory among `memories` that already holds a draft's fact: the same body, or (with
    `paraphrase_of`) the same fact in other words."""
    for memory in memories:
        if memory.content_hash == digest:
            return Created(memory, created=False)
    if paraphrase_of is not None and (said := paraphrase_of(memories)) is not None:
        return Created(said, created=False, paraphrase=True)
    return None


def _state(memories: Sequence[Memory]) -> frozenset[tuple[str, str]]:
    """What a paraphrase check was decided on: which memories, with which bodies."""
    return frozenset((memory.id, memory.content_hash) for memory in memories)


def _from_draft(
    store: MemoryStore,
    memory_id: str,
    draft: Draft,
    digest: str,
    extra: Mapping[str, Any],
) -> Memory:
    """The memory `draft` becomes as file `memory_id` of `store` (`digest`: its body's)."""
    return Memory(
        id=memory_id,
        subject=draft.subject,
        body=draft.body,
        keywords=draft.keywords,
        applies_to=draft.applies_to,
        occurred_at=draft.occurred_at,
        content_hash=digest,
        source=draft.source,
        kind=store.kind,
        commit=draft.commit,
        branch=draft.branch,
        session=draft.session,
        files=draft.files,
        unreviewed=draft.unreviewed,
        extra=extra,
        path=store.path_of(memory_id),
    )


def _modified_at(path: Path) -> datetime:
    try:
        return datetime.fromtimestamp(path.lstat().st_mtime, UTC)
    except OSError:
        return datetime.fromtimestamp(0, UTC)
