"""Pure decisions of the index and search: sync planning, query words, scoring, ranking, and
the search contract's values."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from local_recall.errors import InvalidInput
from local_recall.memory.model import Memory
from local_recall.search.index.plan import (
    INDEX_FORMAT,
    Fingerprint,
    IndexMeta,
    IndexPlan,
    decide_rebuild,
    embedded_text,
    fingerprint,
    fts_document,
    plan_index_sync,
)
from local_recall.search.limits import MAX_LIMIT, MAX_QUERY_CHARS
from local_recall.search.query import SearchHit, SearchQuery, SearchResult, check_query_text
from local_recall.search.relevance import DEFAULT_THRESHOLD, Features, relevance
from local_recall.search.scoring import (
    ANN_FROM_ROWS,
    BM25,
    COVERAGE,
    EXACT_NEAREST_MAX_ROWS,
    FUZZY,
    VECTOR,
    Engines,
    Signals,
    candidate_depth,
    choose_engines,
    features_of,
    gather_signals,
    ran_signals,
    rank,
    score_hit,
    snippet,
    with_features,
)
from local_recall.search.text_terms import identifier_parts, query_terms, split_identifier

A, B, C = "episodic/a", "episodic/b", "episodic/c"
HYBRID = frozenset({VECTOR, BM25, COVERAGE, FUZZY})


def memory(
    subject: str = "Subject",
    body: str = "Body text",
    *,
    keywords: tuple[str, ...] = (),
    scope: str = "global",
    when: int = 0,
    memory_id: str = "m1",
) -> Memory:
    return Memory(
        id=memory_id,
        subject=subject,
        body=body,
        keywords=keywords,
        applies_to=scope,
        occurred_at=datetime.fromtimestamp(1_700_000_000 + when, UTC),
        content_hash="h-" + body,
    )


# --- plan_index_sync ------------------------------------------------------------------------


def test_new_memory_is_embedded() -> None:
    plan = plan_index_sync(on_disk={A: Fingerprint("t1", "m1")}, indexed={})
    assert plan == IndexPlan(to_embed=(A,), to_update=(), to_remove=())


def test_text_edit_reembeds() -> None:
    plan = plan_index_sync(
        on_disk={A: Fingerprint("t2", "m1")}, indexed={A: Fingerprint("t1", "m1")}
    )
    assert plan == IndexPlan(to_embed=(A,), to_update=(), to_remove=())


def test_metadata_edit_does_not_reembed() -> None:
    plan = plan_index_sync(
        on_disk={A: Fingerprint("h1", "m2")}, indexed={A: Fingerprint("h1", "m1")}
    )
    assert plan == IndexPlan(to_embed=(), to_update=(A,), to_remove=())


def test_gone_or_unreadable_file_is_removed_and_unchanged_is_left() -> None:
    # an unparsable file is simply absent from on_disk: its memory leaves the results
    plan = plan_index_sync(
        on_disk={A: Fingerprint("t", "m"), C: Fingerprint("t", "m")},
        indexed={A: Fingerprint("t", "m"), B: Fingerprint("t", "m"), C: Fingerprint("x", "m")},
    )
    assert plan == IndexPlan(to_embed=(C,), to_update=(), to_remove=(B,))
    assert plan_index_sync(
        on_disk={A: Fingerprint("t", "m")}, indexed={A: Fingerprint("t", "m")}
    ).is_empty


@given(
    st.dictionaries(
        st.sampled_from("abcdef"), st.tuples(st.sampled_from("xy"), st.sampled_from("pq"))
    ),
    st.dictionaries(
        st.sampled_from("abcdef"), st.tuples(st.sampled_from("xy"), st.sampled_from("pq"))
    ),
)
def test_plan_partitions_the_keys(
    disk: dict[str, tuple[str, str]], index: dict[str, tuple[str, str]]
) -> None:
    on_disk = {k: Fingerprint(*v) for k, v in disk.items()}
    indexed = {k: Fingerprint(*v) for k, v in index.items()}
    plan = plan_index_sync(on_disk, indexed)
    touched = [*plan.to_embed, *plan.to_update, *plan.to_remove]
    assert len(touched) == len(set(touched))
    assert set(plan.to_remove) == set(indexed) - set(on_disk)
    unchanged = {k for k in on_disk if indexed.get(k) == on_disk[k]}
    assert set(plan.to_embed) | set(plan.to_update) == set(on_disk) - unchanged


# --- what a row holds -----------------------------------------------------------------------


def test_keywords_scope_and_date_are_metadata_subject_and_body_are_text() -> None:
    base = fingerprint(memory(), ())
    assert fingerprint(memory(keywords=("k",)), ("k",)).text == base.text
    assert fingerprint(memory(keywords=("k",)), ("k",)).meta != base.meta
    assert fingerprint(memory(scope="area:x"), ()).text == base.text
    assert fingerprint(memory(scope="area:x"), ()).meta != base.meta
    assert fingerprint(memory(when=5), ()).text == base.text
    assert fingerprint(memory(subject="Other"), ()).text != base.text
    assert fingerprint(memory(body="Other body"), ()).text != base.text


def test_embedded_text_does_not_repeat_a_subject_the_body_starts_with() -> None:
    assert embedded_text(memory("Use filelock", "Why: races")) == "Use filelock\nWhy: races"
    assert embedded_text(memory("Caroline: I went to", "Caroline: I went to a group")) == (
        "Caroline: I went to a group"
    )


def test_fts_document_has_subject_keywords_body_and_identifier_words() -> None:
    doc = fts_document(memory("The ProcessedLog table", "see procesed_log"), ("dedup",))
    assert "dedup" in doc and "see procesed_log" in doc
    assert doc.rstrip().endswith("processed log procesed log")


# --- query words ----------------------------------------------------------------------------


def test_identifiers_split_into_words() -> None:
    assert split_identifier("ProcessedLog") == ("processed", "log")
    assert split_identifier("procesed_log") == ("procesed", "log")
    assert split_identifier("getHTTPResponse") == ("get", "http", "response")
    assert split_identifier("plain") == ()
    assert identifier_parts("use the MemoryStore.scan() method") == ["memory", "store", "scan"]


def test_query_terms_drop_stop_words_and_syntax() -> None:
    assert query_terms("How do we deduplicate memories?") == ["deduplicate", "memories"]
    assert query_terms('a OR b AND "') == ["b"]
    assert query_terms("title:foo) (bar* -baz") == ["title", "foo", "bar", "baz"]
    assert query_terms("") == [] and query_terms("🙂🙂") == []
    assert query_terms("ProcessedLog") == ["processedlog", "processed", "log"]
    assert len(query_terms("word " * 5000 + " ".join(f"w{i}" for i in range(500)))) <= 48


@given(st.text(max_size=300))
def test_query_terms_are_plain_words(text: str) -> None:
    for term in query_terms(text):
        assert term and all(ch.isalnum() for ch in term)


# --- fusion and ranking ---------------------------------------------------------------------


def test_candidate_depth() -> None:
    assert candidate_depth(10, 5, filtered=False) == 5
    assert candidate_depth(10, 4_000, filtered=False) == 100
    assert candidate_depth(10, 4_000, filtered=True) == 400
    assert candidate_depth(10, 4_999, filtered=False) == 100
    assert candidate_depth(10, 100_000, filtered=False) == 50
    assert candidate_depth(40, 100_000, filtered=False) == 200


def test_the_engines_follow_one_threshold() -> None:
    """The exact product answers up to EXACT_NEAREST_MAX_ROWS vectors; above, the ANN index
    does (built from the next row). The depth follows the store's size alone."""
    assert EXACT_NEAREST_MAX_ROWS == 150_000 and ANN_FROM_ROWS == 150_001
    assert choose_engines(10, 4_000, vectors=12_000) == Engines("exact", "index", 100)
    assert choose_engines(10, 40_000, vectors=150_000) == Engines("exact", "index", 50)
    assert choose_engines(10, 50_000, vectors=150_001) == Engines("index", "index", 50)
    # a date filter: LanceDB (a flat, exact scan below the threshold); no dates in the keywords
    dated = choose_engines(10, 4_000, vectors=12_000, dated=True, keywords=True)
    assert dated == Engines("index", "index", 100)
    # no cache (none built yet, the embedder down): LanceDB
    assert choose_engines(10, 4_000, vectors=None) == Engines("index", "index", 100)
    assert choose_engines(10, 5_000, vectors=0).vector == "index"
    # the keyword index where it is kept, unless BM25 over the whole document is asked
    assert choose_engines(10, 5_000, vectors=15_000, keywords=True).text == "keywords"
    assert choose_engines(5, 9, vectors=9, keywords=True, whole_text=True).text == "index"
    assert choose_engines(10, 4_000, vectors=12_000, filtered=True).depth == 400


