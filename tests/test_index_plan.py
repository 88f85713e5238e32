"""Pure decisions of the index and search: sync planning, query words, fusion, ranking."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from local_recall.memory.model import Memory
from local_recall.search.index import INDEX_FORMAT, IndexMeta, decide_rebuild
from local_recall.search.index_plan import (
    Fingerprint,
    IndexPlan,
    embedded_text,
    fingerprint,
    fts_document,
    plan_index_sync,
)
from local_recall.search.searcher import (
    Weights,
    candidate_depth,
    fuse,
    rank,
    snippet,
    vector_signal,
)
from local_recall.search.text_terms import identifier_parts, query_terms, split_identifier

A, B, C = "episodic/a", "episodic/b", "episodic/c"


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


def test_vector_signal_maps_cosine_to_unit_range() -> None:
    assert vector_signal(0.0) == 0.0 and vector_signal(0.2) == 0.0 and vector_signal(1.0) == 1.0
    assert abs(vector_signal(0.6) - 0.5) < 1e-9 and vector_signal(0.9) > vector_signal(0.8)


def test_fuse_weights_signals_and_renormalises_missing_ones() -> None:
    scores = fuse({A: 0.6}, {A: 10.0, B: 5.0}, {B: 1.0}, weights=Weights(0.5, 0.3, 0.2))
    assert abs(scores[A] - (0.5 * 0.5 + 0.3 * 1.0)) < 1e-9
    assert abs(scores[B] - (0.3 * 0.5 + 0.2 * 1.0)) < 1e-9
    text_only = fuse({}, {A: 10.0, B: 5.0}, {}, use_vector=False, use_fuzzy=False)
    assert text_only == {A: 1.0, B: 0.5}
    # a weak text match in a tiny store is not a perfect one
    assert fuse({}, {A: 2.0}, {}, use_vector=False, use_fuzzy=False) == {A: 0.4}
    assert fuse({}, {}, {}, use_vector=False, use_text=False, use_fuzzy=False) == {}


def test_a_cut_off_candidate_list_imputes_its_last_score() -> None:
    # B was not among the vector candidates (the list was full): it gets the last cosine
    full = fuse({A: 0.9, C: 0.6}, {B: 10.0}, {}, vector_missing=0.6, use_fuzzy=False)
    assert abs(full[B] - (0.6 * vector_signal(0.6) + 0.3) / 0.9) < 1e-9
    short = fuse({A: 0.9, C: 0.6}, {B: 10.0}, {}, use_fuzzy=False)
    assert abs(short[B] - 0.3 / 0.9) < 1e-9


def test_candidate_depth() -> None:
    assert candidate_depth(10, 5, 20_000, filtered=False) == 5
    assert candidate_depth(10, 5_000, 20_000, filtered=False) == 100
    assert candidate_depth(10, 5_000, 20_000, filtered=True) == 400
    assert candidate_depth(10, 100_000, 20_000, filtered=False) == 50
    assert candidate_depth(40, 100_000, 20_000, filtered=False) == 200


@given(
    st.dictionaries(st.sampled_from("abc"), st.floats(-1, 1)),
    st.dictionaries(st.sampled_from("abc"), st.floats(0, 50)),
    st.dictionaries(st.sampled_from("abc"), st.floats(0, 1)),
)
def test_fused_scores_stay_in_unit_range(
    v: dict[str, float], t: dict[str, float], f: dict[str, float]
) -> None:
    for score in fuse(v, t, f).values():
        assert 0.0 <= score <= 1.0


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
