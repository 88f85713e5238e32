"""Consolidation: which memories are near-duplicates and what one memory a group becomes."""

from __future__ import annotations

from datetime import UTC, datetime

from local_recall.lifecycle.consolidation import (
    Candidate,
    Pair,
    Thresholds,
    group_pairs,
    is_near_duplicate,
    plan_consolidation,
    propose,
)


def _candidate(
    id_: str, body: str, *, day: int, reviewed: bool = True, kw: tuple[str, ...] = ()
) -> Candidate:
    return Candidate(
        id=id_,
        subject=f"subject {id_}",
        body=body,
        keywords=kw,
        anchors=(f"{id_}.py",),
        occurred_at=datetime(2026, 1, day, tzinfo=UTC),
        reviewed=reviewed,
        sources=(f"session {id_}",),
    )


def test_groups_are_connected_components_of_near_duplicates() -> None:
    pairs = [
        Pair("a", "b", 0.93, 70),
        Pair("b", "c", 0.96, 10),  # nearly the same vector
        Pair("d", "e", 0.90, 30),  # close in meaning, different words: not a duplicate
        Pair("x", "y", 0.80, 95),  # same words, different meaning
    ]
    assert group_pairs(pairs) == [("a", "b", "c")]


def test_proposal_keeps_the_best_written_and_unions_the_rest() -> None:
    a = _candidate("a", "short", day=3, kw=("lock",))
    b = _candidate("b", "a fuller explanation of the lock", day=5, kw=("Lock", "dedup"))
    c = _candidate("c", "the fullest explanation of the lock and why", day=1, reviewed=False)
    proposal = propose([a, b, c])
    assert proposal.keep == "b"  # c is longer but unreviewed
    assert set(proposal.remove) == {"a", "c"}
    assert proposal.keywords == ("Lock", "dedup")
    assert set(proposal.anchors) == {"a.py", "b.py", "c.py"}
    assert proposal.occurred_at == datetime(2026, 1, 1, tzinfo=UTC)
    assert len(proposal.sources) == 3


def test_plan_skips_groups_whose_members_are_gone() -> None:
    only = {"a": _candidate("a", "x", day=1)}
    assert plan_consolidation([Pair("a", "b", 0.99, 99)], only) == []


def test_a_chain_is_cut_at_the_kept_memory() -> None:
    # a~b and b~c, but a and c are not alike: b is kept (fullest text), and both are its pairs;
    # with a kept instead, c would wait for the next run.
    pairs = [Pair("a", "b", 0.97, 90), Pair("b", "c", 0.97, 90)]
    group = {
        "a": _candidate("a", "the lock", day=1),
        "b": _candidate("b", "the lock serialises writes", day=2),
        "c": _candidate("c", "writes", day=3),
    }
    assert [(p.keep, set(p.remove)) for p in plan_consolidation(pairs, group)] == [
        ("b", {"a", "c"})
    ]
    group["a"] = _candidate("a", "the lock serialises every write of a memory", day=1)
    assert [(p.keep, p.remove) for p in plan_consolidation(pairs, group)] == [("a", ("b",))]


def test_thresholds_are_parameters() -> None:
    pair = Pair("a", "b", 0.80, 70)
    assert not is_near_duplicate(pair)
    assert is_near_duplicate(pair, Thresholds(cosine_with_text=0.8, text_ratio=70))


def test_nearest_neighbours_from_vectors_without_all_pairs_text() -> None:
    import numpy as np

    from local_recall.lifecycle.neighbours import candidate_pairs, nearest

    matrix = np.array(
        [[1, 0, 0], [0.99, 0.1, 0], [0, 1, 0], [0, 0.98, 0.2], [0, 0, 1], [0, 0, 0]],
        dtype=np.float32,
    )
    assert [(i, j) for i, j, _ in nearest(matrix, floor=0.9)] == [(0, 1), (2, 3)]
    assert [(i, j) for i, j, _ in nearest(matrix, floor=0.9, k=1)] == [(0, 1), (2, 3)]
    compared: list[tuple[str, str]] = []

    def ratio(a: str, b: str) -> float:
        compared.append((a, b))
        return 80.0

    keys = ["a", "b", "c", "d", "e", "z"]
    texts = {k: k for k in keys if k != "d"}  # d's memory is gone: its pair is skipped
    pairs = candidate_pairs(keys, matrix, texts, floor=0.9, ratio=ratio)
    assert [(p.a, p.b) for p in pairs] == [("a", "b")]
    assert compared == [("a", "b")]  # rapidfuzz ran on neighbour pairs only
