"""Carrying out an index plan: embed what changed, rewrite metadata, drop what is gone.

    report = sync_memories(index, memories, embedder, progress=lambda done, total: ...)

`plan.plan_index_sync` decides; this module reads the embedder, writes the tables through
`MemoryIndex` and reports. It never draws progress: a caller that wants a bar passes a
`ProgressCallback` (the CLI draws one with rich).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from local_recall.errors import EmbedderUnavailable, IndexUnavailable
from local_recall.memory.keywords import extract_keywords
from local_recall.memory.model import Memory
from local_recall.repo.locks import held_lock
from local_recall.search.changes import Changes
from local_recall.search.embedders import Embedder, canonical_ollama_model, embedder_fingerprint
from local_recall.search.index.plan import (
    INDEX_FORMAT,
    PENDING,
    Fingerprint,
    IndexMeta,
    IndexPlan,
    decide_rebuild,
    embedded_text,
    fts_document,
    passages,
    plan_index_sync,
    row_key,
)
from local_recall.search.index.row_copy import Stamp
from local_recall.search.index.rows import MemoryIndex

log = logging.getLogger(__name__)

EMBED_BATCH: Final = 256  # rows embedded and written per step: progress and crash-safety
_LOCK_TIMEOUT_SECONDS: Final = 300.0

ProgressCallback = Callable[[int, int], None]  # (done, total)


@dataclass(frozen=True, slots=True)
class IndexReport:
    """What one sync did. `fallback` says why vectors could not be made (None: all fine)."""

    embedded: int
    updated: int
    removed: int
    total: int
    rebuilt: bool
    seconds: float
    fallback: str | None = None
    rebuild_reason: str | None = None
    # the memories whose vectors were written or removed (None: all of them, a rebuild): what
    # the relevance cache appends (relevance_cache.py)
    vectors_changed: tuple[str, ...] | None = None
    # the index's state before and after this sync's writes (None: not known): which of them
    # the relevance cache follows says whether it can take these rows (relevance_cache.py)
    stamps: tuple[Stamp | None, Stamp | None] = (None, None)

    @property
    def changed(self) -> bool:
        """Whether this sync wrote anything to the index."""
        return self.rebuilt or bool(self.embedded or self.updated or self.removed)

    def to_json(self) -> dict[str, Any]:
        return {
            "embedded": self.embedded,
            "updated": self.updated,
            "removed": self.removed,
            "total": self.total,
            "rebuilt": self.rebuilt,
            "seconds": round(self.seconds, 3),
            "fallback": self.fallback,
            "rebuild_reason": self.rebuild_reason,
        }


def embedder_identity(embedder: Embedder) -> str:
    """provider:model without the dimension: known without loading or calling the model."""
    model = canonical_ollama_model(embedder.model) if embedder.name == "ollama" else embedder.model
    return f"{embedder.name}:{model}"


def build_row(memory: Memory, fp: Fingerprint, vector: Any, *, has_vector: bool) -> dict[str, Any]:
    keywords = memory.keywords or extract_keywords(f"{memory.subject}\n{memory.body}")
    return {
        "key": row_key(memory.kind, memory.id),
        "id": memory.id,
        "kind": memory.kind,
        "subject": memory.subject,
        "body": memory.body,
        "keywords": list(keywords),
        "keywords_text": " ; ".join(keywords),
        "applies_to": memory.applies_to,
        "occurred_at": memory.occurred_at.timestamp(),
        "content_hash": memory.content_hash,
        "meta_fp": fp.meta,
        "document": fts_document(memory, keywords),
        # A row without a real vector is marked pending, so a sync that can embed embeds it.
        "text_fp": fp.text if has_vector else PENDING + fp.text,
        "embedded": embedded_text(memory),
        "has_vector": has_vector,
        "vector": vector,
    }


def sync_memories(
    index: MemoryIndex,
    memories: Sequence[Memory] | Mapping[str, Memory],
    embedder: Embedder,
    *,
    rebuild: bool = False,
    progress: ProgressCallback | None = None,
    changes: Changes | None = None,
) -> IndexReport:
    """Bring the index in line with `memories` (every readable memory of every kind; a
    mapping by `row_key`, never changed afterwards, or a sequence). `changes`: from the
    memories of the last sync (the searcher's), else found by identity (changes.py).

    Never raises for a broken index (it is rebuilt) or an unreachable embedder (rows are
    written text-only and `fallback` says why); StorageError only if the lock cannot be had."""
    started = time.perf_counter()
    by_key = memories if isinstance(memories, Mapping) else _by_key(memories)
    with index_locked(index.lock_path):
        try:
            return _sync_locked(index, by_key, changes, embedder, rebuild, progress, started)
        except IndexUnavailable as exc:
            log.warning("index unusable (%s): rebuilding it from the memory files", exc)
            index.destroy()
            why = f"index unusable: {exc}"
            return _sync_locked(index, by_key, None, embedder, True, progress, started, why)


def _by_key(memories: Sequence[Memory]) -> dict[str, Memory]:
    return {row_key(m.kind, m.id): m for m in memories}


def _sync_locked(
    index: MemoryIndex,
    by_key: Mapping[str, Memory],
    changes: Changes | None,
    embedder: Embedder,
    rebuild: bool,
    progress: ProgressCallback | None,
    started: float,
    reason: str | None = None,
) -> IndexReport:
    fallback: str | None = None
    try:
        current: str | None = embedder_fingerprint(embedder)
        dim = embedder.dim
    except EmbedderUnavailable as exc:
        current, fallback = None, str(exc)
        dim = 0
    identity = embedder_identity(embedder)
    meta = index.read_meta()
    if not index.exists():
        meta = None
    before = _stamp(index) if meta is not None else None
    why = (
        reason
        or ("asked for" if rebuild else None)
        or decide_rebuild(meta, fingerprint=current, identity=identity)
    )
    on_disk = index.fingerprints_of(by_key, changes)
    step = index.prints.step
    # Our last sync left the table in line with the memories this step starts from, and
    # nobody wrote since: only the memories that changed can be out of line (a save at
    # 100,000 memories plans one memory, not every row).
    in_line = why is None and step is not None and index.in_line(current, step.before)
    if why is not None:
        if current is None:
            # No vectors can be made: keep the known dimension if any, else a 1-wide column.
            dim = meta.dim if meta is not None and meta.identity == identity else 1
        new_meta = IndexMeta(INDEX_FORMAT, current, identity, dim)
        index.create(new_meta)
        indexed: Mapping[str, Fingerprint] = {}
        log.info("index rebuild: %s", why)
    elif in_line:
        assert meta is not None and step is not None
        dim = meta.dim
        indexed = index.indexed_of(step.keys)
    else:
        assert meta is not None
        dim = meta.dim
        indexed = index.fingerprints()
    if current is None:  # no embedder: a pending row of unchanged text needs nothing
        indexed = {
            k: Fingerprint(fp.text.removeprefix(PENDING), fp.meta) for k, fp in indexed.items()
        }
    if in_line:
        assert step is not None
        plan = plan_index_sync({k: on_disk[k] for k in step.changed}, indexed)
    else:
        plan = plan_index_sync(on_disk, indexed)
    embedded, fallback = _carry_out(
        index,
        plan,
        by_key,
        on_disk,
        indexed,
        embedder,
        current is not None,
        dim,
        fallback,
        progress,
    )
    written = len(plan.to_embed) + len(plan.to_update) + len(plan.to_remove)
    if written or why is not None:
        index.maintain(written=written)
        index.has_passages(refresh=True)
        if not (in_line and fallback is None):
            index.has_pending(refresh=True)
    # every row now has the fingerprints of `by_key` and a vector (unless the embedder failed)
    index.mark_in_line(current if fallback is None else None, by_key)
    return IndexReport(
        embedded=embedded,
        updated=len(plan.to_update),
        removed=len(plan.to_remove),
        total=len(by_key),
        rebuilt=why is not None,
        seconds=time.perf_counter() - started,
        fallback=fallback,
        rebuild_reason=why,
        vectors_changed=None if why is not None else (*plan.to_embed, *plan.to_remove),
        stamps=(before, _stamp(index)),
    )


def _stamp(index: MemoryIndex) -> Stamp | None:
    """The index's state (row_copy.Stamp); None when it cannot be read."""
    try:
        return index.stamp()
    except IndexUnavailable:
        return None


def _carry_out(
    index: MemoryIndex,
    plan: IndexPlan,
    by_key: Mapping[str, Memory],
    on_disk: Mapping[str, Fingerprint],
    indexed: Mapping[str, Fingerprint],
    embedder: Embedder,
    can_embed: bool,
    dim: int,
    fallback: str | None,
    progress: ProgressCallback | None,
) -> tuple[int, str | None]:
    import numpy as np

    index.remove(list(plan.to_remove))
    index.update_metadata(
        [build_row(by_key[k], on_disk[k], None, has_vector=True) for k in plan.to_update]
    )
    embedded = 0
    total = len(plan.to_embed)
    if progress is not None and total:
        progress(0, total)
    for start in range(0, total, EMBED_BATCH):
        keys = plan.to_embed[start : start + EMBED_BATCH]
        batch = [by_key[k] for k in keys]
        vectors: Any = None
        passage_rows: list[dict[str, Any]] = []
        if can_embed:
            cut = [passages(m) for m in batch]
            texts = [embedded_text(m) for m in batch] + [p for ps in cut for p in ps]
            try:
                matrix = embedder.embed_documents(texts)
            except EmbedderUnavailable as exc:
                log.warning("embedder failed during sync: %s; writing text-only rows", exc)
                can_embed, fallback = False, str(exc)
            else:
                vectors = matrix[: len(batch)]
                at = len(batch)
                for k, m, ps in zip(keys, batch, cut, strict=True):
                    for row in matrix[at : at + len(ps)]:
                        passage_rows.append({"key": k, "kind": m.kind, "vector": row})
                    at += len(ps)
        if vectors is None:
            vectors = np.zeros((len(batch), dim), dtype=np.float32)
        else:
            embedded += len(batch)
        rows = [
            build_row(m, on_disk[k], vectors[i], has_vector=can_embed)
            for i, (k, m) in enumerate(zip(keys, batch, strict=True))
        ]
        index.write(rows, passage_rows, replace=any(k in indexed for k in keys))
        if progress is not None:
            progress(min(start + EMBED_BATCH, total), total)
    return embedded, fallback


def index_locked(lock_path: Path) -> contextlib.AbstractContextManager[None]:
    """One writer at a time across processes (CLI, daemon, MCP server)."""
    return held_lock(lock_path, timeout=_LOCK_TIMEOUT_SECONDS, what="the index lock")
