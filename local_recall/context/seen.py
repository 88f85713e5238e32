"""What a session was shown, prompt by prompt: which memories in full and which as pointers.
Pure: JSON lines in, `Seen` out (hooks/seen_log.py keeps the file, one per session).

The prompt hook shows a memory in full once per session and points at it once
(context/prompt.py: `fill_budget(seen=…)`): the text stays in the session's context for every
later turn, so repeating it only spends tokens. The same record says what each prompt was
shown, for learning which memories help (docs/hooks.md#once-per-session). It holds ids and
the prompt's id, never the prompt's text. A line that does not parse is skipped: the file sits
in state/, which a hostile checkout may have planted.
"""

import json
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from local_recall.context.prompt import Seen, Selection

MAX_IDS_PER_LINE = 50
MAX_ID_CHARS = 64


class ShownLine(NamedTuple):
    """One prompt's answer: when, which prompt (its id, "" if unknown), what in which tier."""

    at: str  # ISO 8601 UTC
    prompt_id: str
    full: tuple[str, ...]
    pointers: tuple[str, ...]

    def to_line(self) -> str:
        return json.dumps(self._asdict(), separators=(",", ":")) + "\n"


def shown_line(selection: Selection, *, at: str, prompt_id: str) -> ShownLine:
    return ShownLine(
        at,
        prompt_id[:MAX_ID_CHARS],
        tuple(note.id for note in selection.shown),
        tuple(note.id for note in selection.pointers),
    )


def _ids(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(item for item in value[:MAX_IDS_PER_LINE] if isinstance(item, str) and item)


def parse_lines(lines: Iterable[str]) -> list[ShownLine]:
    """The lines that parse; anything else is skipped, never fatal."""
    parsed = []
    for line in lines:
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        at, prompt = data.get("at"), data.get("prompt_id")
        parsed.append(
            ShownLine(
                at if isinstance(at, str) else "",
                prompt if isinstance(prompt, str) else "",
                _ids(data.get("full")),
                _ids(data.get("pointers")),
            )
        )
    return parsed


def seen_of(shown: Sequence[ShownLine]) -> Seen:
    """What the session has seen: every memory shown in full, every memory pointed at."""
    full = frozenset(i for line in shown for i in line.full)
    pointed = frozenset(i for line in shown for i in line.pointers)
    return Seen(full, pointed - full)
