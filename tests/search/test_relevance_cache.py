"""The relevance cache follows the index state it was written for (`vectors.follows`): a sync
whose process died between the index's commit and the cache's, or two syncs that crossed,
leave a cache that a later sync sees lagging and writes whole. Before, a sync that found the
index already in line trusted the cache, and search scored edited memories by their old text
and new ones without a vector until the next whole write (found as a flaky
tests/safety/test_crash.py). Real LanceDB and MiniLM on disk; the cache is compared byte for
byte with one written whole from the index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from local_recall.search.embedders import MiniLMEmbedder
from local_recall.search.index.relevance_cache import cache_step
from local_recall.search.index.sync import sync_memories
from local_recall.search.vector_cache import FOLLOWS, cache_follows, read_header
from tests.search.test_vector_log import Store

A = (3, (11, 100, 40))
B = (4, (11, 100, 40))
C = (5, (11, 100, 40))
REBUILT = (1, (12, 200, 40))  # a rebuild rewrites meta.json: its stat changes


@pytest.mark.parametrize(
    ("follows", "stamps", "changed", "step"),
    [
        (A, (A, A), (), "fresh"),  # nothing written, the cache follows the index
        (A, (B, B), (), "whole"),  # nothing written now, but a killed run wrote B
        (A, (A, B), ("episodic/x",), "append"),
        (A, (A, B), (), "append"),  # metadata only: the cache just follows B
        (B, (A, B), ("episodic/x",), "fresh"),  # already followed (not by us in practice)
        (A, (B, C), ("episodic/x",), "whole"),  # a write the cache never saw came between
        (A, (A, REBUILT), None, "whole"),  # a rebuild: every vector is new
        (A, (A, B), tuple(f"episodic/{n}" for n in range(501)), "whole"),  # too many to append
        (None, (A, A), (), "whole"),  # no follows file: a cache of an older version
        (A, (A, None), (), "whole"),  # the index's state could not be read
        (A, (None, B), ("episodic/x",), "whole"),
    ],
)
def test_cache_step(
    follows: object, stamps: tuple[object, object], changed: object, step: str
) -> None:
    assert cache_step(follows, stamps, changed, max_keys=500) == step  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    embedder = MiniLMEmbedder()
    embedder.load()
    return embedder


def seeded(repo: Path, minilm: MiniLMEmbedder) -> tuple[Store, list[str]]:
    store = Store(repo, minilm)
    ids = [
        store.recall.add(f"Memory {n}", f"Fact {n}: the parser rejects tab number {n}.").id
        for n in range(8)
    ]
    store.sync(compact=True)
    return store, ids


def test_a_sync_killed_after_the_index_commit_is_caught_up_by_the_next(
    repo: Path, tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    store, ids = seeded(repo, minilm)
    header = read_header(store.state)
    assert header is not None
    assert cache_follows(store.state, header) == store.recall.searcher.index.stamp()
    store.recall.update(ids[0], body="The scheduler now retries with jittered backoff.")
    store.recall.forget(ids[1])
    added = store.recall.add("A new fact", "Uploads are resized to 2048 pixels.")
    # the killed run: its index writes are committed, its cache write never happened
    searcher = store.recall.searcher
    sync_memories(searcher.index, list(searcher.load_memories().values()), searcher.embedder)
    assert store.rows() != store.rebuilt(tmp_path / "whole-1")  # the cache lags

    store.sync(compact=False)  # finds nothing to write to the index
    assert store.rows() == store.rebuilt(tmp_path / "whole-2")
    assert f"episodic/{added.id}" in store.rows() and f"episodic/{ids[1]}" not in store.rows()
    header = read_header(store.state)
    assert header is not None
    assert cache_follows(store.state, header) == searcher.index.stamp()
    follows = (store.state / FOLLOWS).stat()
    store.sync(compact=False)  # now fresh: nothing rewritten
    assert (store.state / FOLLOWS).stat().st_mtime_ns == follows.st_mtime_ns


def test_two_syncs_that_cross_leave_the_newer_vectors(
    repo: Path, tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    store, ids = seeded(repo, minilm)
    other = Store(repo, minilm)  # a second process on the same repository
    store.recall.update(ids[2], body="First edit: the queue drains before shutdown.")
    first = store.recall.searcher
    memories = first.load_memories()
    report = sync_memories(first.index, list(memories.values()), first.embedder)
    assert report.vectors_changed == (f"episodic/{ids[2]}",)
    # before the first process gets to its cache, the second edits again and syncs through
    other.recall.update(ids[2], body="Second edit: the queue is dropped at shutdown.")
    other.sync(compact=False)
    token = read_header(store.state).token  # type: ignore[union-attr]
    # the cache follows neither state of this sync: it is written whole, from the index
    store.write_cache(report, memories, compact=False)
    assert read_header(store.state).token != token  # type: ignore[union-attr]
    assert store.rows() == store.rebuilt(tmp_path / "whole")


def test_a_cache_without_a_follows_file_is_written_whole_once(
    repo: Path, minilm: MiniLMEmbedder
) -> None:
    store, _ = seeded(repo, minilm)
    (store.state / FOLLOWS).unlink()  # as an older version left it
    token = read_header(store.state).token  # type: ignore[union-attr]
    store.sync(compact=False)
    header = read_header(store.state)
    assert header is not None and header.token != token
    assert json.loads((store.state / FOLLOWS).read_text())["token"] == header.token
    store.sync(compact=False)
    assert read_header(store.state).token == header.token  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "planted",
    [
        b"",
        b"[1, 2]",
        b'{"token": "0000000000000000", "index": [3, null]}',  # another base's
        b'{"token": "%s", "index": [true, null]}',
        b'{"token": "%s", "index": [3, [1, 2]]}',
        b'{"token": "%s", "index": "3"}',
    ],
)
def test_a_planted_or_broken_follows_file_only_costs_a_whole_write(
    repo: Path, tmp_path: Path, minilm: MiniLMEmbedder, planted: bytes
) -> None:
    store, ids = seeded(repo, minilm)
    header = read_header(store.state)
    assert header is not None
    path = store.state / FOLLOWS
    path.write_bytes(planted.replace(b"%s", header.token.encode()))
    assert cache_follows(store.state, header) is None
    store.recall.update(ids[3], body="An edit after the plant: the cache must still follow.")
    store.sync(compact=False)
    assert store.rows() == store.rebuilt(tmp_path / "whole")
    header = read_header(store.state)
    assert header is not None
    assert cache_follows(store.state, header) == store.recall.searcher.index.stamp()


def test_a_symlinked_follows_file_is_not_followed(
    repo: Path, tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    store, _ = seeded(repo, minilm)
    target = tmp_path / "elsewhere.json"
    target.write_text("keep me")
    path = store.state / FOLLOWS
    path.unlink()
    path.symlink_to(target)
    header = read_header(store.state)
    assert header is not None and cache_follows(store.state, header) is None
    store.sync(compact=False)
    assert target.read_text() == "keep me" and not path.is_symlink()
