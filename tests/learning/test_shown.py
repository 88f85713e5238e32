"""A session's record, as lines (learning/shown.py): what its context still holds, span by
span. Literals only."""

from __future__ import annotations

from local_recall.learning.shown import Shown, ShownLine, parse_lines, shown_of, span_line

A = "aaaaaaaa-0000-4000-8000-000000000001"
B = "bbbbbbbb-0000-4000-8000-000000000002"
C = "cccccccc-0000-4000-8000-000000000003"


def test_compaction_opens_a_new_span_of_the_session() -> None:
    shown = ShownLine("t1", "p1", (A,), (B,))
    span = span_line(at="t2")
    assert parse_lines([shown.to_line(), span.to_line()]) == [shown, span]
    assert shown_of([shown, span]) == Shown()  # compaction took them out of the context
    after = ShownLine("t3", "p2", (C,), ())
    assert shown_of([shown, span, after]) == Shown(full=frozenset({C}))
    # a span of a kind this version does not know is an ordinary (empty) line
    odd = parse_lines(['{"at": "t", "span": "reboot"}'])
    assert odd == [ShownLine("t", "", (), ())] and shown_of([shown, *odd]).full == {A}
