"""Each session's record of what its prompts were shown: `state/sessions/<key>.jsonl`, one
`ShownLine` per prompt that got anything (written by context/seen_log.py, read by the prompt hook
through context/seen.py and by the daemon's pass to learn what the session did with them).
Pure: lines in, values out; learning/usage_log.py `read_shown` reads the file.

It holds ids and the prompt's id, never the prompt's text. A line that does not parse is
skipped: the file sits in state/, which a hostile checkout may have planted. Never read through
a symlink; the file name is a hash of the session id (`session_key`), so an odd id names no
other path.
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
    before it left the context (context/seen.py)."""

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