@given(
    st.one_of(st.none(), st.floats(-1, 1)),
    st.floats(0, 1),
    st.floats(0, 1),
    st.floats(0, 1),
    st.floats(0, 1),
    st.sampled_from([0.0, 1.0]),
)
def test_scores_stay_in_unit_range(
    cosine: float | None, cov: float, head: float, fuzzy: float, unknown: float, single: float
) -> None:
    signals = Signals(HYBRID, cosine, None, 0.0, cov, fuzzy, 1, head, unknown, single)
    assert 0.0 <= score_hit(signals) <= 1.0


def test_rank_filters_scope_and_orders_ties_newest_first() -> None:
    memories = {
        A: memory(scope="file:src/a.py", when=1, memory_id="a"),
        B: memory(scope="global", when=2, memory_id="b"),
        C: memory(scope="file:docs/x.md", when=3, memory_id="c"),
    }
    scores = {A: 0.5, B: 0.5, C: 0.9}
    kw = {"since": None, "until": None, "min_score": 0.0, "limit": 10}
    assert rank(scores, memories, scope=None, include_global=True, **kw) == [
        (C, 0.9),
        (B, 0.5),
        (A, 0.5),
    ]
    assert [k for k, _ in rank(scores, memories, scope="file:src/", include_global=True, **kw)] == [
        B,
        A,
    ]
    assert [
        k for k, _ in rank(scores, memories, scope="file:src/", include_global=False, **kw)
    ] == [A]
    assert [
        k
        for k, _ in rank(
            scores,
            memories,
            scope=None,
            include_global=True,
            since=None,
            until=None,
            min_score=0.6,
            limit=10,
        )
    ] == [C]


