"""The relevance cache is appended to, not rewritten, by a sync that changed a few
memories; a later sync off the save path folds the log into a new base. Whatever the sequence
of adds, edits and deletes, the cache reads back row for row, byte for byte, as a cache written
whole from the index (real LanceDB and MiniLM on disk). A torn append (a crash) is ignored by
readers and cut by the next writer; a long-lived reader sees appends."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest

from local_recall.memory.model import Memory
from local_recall.recall import Recall
from local_recall.search.embedders import MiniLMEmbedder, embedder_fingerprint
from local_recall.search.index.plan import MIN_PASSAGE_BODY_CHARS
from local_recall.search.index.relevance_cache import (
    CachePolicy,
    write_relevance_cache,
    write_whole_cache,
)
from local_recall.search.index.sync import IndexReport, sync_memories
from local_recall.search.relevance_inputs import RelevanceInputs
from local_recall.search.vector_cache import read_header, read_vector_cache
from local_recall.search.vector_log import log_paths
from local_recall.settings import Settings
from tests.conftest import clean_env

WORDS = (
    "cache", "index", "daemon", "socket", "hook", "transcript", "config", "lock", "queue",
    "parser", "token", "budget", "embedding", "retry", "backoff", "schema", "migration",
)  # fmt: skip
# a small floor, so a test of a few dozen memories reaches both compaction thresholds
POLICY = CachePolicy(share=0.25, hard_share=1.0, min_rows=8, max_keys=500)


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    embedder = MiniLMEmbedder()
    embedder.load()
    return embedder


def body(rng: random.Random, n: int) -> str:
    """One sentence, or (long) several: a memory with passages has several rows."""
    sentences = [
        f"Fact {n}.{i}: the {rng.choice(WORDS)} {rng.choice(WORDS)} needs {rng.choice(WORDS)}."
        for i in range(rng.choice((1, 1, 2, 8)))
    ]
    text = " ".join(sentences)
    return text if len(sentences) == 1 else text.ljust(MIN_PASSAGE_BODY_CHARS + 10, ".")


class Store:
    def __init__(self, repo: Path, minilm: MiniLMEmbedder) -> None:
        settings = Settings(root=repo, environ=clean_env(), embedder_factory=lambda _c: minilm)
        self.recall = Recall.open(settings=settings)
        self.state = self.recall.layout.state_dir
        self.embedder = embedder_fingerprint(minilm)

    def sync(self, *, compact: bool) -> None:
        """What `Searcher.sync` does: the index, then the cache (compact: off the save path)."""
        searcher = self.recall.searcher
        memories = searcher.load_memories()
        report = sync_memories(searcher.index, list(memories.values()), searcher.embedder)
        self.write_cache(report, memories, compact=compact)

    def write_cache(
        self, report: IndexReport, memories: Mapping[str, Memory], *, compact: bool
    ) -> None:
        """The second half of a sync: the cache after the index (`report`: the index's sync)."""
        searcher = self.recall.searcher
        write_relevance_cache(
            searcher.index,
            self.state,
            lambda compact: searcher.relevance.persist_stats(memories, compact=compact),
            report,
            compact=compact,
            policy=POLICY,
        )

    def rows(self) -> dict[str, bytes]:
        cache = read_vector_cache(self.state, embedder=self.embedder)
        assert cache is not None
        return cache.rows_by_key()

    def rebuilt(self, where: Path) -> dict[str, bytes]:
        """The cache a whole write from the index makes."""
        write_whole_cache(self.recall.searcher.index, where, self.embedder)
        cache = read_vector_cache(where, embedder=self.embedder)
        assert cache is not None
        return cache.rows_by_key()


@pytest.mark.parametrize("seed", [1, 2])
def test_random_adds_edits_and_deletes_read_back_as_a_whole_write(
    repo: Path, tmp_path: Path, minilm: MiniLMEmbedder, seed: int
) -> None:
    rng = random.Random(seed)
    store = Store(repo, minilm)
    for n in range(6):
        store.recall.add(f"Memory {n}", body(rng, n))
    store.sync(compact=True)
    ids = [m.id for m in store.recall.list()]
    appended = compacted = 0
    for step in range(24):
        action = rng.choice(("add", "add", "edit", "edit", "delete")) if ids else "add"
        if action == "add":
            ids.append(store.recall.add(f"Memory {step}", body(rng, 100 + step)).id)
        elif action == "edit":
            store.recall.update(rng.choice(ids), body=body(rng, 200 + step))
        else:
            store.recall.forget(ids.pop(rng.randrange(len(ids))))
        token = read_header(store.state).token  # type: ignore[union-attr]
        store.sync(compact=rng.random() < 0.3)
        header = read_header(store.state)
        assert header is not None
        if header.token == token:
            appended += 1
        else:
            compacted += 1
        assert store.rows() == store.rebuilt(tmp_path / f"whole-{step}"), (step, action)
    assert appended >= 12 and compacted >= 1, (appended, compacted)  # both paths ran


def test_a_save_appends_its_rows_and_leaves_the_base_alone(
    repo: Path, minilm: MiniLMEmbedder
) -> None:
    store = Store(repo, minilm)
    for n in range(10):
        store.recall.add(f"Memory {n}", f"Fact {n}: the parser rejects tab number {n}.")
    store.sync(compact=True)
    header = read_header(store.state)
    assert header is not None
    base = store.state / f"vectors-{header.token}.npy"
    before = base.stat()
    inputs = RelevanceInputs(store.state)  # a long-lived reader (the daemon's)
    first = inputs.vectors(store.embedder)
    assert first is not None and len(first.keys) == 10
    added = store.recall.add("A new fact", "Retries back off exponentially up to thirty seconds.")
    store.sync(compact=False)
    rows_path, log_path = log_paths(store.state, header.token)
    assert rows_path.stat().st_size == 384 * 4  # one row: the new memory's
    line = json.loads(log_path.read_text())
    assert line == {"rows": 1, "keys": [f"episodic/{added.id}"], "covers": [f"episodic/{added.id}"]}
    after = base.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    again = inputs.vectors(store.embedder)  # the json did not change: the log's length did
    assert again is not None and again is not first and len(again.keys) == 11
    assert f"episodic/{added.id}" in again.keys


def test_a_torn_append_is_ignored_then_cut(
    repo: Path, tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    store = Store(repo, minilm)
    for n in range(4):
        store.recall.add(f"Memory {n}", f"Fact {n}: the daemon owns socket number {n}.")
    store.sync(compact=True)
    store.recall.add("Another", "The budget resets at midnight UTC every day.")
    store.sync(compact=False)
    good = store.rows()
    header = read_header(store.state)
    assert header is not None
    rows_path, log_path = log_paths(store.state, header.token)
    with rows_path.open("ab") as rows, log_path.open("ab") as log:  # a crash mid-append
        rows.write(np.ones(200, dtype="<f4").tobytes())
        log.write(b'{"rows": 1, "keys": ["episodic/')
    assert store.rows() == good
    store.recall.add("Third", "Hook output goes to stderr, never stdout.")
    store.sync(compact=False)
    assert store.rows() == store.rebuilt(tmp_path / "whole")
    assert len(log_path.read_text().splitlines()) == 2  # the torn line was cut
    assert rows_path.stat().st_size == 2 * 384 * 4
    # a complete line that names more rows than the rows file holds: no cache at all
    ghost = "episodic/00000000-0000-4000-8000-000000000000"
    with log_path.open("ab") as log:
        log.write(json.dumps({"rows": 1, "keys": [ghost], "covers": [ghost]}).encode() + b"\n")
    assert read_vector_cache(store.state, embedder=store.embedder) is None
