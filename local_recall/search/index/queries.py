"""The index's queries: the vector and full-text candidates of one search.

    found = vector_search(index, query_vector, limit=50, kind="episodic")

Each returns `Candidate`s (key and score: cosine similarity, or BM25) and raises
IndexUnavailable when LanceDB cannot answer (candidates.py decides what then).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from local_recall.errors import IndexUnavailable
from local_recall.search.index.schema import row_filter
from local_recall.search.index.tables import PASSAGES, TABLE, IndexTables

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


@dataclass(frozen=True, slots=True)
class Candidate:
    key: str
    score: float  # vector: cosine similarity; text: BM25


def vector_search(
    index: IndexTables,
    vector: npt.NDArray[np.float32],
    *,
    limit: int,
    kind: str | None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[Candidate]:
    """Cosine similarity of each memory's best vector (whole text or one of its passages).
    Dates filter whole-text rows only: passages carry no date, and `since`/`until` are
    applied again to the memories themselves by the caller."""
    best: dict[str, float] = {}
    pending = "has_vector = true" if index.has_pending() else None
    tables = [(TABLE, row_filter(kind, since, until, extra=pending))]
    if index.has_passages():
        tables.append((PASSAGES, row_filter(kind, None, None)))
    for name, where in tables:
        try:
            query = (
                index.opened(name)
                .search(vector, vector_column_name="vector")
                .distance_type("cosine")
            )
            if where:
                query = query.where(where, prefilter=True)
            data = (
                query.limit(limit * (2 if name == PASSAGES else 1))
                .select(["key", "_distance"])
                .to_arrow()
            )
        except Exception as exc:
            raise IndexUnavailable(f"vector search failed: {exc}") from exc
        for key, distance in zip(
            data.column("key").to_pylist(), data.column("_distance").to_pylist(), strict=True
        ):
            best[key] = max(best.get(key, -1.0), 1.0 - float(distance))
    ranked = sorted(best.items(), key=lambda item: -item[1])[:limit]
    return [Candidate(key, score) for key, score in ranked]


def text_search(
    index: IndexTables,
    terms: Sequence[str],
    *,
    limit: int,
    kind: str | None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[Candidate]:
    """BM25 over the full-text documents. `terms` are plain words: the query is a match
    query object, never parsed as syntax and never put in a filter."""
    if not terms:
        return []
    from lancedb.query import FullTextOperator, MatchQuery

    where = row_filter(kind, since, until)
    match = MatchQuery(
        " ".join(terms),
        "document",
        boost=1.0,
        fuzziness=0,
        max_expansions=50,
        operator=FullTextOperator.OR,
        prefix_length=0,
        document_granularity=None,
    )
    try:
        query = index.opened().search(match, query_type="fts")
        if where:
            query = query.where(where, prefilter=True)
        data = query.limit(limit).select(["key", "_score"]).to_arrow()
    except Exception as exc:
        raise IndexUnavailable(f"full-text search failed: {exc}") from exc
    keys = data.column("key").to_pylist()
    scores = data.column("_score").to_pylist()
    return [Candidate(k, float(s)) for k, s in zip(keys, scores, strict=True)]