def test_snippet_centres_on_a_query_word() -> None:
    body = "intro " * 100 + "the dedup happens here " + "outro " * 100
    text = snippet(body, ["dedup"])
    assert "dedup" in text and text.startswith("…") and len(text) < 260


def test_rebuild_decision() -> None:
    meta = IndexMeta(format=INDEX_FORMAT, embedder="minilm:m:384", identity="minilm:m", dim=384)
    assert decide_rebuild(None, fingerprint="minilm:m:384", identity="minilm:m") == "no index yet"
    assert decide_rebuild(meta, fingerprint="minilm:m:384", identity="minilm:m") is None
    assert decide_rebuild(meta, fingerprint="ollama:n:768", identity="ollama:n") is not None
    # the configured embedder cannot be reached: its own index is kept, another's is not
    assert decide_rebuild(meta, fingerprint=None, identity="minilm:m") is None
    assert decide_rebuild(meta, fingerprint=None, identity="ollama:n") is not None
    old = IndexMeta(format=INDEX_FORMAT - 1, embedder="minilm:m:384", identity="minilm:m", dim=384)
    assert decide_rebuild(old, fingerprint="minilm:m:384", identity="minilm:m") is not None


# --- the one scoring function ---------------------------------------------------------------


def test_score_hit_is_the_calibrated_relevance_of_the_features() -> None:
    answer = Signals(HYBRID, cosine=0.6, coverage=1.0, fuzzy=1.0, head_coverage=1.0)
    assert score_hit(answer) == relevance(Features(0.6, 1.0, 1.0, 1.0, 0.0, 0.0))
    assert score_hit(answer) > DEFAULT_THRESHOLD
    # absolute, not relative: the best of unrelated candidates stays low
    unrelated = Signals(HYBRID, cosine=0.12, coverage=0.2, fuzzy=0.0, head_coverage=0.0)
    assert score_hit(unrelated) < 0.05
    # a raw BM25 (however high) is not a feature: only what the features say counts
    loud = unrelated._replace(bm25=30.0, bm25_best=30.0)
    assert score_hit(loud) == score_hit(unrelated)
    assert score_hit(Signals(ran=frozenset())) == 0.0
    # no evidence at all (no word, no identifier, cosine under 0.2): not a hit, score 0
    assert score_hit(Signals(HYBRID, cosine=0.19, coverage=0.0, fuzzy=0.0)) == 0.0
    assert score_hit(Signals(HYBRID, cosine=None, coverage=0.0, fuzzy=0.0)) == 0.0
    assert 0.0 < score_hit(Signals(HYBRID, cosine=0.2, coverage=0.0, fuzzy=0.0)) < 0.05


