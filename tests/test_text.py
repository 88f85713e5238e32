"""Untrusted text on one line: one rule, the strictest, wherever text from outside is shown."""

from __future__ import annotations

from local_recall.context.notes import one_line as note_line
from local_recall.org.plan import describe_store_error
from local_recall.text import one_line


def test_every_unprintable_character_becomes_a_space_and_runs_of_them_one() -> None:
    hostile = "Use\x1b[2J filelock\r\nnow\u2028then\u200b\u202eevil\x85end\t"
    assert one_line(hostile) == "Use [2J filelock now then evil end"
    assert one_line("  plain   words  ") == "plain words"
    assert one_line("") == ""


def test_a_long_line_is_cut_to_the_limit_with_its_mark() -> None:
    assert one_line("abcdefghij", 10) == "abcdefghij"
    assert one_line("abcdefghijk", 10) == "abcdefghi…"
    assert one_line("abcdefghijk", 10, mark="...") == "abcdefg..."
    assert one_line("abcdefghijk", 4, mark="") == "abcd"
    assert one_line("a\n\n\nb", 3) == "a b"  # folded first, then measured


def test_the_places_that_show_untrusted_text_use_it() -> None:
    # a memory's line in an agent's context: no escape sequence, no bidirectional override
    assert note_line("subject\x1b[31m red\u202e") == "subject [31m red"
    # an object store's error: spaces, not question marks, for what cannot be shown
    assert describe_store_error("no such\x07 object\u200b here") == "no such object here"
