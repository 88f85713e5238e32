"""Candidate lists from the index: the vector and full-text queries of one search.

    found = from_index(index, query_vector, terms, text_future, ask, rebuild=searcher_rebuild)

A failing index is rebuilt once (when the caller allows it) and asked again; None when it
cannot answer, and the caller falls back to the files.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from local_recall.errors import IndexUnavailable
from local_recall.search.index.queries import Candidate, text_search, vector_search
from local_recall.search.index.rows import MemoryIndex

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class IndexQuery:
    """The part of a search every index query shares."""

    depth: int
    kind: str | None
    since: datetime | None
    until: datetime | None

    def arguments(self) -> dict[str, Any]:
        return {"limit": self.depth, "kind": self.kind, "since": self.since, "until": self.until}


def from_index(
    index: MemoryIndex,
    query_vector: Any,
    terms: list[str] | None,
    text_future: Future[list[Candidate]] | None,
    ask: IndexQuery,
    *,
    rebuild: Callable[[], bool] | None,
) -> tuple[dict[str, float], dict[str, float]] | None:
    """(vector, text) candidates (key → cosine, key → BM25); None when the index cannot
    answer. `rebuild` (None: not allowed) rebuilds it and says whether it is usable again."""
    for attempt in (1, 2):
        try:
            vector: dict[str, float] = {}
            if query_vector is not None:
                found = vector_search(index, query_vector, **ask.arguments())
                vector = {c.key: c.score for c in found}
            text: dict[str, float] = {}
            if text_future is not None:
                future, text_future = text_future, None
                text = {c.key: c.score for c in future.result()}
            elif terms:
                text = {c.key: c.score for c in text_search(index, terms, **ask.arguments())}
            return vector, text
        except IndexUnavailable as exc:
            log.warning("search: %s", exc)
            if text_future is not None:  # let the worker finish before handles are dropped
                with contextlib.suppress(IndexUnavailable):
                    text_future.result()
                text_future = None
            index.forget()
            if attempt == 2 or rebuild is None or not rebuild():
                return None
    return None