def test_without_the_vector_signal_the_word_only_model_scores() -> None:
    words = frozenset({COVERAGE, FUZZY})
    # a cosine gathered without the vector signal (cannot happen, but) is not used
    lexical = Signals(words, cosine=0.9, coverage=1.0, fuzzy=1.0, head_coverage=1.0)
    assert score_hit(lexical) == relevance(Features(None, 1.0, 1.0, 1.0, 0.0, 0.0))
    assert score_hit(lexical) > DEFAULT_THRESHOLD
    # the vector ran but this memory has no vector: the word-only model too
    assert score_hit(lexical._replace(ran=HYBRID, cosine=None)) == score_hit(lexical)


def test_with_features_fills_what_score_hit_reads() -> None:
    raw = Signals(HYBRID, cosine=0.5, bm25=3.0, bm25_best=6.0, terms=2)
    filled = with_features(raw, Features(0.61, 0.7, 0.4, 0.5, 0.1, 1.0))
    assert filled == Signals(HYBRID, 0.61, 3.0, 6.0, 0.7, 0.5, 2, 0.4, 0.1, 1.0)
    assert features_of(filled) == Features(0.61, 0.7, 0.4, 0.5, 0.1, 1.0)
    assert ran_signals(vector=False, text=True, fuzzy=True, coverage=True) == {COVERAGE, FUZZY}


def test_gather_signals_keeps_raw_values_and_imputes_cut_off_lists() -> None:
    ran = frozenset({VECTOR, BM25})
    found = gather_signals({A: 0.9}, {B: 6.0}, {}, ran=ran, vector_missing=0.5, terms=3)
    assert found[A] == Signals(ran=ran, cosine=0.9, bm25=None, bm25_best=6.0, terms=3)
    assert found[B] == Signals(ran=ran, cosine=0.5, bm25=6.0, bm25_best=6.0, terms=3)
    covered = gather_signals({}, {A: 0.5}, {}, ran=frozenset({COVERAGE}))
    assert covered[A].coverage == 0.5 and covered[A].bm25 is None


# --- the search contract --------------------------------------------------------------------


def test_search_query_validates_and_normalises() -> None:
    query = SearchQuery("q", scope="file:./src//a.py")
    assert query.scope == "file:src/a.py" and query.mode == "hybrid" and query.kind == "episodic"
    for bad in (
        {"mode": "magic"},
        {"kind": "dreams"},
        {"limit": 0},
        {"limit": MAX_LIMIT + 1},
        {"min_score": 1.5},
        {"scope": "bogus"},
    ):
        with pytest.raises(InvalidInput):
            SearchQuery("q", **bad)
    assert SearchQuery("q", limit=MAX_LIMIT).limit == MAX_LIMIT


def test_typed_queries_over_the_limit_are_refused_with_the_limit_named() -> None:
    assert check_query_text("  dedup  ") == "dedup"
    with pytest.raises(InvalidInput, match="query is empty"):
        check_query_text("   ")
    with pytest.raises(InvalidInput, match=f"the limit is {MAX_QUERY_CHARS}"):
        check_query_text("x" * (MAX_QUERY_CHARS + 1))


def test_a_result_is_degraded_exactly_when_it_gives_a_reason() -> None:
    hit = SearchHit(memory("Use filelock", "Two sessions save at once."), 0.5, "Two sessions")
    assert (hit.id, hit.subject, hit.kind, hit.path) == ("m1", "Use filelock", "episodic", "")
    assert hit.to_json(with_body=True)["body"] == "Two sessions save at once."
    assert "body" not in hit.to_json()
    assert not SearchResult((hit,)).degraded
    degraded = SearchResult((hit,), "files only", frozenset({COVERAGE, FUZZY}))
    assert degraded.degraded
    assert degraded.to_json()["signals"] == ["coverage", "fuzzy"]
