"""Untrusted text on one line: the one rule every place that shows or logs text from outside
(a memory, a transcript, another repository's row, a server's error) folds it with."""

from __future__ import annotations


def one_line(text: str, limit: int | None = None, *, mark: str = "…") -> str:
    """`text` as one line: every character that is not printable (controls, line and paragraph
    separators, format characters such as zero-width and bidirectional marks) a space, each run
    of whitespace one space, cut to `limit` characters ending in `mark` when it was longer.
    Strict because the line may reach a terminal or an agent's context, where an escape
    sequence or a line break would be read as something other than text."""
    flat = " ".join(text.split())
    if not flat.isprintable():  # rare: the common text only pays for the split and the check
        flat = " ".join("".join(c if c.isprintable() else " " for c in flat).split())
    if limit is None or len(flat) <= limit:
        return flat
    return flat[: max(limit - len(mark), 0)] + mark
