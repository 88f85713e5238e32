"""Vector candidates computed exactly from the vector cache (`VectorCache.nearest`), which the
warm search uses instead of LanceDB's vector query on stores of up to
`scoring.EXACT_NEAREST_MAX_ROWS` vectors: the same memories as a brute-force pass, and the same
search results as LanceDB's (exact below the ANN threshold) on a real index."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from local_recall.recall import Recall
from local_recall.search import scoring
from local_recall.search.query import SearchQuery
from local_recall.search.vector_cache import VectorCache
from local_recall.settings import Settings
from tests.conftest import clean_env


def brute_force(cache: VectorCache, query: np.ndarray, limit: int, kind: str | None) -> list[str]:
    best = {
        key: value
        for key, value in cache.best_cosines(query).items()
        if kind is None or key.startswith(f"{kind}/")
    }
    return [key for key, _ in sorted(best.items(), key=lambda item: -item[1])[:limit]]


@pytest.mark.parametrize("limit", [1, 5, 40, 300])
def test_nearest_is_the_brute_force_top(limit: int) -> None:
    rng = np.random.default_rng(limit)
    memories = [f"{'thinking' if i % 5 == 0 else 'episodic'}/{i:036d}" for i in range(200)]
    # every memory has a whole-text row and 0-6 passages, rows in no particular order
    keys = [key for key in memories for _ in range(1 + rng.integers(0, 7))]
    rng.shuffle(keys)
    matrix = rng.standard_normal((len(keys), 16)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    cache = VectorCache(tuple(keys), matrix, "test")
    for kind in (None, "episodic", "thinking"):
        query = rng.standard_normal(16).astype(np.float32)
        query /= np.linalg.norm(query)
        found = cache.nearest(query, limit, kind=kind)
        assert list(found) == brute_force(cache, query, limit, kind)
        best = cache.best_cosines(query)
        assert all(abs(found[key] - best[key]) < 1e-6 for key in found)


def test_nearest_of_a_kind_with_no_rows_is_empty() -> None:
    matrix = np.eye(3, dtype=np.float32)
    cache = VectorCache(tuple(f"episodic/{i:036d}" for i in range(3)), matrix, "test")
    assert cache.nearest(matrix[0], 10, kind="thinking") == {}
    assert list(cache.nearest(matrix[0], 10)) == [f"episodic/{0:036d}", *cache.keys[1:]]


@pytest.mark.slow
def test_the_warm_search_finds_the_same_with_and_without_the_exact_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import git_init

    root = git_init(tmp_path / "repo")
    recall = Recall.open(settings=Settings(root=root, environ=clean_env()))
    recall.init()
    topics = ["socket", "daemon", "index", "hook", "budget", "token", "retry", "cache"]
    for i, topic in enumerate(topics * 4):
        recall.add(
            f"{topic.capitalize()} note {i}",
            f"The {topic} path retries twice, then logs. "
            f"Seen in case {i} when the {topics[(i + 3) % len(topics)]} was slow. " * 3,
        )
    recall.sync_index()
    queries = [f"why does the {topic} retry?" for topic in topics] + ["slow daemon socket"]

    def results() -> list[list[tuple[str, float]]]:
        return [
            [(hit.id, round(hit.score, 6)) for hit in recall.query(SearchQuery(q), sync=False).hits]
            for q in queries
        ]

    calls: list[int] = []
    nearest = VectorCache.nearest

    def counted(self: VectorCache, *args: object, **kwargs: object) -> dict[str, float]:
        calls.append(1)
        return nearest(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(VectorCache, "nearest", counted)
    exact = results()
    assert len(calls) == len(queries)  # every query took the exact path
    monkeypatch.setattr(scoring, "EXACT_NEAREST_MAX_ROWS", 0)  # LanceDB's vector query
    assert results() == exact
    assert len(calls) == len(queries)
    assert any(exact)
