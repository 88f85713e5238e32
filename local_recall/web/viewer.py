"""What the browser asks for, as calls on the library: `Viewer` maps each view and action of the
page onto `Recall` (list, get, update, delete, review, staleness, consolidation) and the one
search contract (`SearchQuery` → `SearchResult`), returning JSON-ready values. No HTTP here
(app.py translates), no decisions (shapes.py, and the library's own).

Library calls are serialised by one lock: a `Recall` and its stores are not meant for
concurrent use, and one person's browser sends few requests. Searches go through `search`, which
the daemon points at its warm query side (its own lock) so a search never waits for an edit."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from local_recall.errors import InvalidInput, MemoryNotFound, RecallError
from local_recall.learning.usage_log import read_outcomes
from local_recall.lifecycle.git_facts import is_tracked
from local_recall.lifecycle.staleness import Stale
from local_recall.memory.id_prefix import resolve_id
from local_recall.memory.model import Memory, parse_memory_id
from local_recall.recall import Recall
from local_recall.repo.files import read_bytes_nofollow
from local_recall.search.limits import MAX_LIMIT
from local_recall.search.query import SearchQuery, SearchResult, check_query_text
from local_recall.web.render import render_markdown
from local_recall.web.shapes import (
    ListFilter,
    file_view_path,
    fingerprint,
    list_page,
    matches,
    memory_row,
    named_files,
    parse_list_filter,
    provenance,
    split_keywords,
    usage_counts,
)
from local_recall.web.stats import extraction_warning, gather_stats
from local_recall.web.transcript import session_turns

MAX_FILE_VIEW_BYTES = 512_000
Usage = Mapping[str, dict[str, int]] | None  # memory id -> how this user's sessions used it


def usage_of(recall: Recall) -> dict[str, dict[str, int]]:
    """How this user's sessions used each memory, from their record in state/ (bounded, bad
    lines skipped): what a memory's page and the review queue show."""
    return usage_counts(read_outcomes(recall.layout))


STATE_SECONDS = 30.0
_FRONTMATTER = re.compile(
    r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S
)

Search = Callable[[SearchQuery], SearchResult]


class EditConflict(RecallError):
    """The memory changed on disk after the editor opened it: nothing was written."""


