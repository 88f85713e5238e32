"""Memory files on disk: list, get, create (idempotent across processes), update, delete.

The folder of `<uuid>.md` files is the source of truth. A catalog in the state folder caches
what each file parsed to, keyed by (inode, mtime_ns, size) — atomic writes give every new
version a new inode — so listing 10k memories does not re-parse 10k YAML headers. The catalog is
only a cache: a missing or broken one is rebuilt from the files.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from filelock import FileLock
from filelock import Timeout as LockTimeout

from local_recall.errors import InvalidMemoryFile, MemoryNotFound, StorageError
from local_recall.memory.model import (
    Memory,
    content_hash,
    format_timestamp,
    parse_memory_id,
    parse_memory_text,
    parse_timestamp,
    render_memory,
    scope_matches,
)
from local_recall.repo.files import remove_stale_temp_files, write_bytes_atomic, write_text_atomic

log = logging.getLogger(__name__)

_CATALOG_VERSION = 1
_LOCK_TIMEOUT_SECONDS = 60.0
MAX_FILE_BYTES = 2_000_000  # a memory body is capped at 1 MB; anything far larger is not ours

StatKey = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class Scan:
    """Everything in the folder: the memories that parse, and the files that do not."""

    memories: tuple[Memory, ...]
    problems: tuple[InvalidMemoryFile, ...]


@dataclass(frozen=True, slots=True)
class Created:
    memory: Memory
    created: bool  # False: the same content already existed and that memory is returned


@dataclass(frozen=True, slots=True)
class Draft:
    """A validated, redacted memory not yet on disk (built by `local_recall.memory.drafts`)."""

    subject: str
    body: str
    keywords: tuple[str, ...]
    applies_to: str
    occurred_at: datetime
    source: str | None = None
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


class MemoryStore:
    def __init__(
        self,
        directory: Path,
        state_dir: Path,
        *,
        kind: str = "episodic",
        new_id: Callable[[], str],
    ) -> None:
        self.directory = directory
        self.kind = kind
        self._state_dir = state_dir
        self._catalog_path = state_dir / f"catalog-{kind}.json"
        self._lock_path = state_dir / f"store-{kind}.lock"
        self._new_id = new_id
        self._catalog_cache: dict[str, dict[str, Any]] = {}
        self._catalog_stamp: StatKey | None = None
        # name -> (stat key, Memory): a long-lived process re-scanning an unchanged folder builds
        # no objects at all (at 100k files, a Path + Memory per file cost ~2 s per scan).
        self._memo: dict[str, tuple[StatKey, Memory]] = {}

    # --- reading ------------------------------------------------------------------------------

    def path_of(self, memory_id: str) -> Path:
        return self.directory / f"{parse_memory_id(memory_id)}.md"

    def get(self, memory_id: str) -> Memory:
        path = self.path_of(memory_id)
        try:
            text = _read_memory_file(path)
        except FileNotFoundError:
            raise MemoryNotFound(parse_memory_id(memory_id)) from None
        return parse_memory_text(text, path, kind=self.kind)

    def scan(self) -> Scan:
        """Every memory file, parsed through the catalog cache. Never raises for a bad file."""
        catalog = self._load_catalog()
        fresh: dict[str, dict[str, Any]] = {}
        memories: list[Memory] = []
        problems: list[InvalidMemoryFile] = []
        memo: dict[str, tuple[StatKey, Memory]] = {}
        changed = False
        for name, key in self._files():
            cached = catalog.get(name)
            if cached is not None and tuple(cached["stat"]) == key:
                entry = cached
            else:
                entry = self._parse_entry(self.directory / name, key)
                changed = True
            fresh[name] = entry
            if "error" in entry:
                problems.append(InvalidMemoryFile(self.directory / name, entry["error"]))
                continue
            known = self._memo.get(name)
            if known is not None and known[0] == key:
                memory = known[1]
            else:
                memory = _memory_from_entry(entry["memory"], self.directory / name, self.kind)
            memo[name] = (key, memory)
            memories.append(memory)
        self._memo = memo
        if changed or len(fresh) != len(catalog):
            self._save_catalog(fresh)
        memories.sort(key=lambda m: (m.occurred_at, m.id))
        problems.sort(key=lambda p: str(p.path))
        return Scan(tuple(memories), tuple(problems))

    def _files(self) -> Iterator[tuple[str, StatKey]]:
        try:
            entries = list(os.scandir(self.directory))
        except FileNotFoundError:
            return
        for entry in entries:
            if not entry.name.endswith(".md") or entry.name.startswith("."):
                continue
            try:
                st = entry.stat()
            except OSError:
                continue  # deleted between listing and stat
            if not entry.is_file():
                continue
            yield entry.name, (st.st_ino, st.st_mtime_ns, st.st_size)

    def _parse_entry(self, path: Path, key: StatKey) -> dict[str, Any]:
        try:
            memory = parse_memory_text(_read_memory_file(path), path, kind=self.kind)
        except InvalidMemoryFile as exc:
            log.warning("skipping unreadable memory file %s: %s", path, exc.reason)
            return {"stat": list(key), "error": exc.reason}
        except (OSError, UnicodeDecodeError) as exc:
            return {"stat": list(key), "error": f"cannot read: {exc}"}
        return {"stat": list(key), "memory": _entry_from_memory(memory)}

    # --- writing ------------------------------------------------------------------------------

    def create(self, draft: Draft) -> Created:
        """Write a new memory unless one with the same normalised body exists (then return it).

        The check and the write happen under one cross-process lock, so 20 processes adding the
        same memory at once leave exactly one file."""
        digest = content_hash(draft.body)
        with self._lock():
            for memory in self.scan().memories:
                if memory.content_hash == digest:
                    return Created(memory, created=False)
            memory_id = self._new_id()
            path = self.path_of(memory_id)
            memory = Memory(
                id=memory_id,
                subject=draft.subject,
                body=draft.body,
                keywords=draft.keywords,
                applies_to=draft.applies_to,
                occurred_at=draft.occurred_at,
                content_hash=digest,
                source=draft.source,
                kind=self.kind,
                extra=draft.extra,
                path=path,
            )
            self._write(memory)
            remove_stale_temp_files(self.directory)
            written = self._record_new_file(path)
        return Created(written, created=True)

    def _record_new_file(self, path: Path) -> Memory:
        """Add a file this process just wrote to the catalog without re-scanning the folder
        (the scan before the write was fresh, under the same lock)."""
        st = path.stat()
        key = (st.st_ino, st.st_mtime_ns, st.st_size)
        entry = self._parse_entry(path, key)
        if "error" in entry:  # cannot happen for a file we rendered; never hide it if it does
            raise StorageError(f"{path}: written but does not parse: {entry['error']}")
        memory = _memory_from_entry(entry["memory"], path, self.kind)
        catalog = dict(self._load_catalog())
        catalog[path.name] = entry
        self._save_catalog(catalog)
        self._memo[path.name] = (key, memory)
        return memory

    def find_by_hash(self, digest: str) -> Memory | None:
        return next((m for m in self.scan().memories if m.content_hash == digest), None)

    def update(self, memory_id: str, apply: Callable[[Memory], Memory]) -> Memory:
        """Rewrite one memory with `apply(current)`; unknown frontmatter keys are kept."""
        with self._lock():
            current = self.get(memory_id)  # raises for an unparsable file: never rewritten
            updated = apply(current)
            updated = replace(updated, content_hash=content_hash(updated.body), stale_hash=None)
            self._write(updated)
            self.scan()
        return self.get(memory_id)

    def delete(self, memory_id: str) -> Path:
        path = self.path_of(memory_id)
        with self._lock():
            try:
                path.unlink()
            except FileNotFoundError:
                raise MemoryNotFound(parse_memory_id(memory_id)) from None
            except OSError as exc:
                raise StorageError(f"cannot delete {path}: {exc.strerror or exc}") from None
        return path

    def _write(self, memory: Memory) -> None:
        assert memory.path is not None
        write_text_atomic(memory.path, render_memory(memory))

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        try:
            self._state_dir.mkdir(parents=True, exist_ok=True)
            lock = FileLock(str(self._lock_path), timeout=_LOCK_TIMEOUT_SECONDS)
            lock.acquire()
        except LockTimeout:
            raise StorageError(f"timed out waiting for the store lock {self._lock_path}") from None
        except OSError as exc:
            raise StorageError(f"cannot lock {self._lock_path}: {exc.strerror or exc}") from None
        try:
            yield
        finally:
            lock.release()

    # --- catalog ------------------------------------------------------------------------------

    def _load_catalog(self) -> dict[str, dict[str, Any]]:
        """The catalog, from memory when the file has not changed since this process read or
        wrote it (a long-lived daemon then pays only for the stats)."""
        try:
            st = self._catalog_path.stat()
        except OSError:
            return {}
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        if stamp == self._catalog_stamp:
            return self._catalog_cache
        try:
            data = json.loads(self._catalog_path.read_bytes())
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != _CATALOG_VERSION:
            return {}
        entries = data.get("entries")
        if not isinstance(entries, dict):
            return {}
        self._catalog_cache, self._catalog_stamp = entries, stamp
        return entries

    def _save_catalog(self, entries: dict[str, dict[str, Any]]) -> None:
        payload = json.dumps({"version": _CATALOG_VERSION, "entries": entries}).encode()
        try:
            write_bytes_atomic(self._catalog_path, payload)
            st = self._catalog_path.stat()
        except (StorageError, OSError) as exc:  # a cache: a read-only checkout still lists
            log.debug("catalog not saved: %s", exc)
            return
        self._catalog_cache, self._catalog_stamp = entries, (st.st_ino, st.st_mtime_ns, st.st_size)


def _read_memory_file(path: Path) -> str:
    with path.open("rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise InvalidMemoryFile(path, f"file is larger than {MAX_FILE_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidMemoryFile(path, "not UTF-8 text") from None


def _entry_from_memory(memory: Memory) -> dict[str, Any]:
    return {
        "id": memory.id,
        "subject": memory.subject,
        "body": memory.body,
        "keywords": list(memory.keywords),
        "applies_to": memory.applies_to,
        "occurred_at": format_timestamp(memory.occurred_at),
        "occurred_at_exact": memory.occurred_at.isoformat(),
        "content_hash": memory.content_hash,
        "source": memory.source,
        "extra": _json_safe(dict(memory.extra)),
        "stale_hash": memory.stale_hash,
    }


def _memory_from_entry(entry: Mapping[str, Any], path: Path, kind: str) -> Memory:
    return Memory(
        id=entry["id"],
        subject=entry["subject"],
        body=entry["body"],
        keywords=tuple(entry["keywords"]),
        applies_to=entry["applies_to"],
        occurred_at=parse_timestamp(entry["occurred_at_exact"]),
        content_hash=entry["content_hash"],
        source=entry["source"],
        kind=kind,
        extra=MappingProxyType(entry["extra"]),
        path=path,
        stale_hash=entry["stale_hash"],
    )


def _json_safe(value: Any) -> Any:
    """Person-added frontmatter may hold dates; the catalog stores them as ISO strings."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def select_memories(
    memories: Sequence[Memory],
    *,
    scope: str | None = None,
    include_global: bool = True,
    keyword: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    newest_first: bool = False,
    limit: int | None = None,
) -> list[Memory]:
    """Filter and order memories (a pure decision; the store only supplies the list)."""
    wanted_keyword = keyword.lower() if keyword else None
    chosen = [
        m
        for m in memories
        if (scope is None or scope_matches(m.applies_to, scope, include_global=include_global))
        and (wanted_keyword is None or wanted_keyword in (k.lower() for k in m.keywords))
        and (since is None or m.occurred_at >= since)
        and (until is None or m.occurred_at <= until)
    ]
    chosen.sort(key=lambda m: (m.occurred_at, m.id), reverse=newest_first)
    return chosen if limit is None else chosen[:limit]


def utc_now() -> datetime:
    return datetime.now(UTC)
