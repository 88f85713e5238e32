"""Keeping the relevance cache (`state/vectors*`, search/vector_cache.py) in step with the index
after a sync: its log takes the vectors a sync wrote, a whole write replaces it otherwise.

    report = sync_memories(index, memories, embedder)
    write_relevance_cache(index, state_dir, persist_stats, report, compact=True)

The cache says which index state it holds (`vectors.follows`: the table's version and
meta.json's stat, a `Stamp`), and every sync reports the states it moved the index between. A
cache that follows the state before the sync takes the sync's rows on its log; one that follows
the state after it is fresh; any other lags the index — a process was killed between the
index's commit and the cache's, a cache write failed, two syncs crossed — and is written whole.
Without that, a sync that found the index already in line (the killed run had written it) left
edited memories with their old vectors and new ones with none, until the next whole write.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from local_recall.errors import IndexUnavailable, StorageError
from local_recall.repo import base_log
from local_recall.repo.locks import held_lock
from local_recall.search.index.row_copy import Stamp
from local_recall.search.index.rows import MemoryIndex
from local_recall.search.index.sync import IndexReport
from local_recall.search.term_log import TERMS_JSON
from local_recall.search.vector_cache import (
    Header,
    append_vector_cache,
    cache_follows,
    read_header,
    record_follows,
    remove_vector_cache,
    write_vector_cache,
)
from local_recall.search.vector_log import log_paths

log = logging.getLogger(__name__)

CACHE_LOCK: Final = "vectors.lock"
_LOCK_TIMEOUT_SECONDS: Final = 300.0

CacheStep = Literal["fresh", "append", "whole"]


@dataclass(frozen=True, slots=True)
class CachePolicy:
    """When the relevance cache's log is folded into a new base (a whole write): by a sync off
    the save path once the log holds `share` of the base's rows (at least `min_rows`), by any
    sync at `hard_share`. Amortised, a save writes its own rows. A sync that
    changed more than `max_keys` memories writes the whole cache at once."""

    share: float = 0.25
    hard_share: float = 1.0
    min_rows: int = 256
    max_keys: int = 500

    def log_too_long(self, log_rows: int, base_rows: int, *, compact: bool) -> bool:
        share = self.share if compact else self.hard_share
        return base_log.outgrown(log_rows, base_rows, share=share, floor=self.min_rows)


def cache_step(
    follows: Stamp | None,
    stamps: tuple[Stamp | None, Stamp | None],
    vectors_changed: Sequence[str] | None,
    *,
    max_keys: int,
) -> CacheStep:
    """What the cache needs after a sync that moved the index from `stamps[0]` to `stamps[1]`
    (None: not known), the cache following `follows` (None: not known, or no cache).
    `vectors_changed`: the memories whose vectors the sync wrote or removed (None: all, a
    rebuild). Pure."""
    before, after = stamps
    if follows is None or after is None:
        return "whole"
    if follows == after:
        return "fresh"
    if follows == before and vectors_changed is not None and len(vectors_changed) <= max_keys:
        return "append"
    return "whole"  # the cache lags the index: not by this sync's rows alone


def write_relevance_cache(
    index: MemoryIndex,
    state_dir: Path,
    stats: Callable[[bool], None],
    report: IndexReport,
    *,
    compact: bool = False,
    policy: CachePolicy = CachePolicy(),
) -> None:
    """After a sync (`report`): bring the relevance cache in step with the index and persist
    the store's term statistics (vector_cache.py). `stats(compact)` persists the term
    statistics (RelevanceInputs.persist_stats: what changed is appended, term_log.py).
    `compact`: this sync is off the save path, and may fold a long log into a new base. The
    cold hook scores with the cache exactly as the daemon does. Never raises: without a
    cache, the fallback answers with the word-only model."""
    header = read_header(state_dir)
    if not report.changed and header is not None and _fresh(state_dir, header, compact, policy):
        step = cache_step(
            cache_follows(state_dir, header), report.stamps, (), max_keys=policy.max_keys
        )
        if step == "fresh":
            return
    try:
        with held_lock(state_dir / CACHE_LOCK, timeout=_LOCK_TIMEOUT_SECONDS, what="the cache"):
            stats(compact)
            meta = index.read_meta()
            if meta is None or meta.embedder is None or not index.exists():
                remove_vector_cache(state_dir)
                return
            header = read_header(state_dir)  # again, under the lock
            if header is not None and header.embedder != meta.embedder:
                header = None  # another embedder's vectors: written whole
            follows = None if header is None else cache_follows(state_dir, header)
            changed = report.vectors_changed if report.changed else ()
            step = cache_step(follows, report.stamps, changed, max_keys=policy.max_keys)
            if header is not None and step != "whole":
                if step == "fresh" and _fresh(state_dir, header, compact, policy):
                    return
                if step == "append" and changed is not None:
                    after = report.stamps[1]
                    embedder = meta.embedder
                    if _appended(
                        index, state_dir, header, changed, embedder, after, compact, policy
                    ):
                        return
            elif follows is not None and follows not in report.stamps:
                log.info("relevance cache behind the index (a sync did not finish): rewritten")
            write_whole_cache(index, state_dir, meta.embedder)
    except (IndexUnavailable, OSError, ValueError, StorageError) as exc:
        log.warning("relevance cache not written: %s", exc)


def _appended(
    index: MemoryIndex,
    state_dir: Path,
    header: Header,
    changed: Sequence[str],
    embedder: str,
    follows: Stamp | None,
    compact: bool,
    policy: CachePolicy,
) -> bool:
    """Append the changed memories' vectors, the cache then following `follows`; False when a
    whole write is due instead."""
    import numpy as np

    if not changed:  # metadata only: the vectors are the same, the index state is not
        record_follows(state_dir, header.token, follows)
        return True
    held = index.written_vectors(changed)  # what this sync just wrote: not read back
    if held is not None:
        keys, matrix = held
    else:
        keys, matrix = index.vectors(None, keys=changed)
        if index.has_passages():
            more, extra = index.vectors(None, passages=True, keys=changed)
            keys, matrix = keys + more, np.concatenate([matrix, extra]) if more else matrix
    sizes = append_vector_cache(
        state_dir, keys, matrix, covers=changed, embedder=embedder, follows=follows
    )
    if sizes is None:
        return False
    log_rows, base_rows = sizes
    return not policy.log_too_long(log_rows, base_rows, compact=compact)


def write_whole_cache(index: MemoryIndex, state_dir: Path, embedder: str) -> None:
    """The cache written anew from the index, following the index state read first (a write
    in between only makes it look older than it is: the next sync writes it again)."""
    import numpy as np

    follows = index.stamp()
    keys, matrix = index.vectors(None)
    if index.has_passages():
        more, extra = index.vectors(None, passages=True)
        keys, matrix = keys + more, np.concatenate([matrix, extra]) if more else matrix
    write_vector_cache(state_dir, keys, matrix, embedder=embedder, follows=follows)


def _fresh(state_dir: Path, header: Header, compact: bool, policy: CachePolicy) -> bool:
    """The cache and the term statistics are there and (`compact`) the log is short."""
    terms = state_dir / TERMS_JSON
    if not terms.is_file() or terms.is_symlink():  # a planted symlink is replaced, never followed
        return False
    return not (compact and _log_too_long(state_dir, header, compact, policy))


def _log_too_long(state_dir: Path, header: Header, compact: bool, policy: CachePolicy) -> bool:
    rows_path, _ = log_paths(state_dir, header.token)
    try:  # the log's rows from its file's size: no read
        log_rows = rows_path.stat().st_size // (header.dim * 4)
    except OSError:
        return False
    return policy.log_too_long(log_rows, header.rows, compact=compact)
