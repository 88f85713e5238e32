"""What a session was shown, prompt by prompt: which memories in full and which as pointers.
Pure: JSON lines in, `Seen` out (context/seen_log.py keeps the file, one per session).

The prompt hook shows a memory in full once per session and points at it once
(context/prompt.py: `fill_budget(seen=…)`): the text stays in the session's context for every
later turn, so repeating it only spends tokens. The same record says what each prompt was
shown, for learning which memories help (docs/hooks.md#once-per-session). It holds ids and
the prompt's id, never the prompt's text. A line that does not parse is skipped: the file sits
in state/, which a hostile checkout may have planted.
"""

from collections.abc import Sequence

from local_recall.context.prompt import Seen, Selection
from local_recall.learning.shown import MAX_ID_CHARS, ShownLine, parse_lines

# The record's lines are parsed in learning/shown.py: the daemon's pass reads them too.
__all__ = ["ShownLine", "parse_lines", "seen_of", "shown_line", "span_line"]


def shown_line(selection: Selection, *, at: str, prompt_id: str) -> ShownLine:
    return ShownLine(
        at,
        prompt_id[:MAX_ID_CHARS],
        tuple(note.id for note in selection.shown),
        tuple(note.id for note in selection.pointers),
    )


def seen_of(shown: Sequence[ShownLine]) -> Seen:
    """What the session's context still holds: every memory shown in full, every memory
    pointed at, since it started or was last compacted (a `span` line: compaction took the
    earlier text out of the context, so those memories may be shown again)."""
    start = max((i + 1 for i, line in enumerate(shown) if line.span), default=0)
    current = shown[start:]
    full = frozenset(i for line in current for i in line.full)
    pointed = frozenset(i for line in current for i in line.pointers)
    return Seen(full, pointed - full)


def span_line(*, at: str, span: str = "compact") -> ShownLine:
    """The line that opens a new span of a session's record (a SessionStart `compact`)."""
    return ShownLine(at, "", (), (), span)