class Viewer:
    def __init__(self, recall: Recall, search: Search | None = None) -> None:
        self.recall = recall
        self.lock = threading.RLock()
        self._search = search or (lambda query: recall.query(query, sync=False))
        self._cache: tuple[list[Memory], dict[str, Stale]] | None = None
        self._cache_at = 0.0

    # --- reading --------------------------------------------------------------------------

    def _state(self) -> tuple[list[Memory], dict[str, Stale]]:
        """Every memory and why each stale one is, kept between requests: at 10k memories a
        store scan and the staleness check take ~0.5 s each, a page should not. Dropped by
        `changed()` (the daemon calls it after each re-index), by the viewer's own writes, and
        after STATE_SECONDS (a commit can make a memory stale without touching its file)."""
        with self.lock:
            if self._cache is None or time.monotonic() - self._cache_at > STATE_SECONDS:
                memories = [*self.recall.memories.scan().memories]
                memories += self.recall.thinking.scan().memories
                try:
                    stale = {memory.id: why for memory, why in self.recall.stale_memories()}
                except RecallError:  # not a git repository, no git: nothing is known stale
                    stale = {}
                self._cache, self._cache_at = (memories, stale), time.monotonic()
            return self._cache

    def stale(self) -> dict[str, Stale]:
        return self._state()[1]

    def changed(self) -> None:
        """The memory files changed: the next request reads them again."""
        with self.lock:
            self._cache = None

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """A change through the viewer: serialised, and the cached state dropped after."""
        with self.lock:
            try:
                yield
            finally:
                self._cache = None

    def memories(self, params: Mapping[str, str]) -> dict[str, Any]:
        """A page of the list (newest first), or the hits of a search when `q` is given."""
        wanted = parse_list_filter(params)
        text = (params.get("q") or "").strip()
        if text:
            return self._search_page(check_query_text(text), params.get("mode") or "hybrid", wanted)
        memories, stale = self._state()
        page = list_page(memories, stale, wanted)
        return {
            "total": page.total,
            "offset": wanted.offset,
            "limit": wanted.limit,
            "rows": list(page.rows),
            "search": None,
        }

    def _search_page(self, text: str, mode: str, wanted: ListFilter) -> dict[str, Any]:
        query = SearchQuery(
            text,
            mode=mode,
            scope=wanted.scope,
            include_global=wanted.scope is None,
            since=wanted.since,
            until=wanted.until,
            limit=MAX_LIMIT,
            kind=wanted.kind,
        )
        result = self._search(query)
        with self.lock:
            stale = self.stale()
        hits = [hit for hit in result.hits if matches(hit.memory, stale.get(hit.id), wanted)]
        rows = []
        for hit in hits[wanted.offset : wanted.offset + wanted.limit]:
            row = memory_row(hit.memory, stale.get(hit.id))
            row["score"] = round(hit.score, 4)
            row["snippet"] = hit.snippet
            rows.append(row)
        return {
            "total": len(hits),
            "offset": wanted.offset,
            "limit": wanted.limit,
            "rows": rows,
            "search": {"degraded_reason": result.degraded_reason, "signals": sorted(result.ran)},
        }

    def _get(self, memory_id: str) -> Memory:
        try:
            return self.recall.get(memory_id)  # a full id or a unique prefix (Recall.resolve_id)
        except MemoryNotFound:
            thinking = self.recall.thinking
            return thinking.get(resolve_id(memory_id, lambda: thinking.scan().memories))

    def memory(self, memory_id: str) -> dict[str, Any]:
        """One memory: the row, its body as markdown and as safe HTML, the frontmatter as
        written in the file, its provenance, why it is stale."""
        with self.lock:
            memory = self._get(memory_id)
            stale = self.stale().get(memory.id)
        return self.detail(memory, stale, usage_of(self.recall))

    def detail(self, memory: Memory, stale: Stale | None, usage: Usage = None) -> dict[str, Any]:
        data = memory_row(memory, stale)
        data.update(
            usage=(usage or {}).get(memory.id),
            body=memory.body,
            body_html=render_markdown(memory.body),
            frontmatter=_frontmatter_text(memory.path),
            provenance=provenance(memory),
            path=_relative(memory.path, self.recall.root),
            fingerprint=fingerprint(memory),
            editable=memory.kind == "episodic",
            duplicates=[_relative(p, self.recall.root) for p in self._duplicates(memory)],
            moved=self.recall.lifecycle.moves().get(memory.id),  # [old, new]: a renamed anchor
        )
        return data

    def _duplicates(self, memory: Memory) -> tuple[Path, ...]:
        """Other files claiming this memory's id (shown on its page; an edit is refused)."""
        if memory.kind != "episodic":
            return ()
        return self.recall.duplicates(memory.id)

    def transcript(self, memory_id: str) -> dict[str, Any]:
        """The source session's turns nearest the memory, while the transcript exists."""
        with self.lock:
            memory = self._get(memory_id)
        return session_turns(self.recall, memory)

    # --- changing ---------------------------------------------------------------------------

    def update(self, memory_id: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Write an edit through the library (validation and redaction apply). Refused, with
        nothing written, when the memory changed since the editor opened it."""
        subject, body = _text(fields, "subject"), _text(fields, "body")
        keywords, scope = _text(fields, "keywords"), _text(fields, "scope")
        with self.writing():
            current = self.recall.get(memory_id)
            if fields.get("fingerprint") != fingerprint(current):
                raise EditConflict(
                    "this memory changed on disk since you opened it; your text is kept: "
                    "copy it, reload, and edit again"
                )
            updated = self.recall.update(
                current.id,
                subject=subject,
                body=body,
                keywords=None if keywords is None else split_keywords(keywords),
                scope=scope,
            )
            stale = self.stale().get(updated.id)
        return self.detail(updated, stale)

    def delete(self, memory_id: str) -> dict[str, Any]:
        """Delete the memory: every file claiming its id (any spelling), all named back."""
        with self.writing():
            deleted = self.recall.forget(memory_id)
            paths = [_relative(p, self.recall.root) for p in deleted.paths]
            return {**memory_row(deleted.memory), "paths": paths}

    def accept(self, ids: object) -> list[dict[str, Any]]:
        with self.writing():
            return [memory_row(m) for m in self.recall.accept(_ids(ids))]

    def reject(self, ids: object) -> list[dict[str, Any]]:
        with self.writing():
            return [memory_row(m) for m in self.recall.reject(_ids(ids))]

    def still_true(self, memory_id: str) -> dict[str, Any]:
        with self.writing():
            return memory_row(self.recall.mark_still_true(memory_id))

    # --- the lifecycle queues ---------------------------------------------------------------

    def review_queue(self) -> list[dict[str, Any]]:
        """Unreviewed memories, oldest first (the order they were written)."""
        with self.lock:
            stale = self.stale()
            queue = self.recall.unreviewed()
            usage = usage_of(self.recall)
            return [self.detail(m, stale.get(m.id), usage) for m in queue]

    def stale_list(self) -> list[dict[str, Any]]:
        with self.lock:
            return [self.detail(m, why) for m, why in self.recall.stale_memories()]

    def consolidation(self) -> list[dict[str, Any]]:
        """Each group of near-duplicates: the proposal and its memories side by side."""
        with self.lock:
            groups = []
            for proposal in self.recall.consolidation_plan():
                members = []
                for memory_id in (proposal.keep, *proposal.remove):
                    try:
                        members.append(self.detail(self.recall.get(memory_id), None))
                    except RecallError:
                        continue
                groups.append({"proposal": proposal.to_json(), "memories": members})
            return groups

    def consolidate(self, keep: str, group: object) -> dict[str, Any]:
        """Carry out the current proposal for `group`, keeping `keep`'s text (the person's
        choice). The plan is recomputed: a group that no longer exists is refused."""
        wanted = set(_ids(group))
        keep = parse_memory_id(keep)
        if keep not in wanted:
            raise InvalidInput("keep must be one of the group's memories")
        with self.writing():
            for proposal in self.recall.consolidation_plan():
                if {proposal.keep, *proposal.remove} != wanted:
                    continue
                chosen = proposal
                if keep != proposal.keep:  # the person preferred another one's text
                    other = self.recall.get(keep)
                    chosen = replace(
                        proposal,
                        keep=keep,
                        remove=tuple(sorted(wanted - {keep})),
                        subject=other.subject,
                        body=other.body,
                    )
                self.recall.apply_consolidation([chosen])
                return {"kept": keep, "removed": sorted(wanted - {keep})}
        raise InvalidInput("this group is no longer proposed (the memories changed): reload")

    # --- other views --------------------------------------------------------------------------

    def counts(self) -> dict[str, Any]:
        """For the navigation bar, on every page: how many wait for review, how many are stale,
        and the warning a session start gives while extraction fails ("" when none)."""
        memories, stale = self._state()
        return {
            "unreviewed": sum(1 for m in memories if m.unreviewed and m.kind == "episodic"),
            "stale": sum(1 for m in memories if m.id in stale),
            "extraction_warning": extraction_warning(self.recall),
        }

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return gather_stats(self.recall, *self._state())

    def file(self, relative: str) -> dict[str, Any]:
        """A repository file a memory names (`read_named_file`)."""
        with self.lock:
            memories = self._state()[0]
        return read_named_file(self.recall, memories, relative)


def read_named_file(recall: Recall, memories: list[Memory], relative: str) -> dict[str, Any]:
    """A repository file a memory names, as text (read-only). Only a file git tracks and
    an anchor or `file:` scope of a memory names: never `.env` or another ignored or
    untracked file, whatever the path asked for; never through a symbolic link."""
    path = file_view_path(relative)
    renamed = {new for _old, new in recall.lifecycle.moves().values()}  # links follow renames
    if path not in named_files(memories) and path not in renamed:
        raise InvalidInput(f"{relative!r} is not a file a memory names")
    if not is_tracked(recall.root, path, recall.settings.environ):
        raise InvalidInput(f"{relative!r} is not a file git tracks")
    try:
        data = read_bytes_nofollow(recall.root / path, MAX_FILE_VIEW_BYTES)
    except FileNotFoundError:
        raise MemoryNotFound(f"{relative} does not exist (any more)") from None
    except OSError as exc:
        if exc.errno != errno.EFBIG:
            raise InvalidInput(f"{relative!r} cannot be shown: {exc.strerror}") from None
        data = _head(recall.root / path, MAX_FILE_VIEW_BYTES + 1)
    return {
        "path": path,
        "text": data[:MAX_FILE_VIEW_BYTES].decode("utf-8", errors="replace"),
        "truncated": len(data) > MAX_FILE_VIEW_BYTES,
    }


def _head(path: Path, size: int) -> bytes:
    """The start of a large regular file (already checked: no symlink on its way)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        return handle.read(size)


def _text(fields: Mapping[str, Any], name: str) -> str | None:
    value = fields.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be text")
    return value


def _ids(values: object) -> list[str]:
    if not isinstance(values, list) or not values:
        raise InvalidInput("give a list of memory ids")
    return [parse_memory_id(str(v)) for v in values]


def _relative(path: Path | None, root: Path) -> str | None:
    if path is None:
        return None
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _frontmatter_text(path: Path | None) -> str:
    """The YAML header as the file holds it (shown as text, never interpreted)."""
    if path is None:
        return ""
    try:
        with path.open("rb") as handle:
            head = handle.read(64_000).decode("utf-8", errors="replace")
    except OSError:
        return ""
    found = _FRONTMATTER.match(head)
    return found.group(1) if found else ""
