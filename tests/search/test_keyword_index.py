"""The in-process keyword index: BM25 over each memory's stems, kept by difference.

Pure: literal memories in, scores out; the random sequences pin that an index updated by
difference (overlay, dead slots, rebuilds) answers exactly what one built from scratch does."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime

import pytest

from local_recall.memory.model import Memory
from local_recall.search.keyword_index import HEAD_TF, K1, B, KeywordIndex
from local_recall.search.relevance import MemoryTerms, memory_terms, stem

AT = datetime(2026, 11, 1, tzinfo=UTC)


def memory(n: int, subject: str, body: str, keywords: tuple[str, ...] = ()) -> Memory:
    return Memory(
        id=f"00000000-0000-4000-8000-{n:012d}",
        subject=subject,
        body=body,
        keywords=keywords,
        applies_to="global",
        occurred_at=AT,
        content_hash=f"{hash((subject, body)) & 0xFFFF:x}",
    )


class Terms:
    """relevance_inputs' cache in miniature: the same terms object while the text is the same."""

    def __init__(self) -> None:
        self.cache: dict[str, tuple[Memory, MemoryTerms]] = {}
        self.computed = 0

    def __call__(self, key: str, m: Memory) -> MemoryTerms:
        found = self.cache.get(key)
        if found is not None and found[0] == m:
            return found[1]
        self.computed += 1
        terms = memory_terms(m.subject, m.keywords, m.body)
        self.cache[key] = (m, terms)
        return terms


def reference(memories: dict[str, Memory], stems: list[str]) -> dict[str, float]:
    """BM25 written out plainly, for comparison."""
    docs = {k: memory_terms(m.subject, m.keywords, m.body) for k, m in memories.items()}
    average = sum(len(t.all) for t in docs.values()) / len(docs)
    scores: dict[str, float] = {}
    for term in dict.fromkeys(stems):
        having = [k for k, t in docs.items() if term in t.all]
        idf = math.log(1 + (len(docs) - len(having) + 0.5) / (len(having) + 0.5))
        for k in having:
            tf = HEAD_TF if term in docs[k].head else 1
            norm = K1 * (1 - B + B * len(docs[k].all) / average)
            scores[k] = scores.get(k, 0.0) + idf * tf * (K1 + 1) / (tf + norm)
    return scores


def keyed(*memories: Memory) -> dict[str, Memory]:
    return {f"episodic/{m.id}": m for m in memories}


STORE = keyed(
    memory(1, "Deduplicate memories by content hash", "The writer hashes the body first."),
    memory(2, "Daemon socket lives in state", "A stale socket is removed at start."),
    memory(3, "Tests run on two workers", "pytest -n 2; the hash seed is fixed.", ("pytest",)),
)


def test_scores_are_bm25_and_best_first() -> None:
    index = KeywordIndex()
    index.update(STORE, Terms())
    found = index.search(["hash", "dedupl"], limit=10)
    want = reference(STORE, ["hash", "dedupl"])
    assert list(found) == sorted(want, key=lambda k: -want[k])
    assert found == pytest.approx(want, rel=1e-5)
    assert next(iter(found)).endswith("000000000001")  # both stems, one in the subject


def test_no_shared_stem_no_candidate_and_limit_cuts() -> None:
    index = KeywordIndex()
    index.update(STORE, Terms())
    assert index.search(["kubernetes"], limit=10) == {}
    assert len(index.search(["hash", "socket", "pytest"], limit=2)) == 2
    assert index.search(["hash"], limit=0) == {}
    assert KeywordIndex().search(["hash"], limit=5) == {}


def test_kind_filter() -> None:
    thinking = memory(4, "Hash thoughts", "hash hash")
    store = {**STORE, f"thinking/{thinking.id}": thinking}
    index = KeywordIndex()
    index.update(store, Terms())
    assert all(k.startswith("thinking/") for k in index.search(["hash"], 10, kind="thinking"))
    assert len(index.search(["hash"], 10, kind="episodic")) == 2


def test_unchanged_memories_are_not_indexed_again() -> None:
    terms = Terms()
    index = KeywordIndex()
    assert index.update(STORE, terms) == 3
    assert index.update(dict(STORE), terms) == 0
    edited = dict(STORE)
    key = next(iter(edited))
    edited[key] = memory(1, "Deduplicate memories by content hash", "Now by simhash.")
    assert index.update(edited, terms) == 1
    assert "episodic/" + STORE[key].id in index.search([stem("simhash")], 5)


WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "socket",
    "hash",
    "daemon",
    "index",
    "vector",
    "prompt",
    "hook",
    "budget",
]


@pytest.mark.parametrize("seed", range(6))
def test_updated_by_difference_equals_built_from_scratch(seed: int) -> None:
    rng = random.Random(seed)
    terms = Terms()
    live = KeywordIndex()
    store: dict[str, Memory] = {}
    for step in range(600):
        action = rng.random()
        if store and action < 0.25:
            store.pop(rng.choice(sorted(store)))
        else:
            n = rng.randrange(400)
            text = " ".join(rng.choices(WORDS, k=rng.randrange(1, 12)))
            subject = " ".join(rng.choices(WORDS, k=2))
            m = memory(n, subject, text)
            store[f"episodic/{m.id}"] = m
        live.update(dict(store), terms)
        if step % 25 == 0 and store:
            fresh = KeywordIndex()
            fresh.update(dict(store), Terms())
            stems = rng.sample(WORDS, 3)
            want = fresh.search(stems, limit=1000)
            got = live.search(stems, limit=1000)
            assert got.keys() == want.keys()
            assert got == pytest.approx(want, rel=1e-5)
            assert got == pytest.approx(reference(store, stems), rel=1e-5)
