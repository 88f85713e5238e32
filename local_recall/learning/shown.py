"""The session record's format: `state/sessions/<key>.jsonl`, one `ShownLine` per prompt that
got anything, and what it says (`Shown`, `first_shown`). Pure: lines in, values out;
learning/shown_log.py reads and appends the file.

The prompt hook shows a memory in full once per session and points at it once
(context/selection.py: `fill_budget(shown_before=…)`): the text stays in the session's context
for every later turn, so repeating it only spends tokens. The same record says what each prompt
was shown, for the daemon's pass to learn what the session did with those memories
(docs/hooks.md#once-per-session). It holds ids and the prompt's id, never the prompt's text. A
line that does not parse is skipped: the file sits in state/, which a hostile checkout may have
planted. The file name is a hash of the session id (`session_key`), so an odd id names no other
path.
"""

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal, NamedTuple

# How a prompt showed a memory (context/prompt.py's tiers). Here, not in outcomes.py, so that a
# hook's process appending a record line does not load the outcomes' parsers.
Tier = Literal["full", "pointer"]
SESSIONS_DIR = "sessions"
MAX_IDS_PER_LINE = 50
MAX_ID_CHARS = 64


class ShownLine(NamedTuple):
    """One prompt's answer: when, which prompt (its id, "" if unknown), what in which tier.
    Or, with `span` set ("compact"), where a new span of the session starts: what was shown
    before it left the context (`shown_of`)."""

    at: str  # ISO 8601 UTC
    prompt_id: str
    full: tuple[str, ...]
    pointers: tuple[str, ...]
    span: str = ""

    def to_line(self) -> str:
        data = self._asdict()
        if not self.span:
            del data["span"]
        return json.dumps(data, separators=(",", ":")) + "\n"


SPANS = frozenset({"compact"})


class Shown(NamedTuple):
    """What this session was already shown since it started or was last compacted."""

    full: frozenset[str] = frozenset()
    pointed: frozenset[str] = frozenset()


class FirstShown(NamedTuple):
    """When and how a memory was first shown in a session."""

    at: str
    tier: Tier


def session_key(session_id: str) -> str:
    """The 32 hex a session's record (and its outcomes, learning/outcomes.py) are named by."""
    import hashlib  # ~3 ms (OpenSSL): a hook's process appends with the daemon's key instead

    return hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()[:32]


def record_path(state_dir: Path, session_id: str) -> Path:
    return state_dir / SESSIONS_DIR / f"{session_key(session_id)}.jsonl"


def _ids(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(item for item in value[:MAX_IDS_PER_LINE] if isinstance(item, str) and item)


def parse_lines(lines: Iterable[str]) -> list[ShownLine]:
    """The lines that parse; anything else is skipped, never fatal."""
    parsed = []
    for line in lines:
        try:
            shown = _shown(json.loads(line))
        except Exception:  # any: 1,000 nested brackets raise RecursionError, not ValueError
            shown = None
        if shown is not None:
            parsed.append(shown)
    return parsed


def _shown(data: object) -> ShownLine | None:
    if not isinstance(data, dict):
        return None
    at, prompt, span = data.get("at"), data.get("prompt_id"), data.get("span")
    return ShownLine(
        at if isinstance(at, str) else "",
        prompt if isinstance(prompt, str) else "",
        _ids(data.get("full")),
        _ids(data.get("pointers")),
        span if isinstance(span, str) and span in SPANS else "",
    )


def first_shown(shown: Sequence[ShownLine]) -> Mapping[str, FirstShown]:
    """Every memory the session was shown, with its first prompt's time and tier."""
    first: dict[str, FirstShown] = {}
    for line in shown:
        for memory_id in line.full:
            first.setdefault(memory_id, FirstShown(line.at, "full"))
        for memory_id in line.pointers:
            first.setdefault(memory_id, FirstShown(line.at, "pointer"))
    return first


def shown_of(lines: Sequence[ShownLine]) -> Shown:
    """What the session's context still holds: every memory shown in full, every memory
    pointed at, since it started or was last compacted (a `span` line: compaction took the
    earlier text out of the context, so those memories may be shown again)."""
    start = max((i + 1 for i, line in enumerate(lines) if line.span), default=0)
    current = lines[start:]
    full = frozenset(i for line in current for i in line.full)
    pointed = frozenset(i for line in current for i in line.pointers)
    return Shown(full, pointed - full)


def shown_line(
    full: Iterable[str], pointers: Iterable[str], *, at: str, prompt_id: str
) -> ShownLine:
    """One prompt's line: the ids it showed in full and those it pointed at."""
    return ShownLine(at, prompt_id[:MAX_ID_CHARS], tuple(full), tuple(pointers))


def span_line(*, at: str, span: str = "compact") -> ShownLine:
    """The line that opens a new span of a session's record (a SessionStart `compact`)."""
    return ShownLine(at, "", (), (), span)
