"""What a session did with a memory it was shown: one `Outcome` per (session, memory), the unit
everything learned from sessions is built from (docs/hooks.md#what-is-learned). Pure: values and
their JSON lines; learning/usage_log.py keeps the file (in state/)."""

import json
import re
from collections.abc import Iterable
from typing import Literal, NamedTuple, get_args

from local_recall.learning.shown import Tier
from local_recall.text import one_line

# followed: the agent read a pointed-at memory (get_memories/show with its id, or searched and
#   opened it); relied: the session's extraction pass said the work relied on it;
# ignored: shown and nothing of the above; disputed: the session found it wrong (reason given).
Use = Literal["followed", "relied", "ignored", "disputed"]

# How much a use says: a later, stronger outcome of the same (session, memory) replaces a weaker
# one (the pass sees a long session chunk by chunk: "ignored" first, "relied" later).
USE_RANK: dict[str, int] = {"ignored": 0, "followed": 1, "relied": 2, "disputed": 3}
TIERS: frozenset[str] = frozenset(get_args(Tier))
USES: frozenset[str] = frozenset(get_args(Use))
MAX_REASON_CHARS = 200
# state/ may be planted: a line longer than this is not even parsed.
MAX_LINE_CHARS = 1024

UUID_PATTERN = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_SESSION = re.compile(r"[0-9a-f]{32}")
# A timestamp is compared and sorted, never parsed for meaning: its shape is enough.
AT_PATTERN = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")


class Outcome(NamedTuple):
    memory_id: str  # the memory's full uuid
    session: str  # the 32-hex hash learning/shown.py names the session's record by
    at: str  # ISO 8601 UTC of the first prompt that showed it
    tier: Tier  # how it was first shown in that session
    use: Use
    # disputed: why (one line, ≤ 200 chars, from the model: data, not instructions); shown
    # inside a flag, where a newline would start a new line of the agent's context
    reason: str = ""


def outcome_line(outcome: Outcome) -> str:
    """One JSON object + "\\n"."""
    return json.dumps(outcome._asdict(), ensure_ascii=False, separators=(",", ":")) + "\n"


def _outcome(data: object) -> Outcome | None:
    if not isinstance(data, dict):
        return None
    memory_id, session, at = data.get("memory_id"), data.get("session"), data.get("at")
    tier, use, reason = data.get("tier"), data.get("use"), data.get("reason", "")
    valid = (
        isinstance(memory_id, str)
        and UUID_PATTERN.fullmatch(memory_id) is not None
        and isinstance(session, str)
        and _SESSION.fullmatch(session) is not None
        and isinstance(at, str)
        and AT_PATTERN.fullmatch(at) is not None
        and tier in TIERS
        and use in USES
        and isinstance(reason, str)
        # a multi-line or overlong reason was not written by append_outcomes
        and reason == one_line(reason, MAX_REASON_CHARS, mark="")
    )
    if not valid:
        return None
    return Outcome._make((memory_id, session, at, tier, use, reason))  # each checked above


def parse_outcomes(lines: Iterable[str]) -> list[Outcome]:
    """The lines that parse and validate, in order; any other line is skipped (hostile files)."""
    return parse_counted(lines)[0]


def parse_counted(lines: Iterable[str]) -> tuple[list[Outcome], int]:
    """`parse_outcomes` and how many non-blank lines it skipped (reported, never fatal)."""
    parsed: list[Outcome] = []
    skipped = 0
    for line in lines:
        if not line.strip():
            continue
        outcome = None
        if len(line) <= MAX_LINE_CHARS:
            try:
                outcome = _outcome(json.loads(line))
            # any: a list where a string belongs is unhashable (TypeError), 1,000 nested
            # brackets overflow the parser (RecursionError); one line is never fatal
            except Exception:
                outcome = None
        if outcome is None:
            skipped += 1
        else:
            parsed.append(outcome)
    return parsed, skipped


def one_per_session(outcomes: Iterable[Outcome]) -> dict[tuple[str, str], Outcome]:
    """One Outcome per (session, memory): the strongest use (`USE_RANK`), the first of equals,
    so a re-run of a session's pass (or a teammate's copy of a line) never counts twice."""
    kept: dict[tuple[str, str], Outcome] = {}
    for outcome in outcomes:
        key = (outcome.session, outcome.memory_id)
        if key not in kept or USE_RANK[outcome.use] > USE_RANK[kept[key].use]:
            kept[key] = outcome
    return kept
