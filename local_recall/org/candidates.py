"""Org candidates and their scores: the same calibrated relevance as a local memory's.

    found = gather(table, query_vector, terms, depth=20, skip=is_meta_row)
    hits = score_candidates(found, query, stats_of=..., repo_of=...)

Shared by the live search of every dataset (search.py) and the search of the merged local copy
(mirror.py). Every candidate's cosine is the best of its whole-text and passage vectors (exact
dot products, as the local index's cache gives them) and its score `score_hit` over the same
features, with its own repository's term statistics.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from local_recall.memory.model import Memory
from local_recall.org.rows import HIT_COLUMNS, row_memory
from local_recall.search.index.shared import SharedTable
from local_recall.search.relevance import (
    MemoryTerms,
    QueryProfile,
    TermStats,
    extract_features,
    memory_terms,
    term_stats,
)
from local_recall.search.scoring import (
    Signals,
    gather_signals,
    ran_signals,
    score_hit,
    with_features,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa

_MAX_CACHED_TERMS: Final = 200_000


@dataclass(frozen=True, slots=True)
class OrgHit:
    repo: str  # dataset name
    remote: str  # the repository's remote URL as published ("" unknown)
    memory: Memory
    signals: Signals
    score: float


class Scored(NamedTuple):
    hits: list[OrgHit]
    rough: bool  # a repository had no term statistics
    malformed: int  # candidates that were not well-formed memories, left out


@dataclass(frozen=True, slots=True)
class OrgQuery:
    """One search as the org side needs it."""

    profile: QueryProfile
    terms: list[str]
    vector: npt.NDArray[np.float32] | None  # None: words only
    depth: int


@dataclass(slots=True)
class Candidates:
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    vector: dict[str, float] = field(default_factory=dict)  # key → cosine (from the query)
    text: dict[str, float] = field(default_factory=dict)  # key → BM25


def gather(
    table: SharedTable,
    query: OrgQuery,
    *,
    use_vector: bool,
    skip: Callable[[Mapping[str, Any]], bool],
    columns: tuple[str, ...] = HIT_COLUMNS,
) -> Candidates:
    """The nearest rows and the best full-text rows, each with its columns but the vectors,
    and (with a query vector) its best cosine under `COSINE`."""
    found = Candidates()
    if use_vector and query.vector is not None:
        data = table.nearest(query.vector, limit=query.depth + 1, columns=columns)
        for row in _rows(data, query.vector):
            if not skip(row):
                found.rows[row["key"]] = row
                found.vector[row["key"]] = 1.0 - float(row["_distance"])
    if query.terms:
        data = table.matching(query.terms, limit=query.depth, columns=columns)
        for row in _rows(data, query.vector if use_vector else None):
            if not skip(row):
                found.rows.setdefault(row["key"], row)
                found.text[row["key"]] = float(row["_score"])
    return found


COSINE: Final = "_cosine"


def _rows(data: pa.Table, query: npt.NDArray[np.float32] | None) -> list[dict[str, Any]]:
    """Rows as dicts without their vectors (thousands of Python floats each), with the best
    cosine of each row's whole-text and passage vectors computed in numpy."""
    rows: list[dict[str, Any]] = data.drop_columns(["vector", "passages"]).to_pylist()
    if query is None or not rows:
        return rows
    best = best_cosines(data, query)
    for row, cosine in zip(rows, best, strict=True):
        row[COSINE] = cosine
    return rows


def best_cosines(data: pa.Table, query: npt.NDArray[np.float32]) -> list[float | None]:
    """Per row: the best cosine of its whole-text and passage vectors (all unit length)."""
    import numpy as np
    import pyarrow.compute as pc

    q = query.astype(np.float32)
    dim = q.shape[0]
    vectors = data.column("vector").combine_chunks()
    if vectors.type.list_size != dim:
        return [None] * data.num_rows
    flat = vectors.flatten().to_numpy(zero_copy_only=False)
    best = np.asarray(flat, dtype=np.float32).reshape(-1, dim) @ q
    passages = data.column("passages").combine_chunks()
    parents = pc.list_parent_indices(passages).to_numpy(zero_copy_only=False)
    if len(parents):
        inner = pc.list_flatten(passages).flatten().to_numpy(zero_copy_only=False)
        scores = np.asarray(inner, dtype=np.float32).reshape(-1, dim) @ q
        np.maximum.at(best, parents, scores)
    return [float(v) for v in best]


class TermsCache:
    """Memory terms (~80 µs each) by (repo, key, what they are made of): kept between searches."""

    def __init__(self) -> None:
        self._terms: dict[tuple[str, str, str], MemoryTerms] = {}
        self._lock = threading.Lock()

    def of(self, repo: str, key: str, memory: Memory) -> MemoryTerms:
        basis = "\x00".join([memory.content_hash, memory.subject, *memory.keywords])
        with self._lock:
            found = self._terms.get((repo, key, basis))
        if found is None:
            found = memory_terms(memory.subject, memory.keywords, memory.body)
            with self._lock:
                if len(self._terms) > _MAX_CACHED_TERMS:
                    self._terms.clear()
                self._terms[(repo, key, basis)] = found
        return found


def score_candidates(
    found: Candidates,
    query: OrgQuery,
    *,
    use_vector: bool,
    stats_of: Callable[[str], TermStats | None],
    repo_of: Callable[[Mapping[str, Any]], str],
    remote_of: Callable[[str], str],
    terms: TermsCache,
) -> Scored:
    """Each candidate's calibrated score; also whether a repository had no statistics (its
    candidates then weigh words by their own rough statistics), and how many candidates were
    not well-formed memories (left out: row_checks.py)."""
    memories = {key: m for key, row in found.rows.items() if (m := row_memory(row)) is not None}
    malformed = len(found.rows) - len(memories)
    if not memories:
        return Scored([], False, malformed)
    depth = query.depth
    ran = ran_signals(vector=use_vector and query.vector is not None, text=True, fuzzy=True)
    signals = gather_signals(
        found.vector,
        found.text,
        {},
        ran=ran,
        vector_missing=min(found.vector.values()) if len(found.vector) >= depth else None,
        text_missing=min(found.text.values()) if len(found.text) >= depth else None,
        terms=len(query.terms),
    )
    rough = False
    fallback: TermStats | None = None
    hits = []
    for key, memory in memories.items():
        repo = repo_of(found.rows[key])
        stats = stats_of(repo)
        if stats is None:
            if fallback is None:
                fallback = term_stats(terms.of(repo, k, m) for k, m in memories.items())
            stats, rough = fallback, True
        cosine = found.rows[key].get(COSINE) if use_vector and query.vector is not None else None
        features = extract_features(query.profile, terms.of(repo, key, memory), stats, cosine)
        ready = with_features(signals[key], features)
        score = score_hit(ready)
        if score > 0:
            hits.append(OrgHit(repo, remote_of(repo), memory, ready, score))
    return Scored(hits, rough, malformed)
