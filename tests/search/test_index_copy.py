"""A save at 5,000 memories once read every row's fingerprints from LanceDB (the
sync's plan, ~50 ms of CPU at 5,000), every whole-text vector (the paraphrase check, ~35 ms) and
then the vectors it had just written (the relevance cache's append, ~20 ms). The index now keeps
a copy of the first two in step with its own writes, valid while the table is at the version it
left (rows.py, row_copy.py), and hands its fresh rows to the cache. Here, on a real LanceDB with
a real embedder over HTTP (tests/fake_ollama.py, which can go down: rows without a vector), the
copy is compared with the table read from scratch after every change, another process's writes
included; and a warm save is counted: it reads no row back."""

from __future__ import annotations

import cProfile
import pstats
import random
from pathlib import Path

import numpy as np
import pytest

from local_recall.recall import Recall
from local_recall.search.embedders import OllamaEmbedder
from local_recall.search.index.rows import MemoryIndex
from local_recall.search.paraphrases import _ranked
from local_recall.settings import Settings
from tests.conftest import clean_env
from tests.fake_ollama import FakeOllama, fake_ollama_fixture  # noqa: F401  (the fixture)

WORDS = ("cache", "index", "daemon", "socket", "hook", "lock", "queue", "parser", "retry")


def open_recall(repo: Path, server: FakeOllama) -> Recall:
    embedder = OllamaEmbedder(host=server.url)
    settings = Settings(root=repo, environ=clean_env(), embedder_factory=lambda _c: embedder)
    return Recall.open(settings=settings)


def sentence(rng: random.Random, n: int) -> str:
    words = " ".join(rng.choice(WORDS) for _ in range(4))
    return f"Fact {n}: the {words} needs care."


def body(rng: random.Random, n: int) -> str:
    """One sentence, or several past 200 characters: a memory with passages."""
    if rng.random() < 0.3:
        return " ".join(sentence(rng, n * 10 + i) for i in range(6))
    return sentence(rng, n)


def as_read_from_scratch(index: MemoryIndex) -> tuple[object, ...]:
    """Fingerprints, whole-text vectors and pending rows as a new handle reads them."""
    fresh = MemoryIndex(index.directory, index.lock_path)
    keys, matrix = fresh.vectors("episodic")
    vectors = {key: row.tobytes() for key, row in zip(keys, matrix, strict=True)}
    return fresh.fingerprints(), vectors, fresh.has_pending(refresh=True)


def as_copied(index: MemoryIndex) -> tuple[object, ...]:
    keys, matrix = index.whole_vectors("episodic")
    vectors = {key: row.tobytes() for key, row in zip(keys, matrix, strict=True)}
    return index.fingerprints(), vectors, index.has_pending(refresh=True)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_copy_is_the_table_after_any_change(
    repo: Path, fake_ollama: FakeOllama, seed: int
) -> None:
    rng = random.Random(seed)
    recall = open_recall(repo, fake_ollama)
    other = open_recall(repo, fake_ollama)  # another process: its own index handle
    for n in range(6):
        recall.add(f"Memory {n}", body(rng, n))
    searcher = recall.searcher
    searcher.sync(background=False)
    ids = [m.id for m in recall.list()]
    down = False
    seen: set[str] = set()
    for step in range(30):
        action = rng.choice(("add", "add", "edit", "keywords", "delete", "other", "down"))
        if action == "down":  # the embedder goes down or comes back
            down = not down
            if down:
                fake_ollama.fail_with(500, "model crashed")
            else:
                fake_ollama.recover()
        elif action == "add" or not ids:
            ids.append(recall.add(f"Memory {step}", body(rng, 100 + step)).id)
        elif action == "edit":
            recall.update(rng.choice(ids), body=body(rng, 200 + step))
        elif action == "keywords":  # metadata only: the row is updated, its vector kept
            recall.update(rng.choice(ids), keywords=[rng.choice(WORDS), f"step{step}"])
        elif action == "delete":
            recall.forget(ids.pop(rng.randrange(len(ids))))
        else:  # another process saves and syncs: the table is no longer as this one left it
            ids.append(other.add(f"Other {step}", body(rng, 300 + step)).id)
            other.searcher.sync(background=False)
        searcher.sync(background=False)
        seen.add(action)
        assert as_copied(searcher.index) == as_read_from_scratch(searcher.index), (step, action)
    fake_ollama.recover()
    searcher.sync(background=False)
    assert as_copied(searcher.index) == as_read_from_scratch(searcher.index)
    assert {"add", "edit", "keywords", "delete", "other", "down"} <= seen


def table_reads(calls: dict[tuple[str, int, str], tuple[int, ...]]) -> int:
    """LanceDB queries that returned rows (each `to_arrow` of lancedb's query builders)."""
    return sum(
        c[1]
        for (file, _line, name), c in calls.items()
        if name == "to_arrow" and file.endswith("lancedb/query.py")
    )


def test_a_warm_save_reads_no_row_back_from_the_index(repo: Path, fake_ollama: FakeOllama) -> None:
    """The save of the MCP tool (the paraphrase check syncs the index first, then ranks the
    whole-text vectors) on a warm store: its plan, its ranking and the relevance cache's
    append come from what this process wrote, with no LanceDB query."""
    recall = open_recall(repo, fake_ollama)
    for n in range(12):
        recall.add(f"Memory {n}", f"Fact {n}: the {WORDS[n % len(WORDS)]} needs care.")
    recall.sync_index()

    def save(subject: str, body: str) -> bool:  # as the MCP tool saves
        found = recall.save(subject, body, source="mcp", reviewed=False, unless_paraphrase=True)
        return found.created

    assert save("Warm", "The first save: the table's rows are read once here.")
    profile = cProfile.Profile()
    profile.enable()
    saved = save("Uploads retry", "Uploads retry after 1, 4 and 16 minutes.")
    again = save("Queue flush", "The queue flushes every 30 seconds to disk.")
    profile.disable()
    assert saved and again
    calls = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    assert table_reads(calls) == 0  # was 3 a save: fingerprints, the ranked vectors, the append
    assert recall.sync_index().embedded == 1  # the second save's row, as before


def test_ties_at_the_cut_rank_by_key_whatever_the_row_order() -> None:
    """The copy holds its rows in its own order (a rewritten row goes last): the paraphrase
    check must rank alike either way. Equal cosines come in key order."""
    keys = [f"episodic/{c}" for c in "hgfedcba"]
    matrix = np.array([[1.0, 0.0]] * 6 + [[0.6, 0.8], [0.0, 1.0]], dtype=np.float32)
    vector = np.array([1.0, 0.0], dtype=np.float32)
    forward = _ranked(keys, matrix, vector)
    backward = _ranked(keys[::-1], matrix[::-1], vector)
    assert forward == backward
    assert [memory_id for memory_id, _ in forward] == ["c", "d", "e", "f", "g", "h"]
    assert _ranked([], np.zeros((0, 2), dtype=np.float32), vector) == []
