"""Calibrated relevance and the chit-chat filter: pure functions pinned with literal examples."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from local_recall.memory.model import Memory
from local_recall.search import relevance as rel
from local_recall.search.query_intent import has_nothing_to_look_up
from local_recall.search.vector_cache import VECTORS_JSON, read_vector_cache, write_vector_cache

RUN_TESTS = ("Run tests with make test", (), "The CI uses make test; run it before pushing.")


def features(
    query: str, cosine: float | None, store: Sequence[tuple[str, Sequence[str], str]]
) -> rel.Features:
    terms = [rel.memory_terms(*m) for m in store]
    return rel.extract_features(rel.query_profile(query), terms[0], rel.term_stats(terms), cosine)


# --- stems and terms ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("tests", "test"),
        ("running", "run"),
        ("makes", "make"),
        ("pushes", "push"),
        ("classes", "class"),
        ("passed", "pass"),
        ("tries", "try"),
        ("deduplicating", "dedupl"),
        ("deduplicate", "dedupl"),
    ],
)
def test_stem(word: str, expected: str) -> None:
    assert rel.stem(word) == expected


def test_query_profile_drops_stop_words_and_splits_identifiers() -> None:
    profile = rel.query_profile("How do we parse the ProcessedLog?")
    assert profile.words == ("parse", "processedlog", "processed", "log")
    assert profile.stems == ("parse", "proces", "log")


def test_idf_weighs_rare_and_unknown_terms_most() -> None:
    stats = rel.term_stats(
        [rel.memory_terms("a", (), "cache eviction"), rel.memory_terms("b", (), "cache")]
    )
    assert stats.idf("evicti") > stats.idf("cache")
    assert stats.idf("absent") > stats.idf("evicti")


def test_term_stats_round_trip_through_json() -> None:
    stats = rel.term_stats([rel.memory_terms("Run tests", ("ci",), "make test")])
    assert rel.term_stats_from_json(stats.to_json()) == stats
    assert rel.term_stats_from_json({"documents": "1", "df": {}}) is None
    assert rel.term_stats_from_json({"documents": 1, "df": {"a": 1.5}}) is None
    assert rel.term_stats_from_json([]) is None


# --- features -------------------------------------------------------------------------------


def test_features_of_the_one_memory_case() -> None:
    got = features("how do I run the tests?", 0.488, [RUN_TESTS])
    assert got == rel.Features(
        cosine=0.488, coverage=1.0, head_coverage=1.0, fuzzy=1.0, unknown=0.0, single_term=0.0
    )


def test_features_of_a_query_about_something_else() -> None:
    got = features("what did Caroline research?", 0.046, [RUN_TESTS])
    assert (got.coverage, got.head_coverage, got.unknown) == (0.0, 0.0, 1.0)


def test_fuzzy_matches_typos_in_identifiers() -> None:
    store = [("ProcessedLog dedup", ("processed_log",), "Rows are deduplicated by hash.")]
    assert features("procesed_log duplicates", None, store).fuzzy > 0
    assert rel.fuzzy_share(["procesed"], ["processed"]) == 1.0
    assert rel.fuzzy_share(["zebra"], ["processed"]) == 0.0


def test_a_querys_weights_computed_once_give_the_same_features() -> None:
    """A search scores ~100 candidates with weights computed once per query; the numbers
    must be exactly those of computing them per candidate."""
    store = [
        RUN_TESTS,
        ("ProcessedLog dedup", ("processed_log",), "Rows are deduplicated by hash in ci."),
        ("Release checklist", ("release",), "Tag, push the tag, publish; make test first."),
    ]
    terms = [rel.memory_terms(*m) for m in store]
    stats = rel.term_stats(terms)
    for query in ("how do we run make test in ci?", "procesed_log zebra release", "unknownword"):
        profile = rel.query_profile(query)
        weights = rel.query_weights(profile, stats)
        for memory in terms:
            assert memory.all == memory.head | memory.body
            once = rel.extract_features(profile, memory, stats, 0.4, weights)
            assert once == rel.extract_features(profile, memory, stats, 0.4), query
    # the same word in the subject is a match without asking rapidfuzz; no word is none
    assert rel.fuzzy_share(["dedup", "zebra"], frozenset({"dedup"})) == 0.5
    assert rel.fuzzy_share(["dedup"], frozenset(), ()) == 0.0


def test_a_query_without_content_words_has_no_match() -> None:
    got = features("how do we?", 0.3, [RUN_TESTS])
    assert (got.coverage, got.unknown) == (0.0, 1.0)


# --- the calibrated score -------------------------------------------------------------------


def test_the_one_memory_case_is_relevant_with_and_without_a_vector() -> None:
    """The question "how do I run the tests?" against "Run tests with make test" must be injected
    whether a daemon answers or not (it was 1.00 without one and 0.22, dropped, with one)."""
    got = features("how do I run the tests?", 0.488, [RUN_TESTS])
    assert rel.relevance(got) >= rel.DEFAULT_THRESHOLD
    lexical = rel.Features(None, *got.lexical_vector())
    assert rel.relevance(lexical) >= rel.DEFAULT_THRESHOLD


@pytest.mark.parametrize(
    ("query", "cosine"),
    [
        ("what did Caroline research?", 0.046),
        ("how do we deploy to production?", 0.216),
        ("run the linter", 0.118),
    ],
)
def test_prompts_about_something_else_are_not_relevant(query: str, cosine: float) -> None:
    got = features(query, cosine, [RUN_TESTS])
    assert rel.relevance(got) < rel.DEFAULT_THRESHOLD
    assert rel.relevance(rel.Features(None, *got.lexical_vector())) < rel.DEFAULT_THRESHOLD


def test_relevance_rises_with_the_cosine_and_stays_in_0_1() -> None:
    base = rel.Features(0.0, 0.5, 0.5, 0.0, 0.0, 0.0)
    values = [rel.relevance(rel.Features(c, 0.5, 0.5, 0.0, 0.0, 0.0)) for c in (0.0, 0.3, 0.6, 0.9)]
    assert values == sorted(values)
    assert all(0.0 <= v <= 1.0 for v in values)
    assert rel.relevance(base) < rel.DEFAULT_THRESHOLD <= values[-1]
    extreme = rel.Features(1e9, 1.0, 1.0, 1.0, 0.0, 0.0)
    assert math.isfinite(rel.relevance(extreme)) and rel.relevance(extreme) <= 1.0


def test_the_score_is_absolute_not_relative_to_other_hits() -> None:
    """The same pair scores the same in a store where it is the best match of nothing."""
    weak = features("caroline's pottery class", 0.15, [RUN_TESTS])
    assert rel.relevance(weak) < rel.DEFAULT_THRESHOLD


def test_constants_are_consistent() -> None:
    assert len(rel.WEIGHTS) == 1 + len(rel.NO_MATCH.vector())
    assert len(rel.LEXICAL_WEIGHTS) == 1 + len(rel.NO_MATCH.lexical_vector())
    assert 0.0 < rel.DEFAULT_THRESHOLD < 1.0


# --- prompts with nothing to look up --------------------------------------------------------


@pytest.mark.parametrize(
    "prompt",
    [
        "thanks!",
        "continue",
        "yes do it",
        "ok",
        "go ahead",
        "Sounds good.",
        "lgtm",
        "  ",
        "no, the other one",
    ],
)
def test_chit_chat_has_nothing_to_look_up(prompt: str) -> None:
    assert has_nothing_to_look_up(prompt)


@pytest.mark.parametrize(
    "prompt",
    [
        "how do I run the tests?",
        "run the linter",
        "why does this raise a KeyError?",
        "continue with the ProcessedLog migration",
        "thanks! now fix test_parser.py",
        "What did Caroline research?",
    ],
)
def test_prompts_with_a_topic_are_searched(prompt: str) -> None:
    assert not has_nothing_to_look_up(prompt)


def test_long_prompts_are_always_searched() -> None:
    assert not has_nothing_to_look_up("ok " * 100)


# --- the one-memory case with the real embedder ---------------------------------------------


def test_the_one_memory_case_with_the_real_minilm() -> None:
    """The cosine both paths would read from the stored vector (embedded as the index embeds:
    subject, newline, body), end to end with the bundled model."""
    from local_recall.search.embedders import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    subject, _keywords, body = RUN_TESTS
    vector = embedder.embed_documents([f"{subject}\n{body}"])[0]

    def score(query: str) -> float:
        cosine = float(vector @ embedder.embed_query(query))
        return rel.relevance(features(query, cosine, [RUN_TESTS]))

    assert score("how do I run the tests?") >= rel.DEFAULT_THRESHOLD
    assert score("make test fails on CI") >= rel.DEFAULT_THRESHOLD
    assert score("what did Caroline research?") < rel.DEFAULT_THRESHOLD
    assert score("run the linter") < rel.DEFAULT_THRESHOLD
    assert has_nothing_to_look_up("thanks!")  # never searched at all


# --- the vector cache (state/vectors.json + .npy): written by the indexer, never trusted -----

KEY_A = "episodic/00000000-0000-4000-8000-00000000000a"
KEY_B = "episodic/00000000-0000-4000-8000-00000000000b"
FP = "minilm:all-MiniLM-L6-v2-int8:384"


def unit(*values: float) -> Any:
    import numpy as np

    row = np.asarray(values, dtype=np.float32)
    return row / np.linalg.norm(row)


def write_cache(state: Path) -> None:
    import numpy as np

    # A has a whole-text vector and one passage; B one vector
    matrix = np.stack([unit(1, 0, 0), unit(0, 1, 0), unit(0.6, 0.8, 0)])
    write_vector_cache(state, [KEY_A, KEY_B, KEY_A], matrix, embedder=FP)


def test_the_cache_round_trips_and_a_memory_gets_its_best_row(tmp_path: Path) -> None:
    write_cache(tmp_path)
    cache = read_vector_cache(tmp_path, embedder=FP)
    assert cache is not None and cache.keys == (KEY_A, KEY_B, KEY_A)
    best = cache.best_cosines(unit(0, 1, 0))
    assert abs(best[KEY_A] - 0.8) < 1e-6 and abs(best[KEY_B] - 1.0) < 1e-6
    assert cache.cosines_of(unit(0, 1, 0), [KEY_A, "episodic/gone"]) == {KEY_A: best[KEY_A]}
    # rewriting replaces the matrix file: one .npy is left
    write_cache(tmp_path)
    assert len(list(tmp_path.glob("vectors-*.npy"))) == 1
    assert read_vector_cache(tmp_path, embedder="ollama:other:384") is None  # other model


def test_a_planted_or_broken_cache_reads_as_none(tmp_path: Path) -> None:
    import numpy as np

    write_cache(tmp_path)
    meta_path = tmp_path / VECTORS_JSON
    meta = json.loads(meta_path.read_text())
    npy = tmp_path / f"vectors-{meta['token']}.npy"
    keys_path = tmp_path / f"vectors-{meta['token']}.keys"

    def broken(**changes: Any) -> bool:
        meta_path.write_text(json.dumps({**meta, **changes}))
        return read_vector_cache(tmp_path, embedder=FP) is None

    assert broken(rows=2)  # keys and rows disagree
    assert broken(token="../../0000000000000000")
    assert broken(dim=4)  # the matrix is not of the announced shape
    meta_path.write_text(json.dumps(meta))
    keys = keys_path.read_text()
    keys_path.write_text(json.dumps(["../../etc/passwd", KEY_B, KEY_A]))
    assert read_vector_cache(tmp_path, embedder=FP) is None
    keys_path.write_text(keys)
    assert read_vector_cache(tmp_path, embedder=FP) is not None
    # a matrix of another dtype, or cut short
    np.save(npy, np.zeros((3, 3), dtype=np.float64))
    assert read_vector_cache(tmp_path, embedder=FP) is None
    npy.write_bytes(b"\x93NUMPY garbage")
    assert read_vector_cache(tmp_path, embedder=FP) is None
    # symlinks are never followed (the state folder could be planted)
    write_cache(tmp_path)
    outside = tmp_path.parent / "outside.json"
    outside.write_text(meta_path.read_text())
    meta_path.unlink()
    meta_path.symlink_to(outside)
    assert read_vector_cache(tmp_path, embedder=FP) is None
    meta_path.write_text("{" * 100_000)  # deep nesting: not a crash
    meta_path.unlink()
    meta_path.write_text("[" * 100_000)
    assert read_vector_cache(tmp_path, embedder=FP) is None
    assert read_vector_cache(tmp_path / "missing", embedder=FP) is None


# --- the same decision with and without a daemon, through the real hook process (slow) -------


def hook_decisions(repo: Path, prompts: Sequence[str], env: dict[str, str]) -> list[str]:
    from tests.hook_runs import prompt_input, run_hook

    found = []
    for prompt in prompts:
        ran = run_hook("user-prompt-submit", prompt_input(prompt, repo), repo, env=env)
        assert ran.returncode == 0, ran.stderr
        found.append(ran.context() if ran.stdout.strip() else "")
    return found


@pytest.mark.slow
def test_the_same_prompts_get_the_same_decision_with_and_without_a_daemon(repo: Path) -> None:
    from local_recall.recall import Recall
    from local_recall.settings import Settings
    from tests.conftest import clean_env
    from tests.daemon_runs import lr, stop_and_reap, wait_for
    from tests.hook_runs import hook_env, log_text

    recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
    recall.add("Run tests with make test", "Run the test suite with make test; it runs pytest.")
    recall.add("Release checklist", "Bump the version, tag, push the tag, publish the wheel.")
    recall.sync_index()  # what the daemon or `local-recall index` did before this session
    prompts = [
        "how do I run the tests?",  # the one-memory case of the relevance issue
        "how do we publish a release?",
        "what is the capital of France?",  # nothing to find
        "thanks!",  # nothing to look up: never searched
    ]
    cold = hook_decisions(repo, prompts, hook_env(repo))
    assert "searching in-process" in log_text(repo)
    assert "make test" in cold[0] and "Release checklist" not in cold[0]
    assert "publish the wheel" in cold[1]
    assert cold[2:] == ["", ""]
    env = hook_env(repo, {"LOCAL_RECALL_HOOKS_QUERY_TIMEOUT_MS": "30000"})
    started = lr(repo, "daemon", "start", env=env)
    assert started.returncode == 0, started.stderr
    try:
        wait_for(lambda: (repo / "local-recall" / "state" / "daemon.json").exists(), 60)
        before = log_text(repo).count("searching in-process")
        warm = hook_decisions(repo, prompts, env)
        assert log_text(repo).count("searching in-process") == before  # the daemon answered
    finally:
        stop_and_reap(repo)
    assert warm == cold


def test_term_statistics_kept_by_difference_equal_a_count_from_scratch(tmp_path: Path) -> None:
    """RelevanceInputs.compute_stats updates its counts by what changed between syncs; after
    any sequence of new, edited, re-read and deleted memories they equal `term_stats` of all."""
    import random
    from datetime import UTC, datetime

    from local_recall.memory.model import Memory
    from local_recall.search.relevance_inputs import RelevanceInputs

    rng = random.Random(3)
    vocabulary = [
        "cache",
        "lock",
        "index",
        "resolver",
        "wheel",
        "proxy",
        "retry",
        "token",
        "hook",
        "daemon",
        "socket",
    ]

    def memory(key: str) -> Memory:
        def text(n: int) -> str:
            return " ".join(rng.sample(vocabulary, n))

        return Memory(
            id=key,
            subject=text(3),
            body=text(rng.randrange(1, 8)),
            keywords=tuple(rng.sample(vocabulary, rng.randrange(3))),
            applies_to="global",
            occurred_at=datetime(2026, 1, 1, tzinfo=UTC),
            content_hash="x",
        )

    inputs = RelevanceInputs(tmp_path)
    memories = {f"episodic/{i}": memory(str(i)) for i in range(30)}
    for _ in range(40):
        for key in rng.sample(sorted(memories), rng.randrange(3)):
            del memories[key]
        for _ in range(rng.randrange(4)):
            key = f"episodic/{rng.randrange(45)}"
            memories[key] = memory(key)  # new, or an edit of one already counted
        if rng.random() < 0.3:  # the same memories read again: equal, not the same objects
            memories = {k: replace_memory(m) for k, m in memories.items()}
        got = inputs.compute_stats(dict(memories))  # a snapshot, as the searcher's loads are
        expected = rel.term_stats(
            rel.memory_terms(m.subject, m.keywords, m.body) for m in memories.values()
        )
        assert (got.documents, got.df) == (expected.documents, expected.df)
        assert all(count > 0 for count in got.df.values())


def replace_memory(memory: Any) -> Any:
    from dataclasses import replace

    return replace(memory)


def test_coverage_scores_rules_out_a_memory_only_when_no_word_can_match() -> None:
    """The no-daemon path's word coverage skips splitting an ASCII memory that does not hold
    any query stem as a substring: the scores are those of splitting every memory."""
    from local_recall.search.scoring import coverage_scores
    from local_recall.search.text_terms import words

    def plain(terms: list[str], memories: dict[str, Memory]) -> dict[str, float]:
        stems = [t[:6] for t in terms if len(t) > 1]
        found = {}
        for key, m in memories.items():
            have = {w[:6] for w in words(f"{m.subject} {' '.join(m.keywords)} {m.body}")}
            hits = sum(1 for s in stems if s in have)
            if hits:
                found[key] = hits / len(stems)
        return found

    texts = {
        "camel": ("ProcessedLog rotates", "The LogRotator keeps 3 files.", ("ops",)),
        "inside": ("Unrelated", "A catalogue of cats (cat inside a word is no match).", ()),
        "prefix": ("Deduplicating saves", "dedup_check runs first; filelock guards it.", ()),
        "accent": ("Café cache", "Der Zeitplaner lädt die Konfiguration.", ("zeit",)),
        "ligature": ("ﬁle locks", "The \ufb01le is locked (NFKC turns the ligature into fi).", ()),
        "upper": ("RETRY BACKOFF", "QUEUE WORKER RETRIES", ("Backoff",)),
        "none": ("Release checklist", "Bump the version, tag, push.", ()),
    }
    memories = {
        key: Memory(
            id=key,
            subject=s,
            body=b,
            keywords=k,
            applies_to="global",
            occurred_at=datetime(2025, 1, 1, tzinfo=UTC),
            content_hash=key,
        )
        for key, (s, b, k) in texts.items()
    }
    for query in (
        ["cat", "processed", "log"],
        ["deduplicate", "filelock", "dedup"],
        ["zeitplaner", "lädt", "café", "cache"],
        ["file", "locks"],
        ["retry", "backoff", "queue"],
        ["x", "version"],
        ["nothing", "here"],
    ):
        assert coverage_scores(query, memories) == plain(query, memories), query
