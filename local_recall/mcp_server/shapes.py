"""What the MCP tools accept and return, as pure functions (tested with literals): argument
checks that raise `InvalidInput` with a message the agent can act on, and the JSON rows."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from local_recall.errors import InvalidInput, InvalidMemoryId
from local_recall.memory.id_prefix import looks_like_prefix
from local_recall.memory.model import Memory, estimate_tokens, parse_memory_id, parse_scope
from local_recall.memory.timestamps import format_timestamp, parse_timestamp

if TYPE_CHECKING:
    from local_recall.search.query import SearchHit

MAX_ANCHOR_CHARS = 100


# --- argument checks (pure) ---------------------------------------------------------------------


def check_range(value: int, name: str, low: int, high: int) -> int:
    if not low <= value <= high:
        raise InvalidInput(f"{name} must be between {low} and {high}, got {value}")
    return value


def check_text(value: str, name: str, max_chars: int) -> str:
    text = value.strip()
    if not text:
        raise InvalidInput(f"{name} is empty")
    if len(text) > max_chars:
        raise InvalidInput(f"{name} is {len(text)} characters; the limit is {max_chars}")
    return text


def parse_optional_scope(value: str | None) -> str | None:
    return None if value is None or not value.strip() else parse_scope(value)


def parse_when(value: str | None, name: str) -> datetime | None:
    if value is None or not value.strip():
        return None
    try:
        return parse_timestamp(check_text(value, name, MAX_ANCHOR_CHARS))
    except InvalidInput:
        raise InvalidInput(
            f"{name}: expected an ISO date or time such as 2025-01-31 or "
            f"2025-01-31T14:00:00Z, got {value[:MAX_ANCHOR_CHARS]!r}"
        ) from None


@dataclass(frozen=True, slots=True)
class Anchor:
    """Where a timeline is centred: on a memory (by id) or on a moment."""

    memory_id: str | None = None
    moment: datetime | None = None


def parse_anchor(value: str) -> Anchor:
    """A memory id, else an ISO time; anything else is refused with both options named."""
    text = check_text(value, "anchor", MAX_ANCHOR_CHARS)
    with contextlib.suppress(InvalidMemoryId):
        return Anchor(memory_id=parse_memory_id(text))
    try:
        return Anchor(moment=parse_timestamp(text))
    except InvalidInput:
        if looks_like_prefix(text):  # a short id: resolved against the store by the server
            return Anchor(memory_id=text)
        raise InvalidInput(
            f"anchor must be a memory id (UUID) or an ISO date/time, got {text!r}"
        ) from None


# --- shaping results (pure) ---------------------------------------------------------------------


def memory_tokens(memory: Memory) -> int:
    return estimate_tokens(f"{memory.subject}\n{memory.body}")


def hit_row(hit: SearchHit) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": hit.id,
        "subject": hit.subject,
        "date": format_timestamp(hit.occurred_at),
        "scope": hit.applies_to,
        "score": round(float(hit.score), 3),
        "tokens": hit.tokens,
    }
    # Lifecycle flags, only when they apply (docs/team.md): why it is stale, the unmerged branch.
    if hit.stale:
        row["stale"] = hit.stale
    if hit.branch:
        row["branch"] = hit.branch
    if hit.memory.unreviewed:  # written by the pipeline or an agent; no person has looked yet
        row["unreviewed"] = True
    if hit.memory.superseded_by:  # a newer memory replaced it: read that one
        row["superseded_by"] = hit.memory.superseded_by
    if hit.memory.disputed:  # a session found it wrong: check it against the code
        row["disputed"] = hit.memory.disputed.reason
    if hit.repo is not None:  # an org hit (docs/org.md): get_memories cannot read it, so
        row["repo"] = hit.repo  # its content comes with the row
        row["content"] = hit.memory.body
    return row


def memory_row(memory: Memory) -> dict[str, Any]:
    row = {
        "id": memory.id,
        "subject": memory.subject,
        "date": format_timestamp(memory.occurred_at),
        "scope": memory.applies_to,
        "tokens": memory_tokens(memory),
    }
    if memory.kind == "session":  # a session summary in a timeline (get_memories reads it)
        row["kind"] = "session_summary"
    if memory.unreviewed:
        row["unreviewed"] = True
    if memory.superseded_by:
        row["superseded_by"] = memory.superseded_by
    if memory.disputed:
        row["disputed"] = memory.disputed.reason
    return row


def summary_detail(memory: Memory) -> dict[str, Any]:
    """A session summary as the session_summaries tool returns it (the id is the session's)."""
    return {
        "session": memory.id,
        "subject": memory.subject,
        "date": format_timestamp(memory.occurred_at),
        "branch": memory.branch,
        "commit": memory.commit,
        "files": list(memory.files),
        "content": memory.body,
    }


def memory_detail(memory: Memory, root: Path) -> dict[str, Any]:
    path = None
    if memory.path is not None:
        try:
            path = memory.path.relative_to(root).as_posix()
        except ValueError:
            path = str(memory.path)
    return {
        "id": memory.id,
        "subject": memory.subject,
        "date": format_timestamp(memory.occurred_at),
        "scope": memory.applies_to,
        "keywords": list(memory.keywords),
        "source": memory.source,
        "path": path,
        "content": memory.body,
    }


def timeline_window(
    memories: Sequence[Memory], anchor: Anchor, before: int, after: int
) -> tuple[list[Memory], Memory | None]:
    """The `before` memories preceding the anchor and the `after` ones following it, in time
    order. An id anchor is included (and returned); for a time anchor, memories at exactly that
    moment count as "after". An id not in `memories` gives ([], None)."""
    ordered = sorted(memories, key=lambda m: (m.occurred_at, m.id))
    if anchor.memory_id is not None:
        index = next((i for i, m in enumerate(ordered) if m.id == anchor.memory_id), None)
        if index is None:
            return [], None
        return ordered[max(0, index - before) : index + 1 + after], ordered[index]
    assert anchor.moment is not None
    split = next((i for i, m in enumerate(ordered) if m.occurred_at >= anchor.moment), len(ordered))
    return ordered[max(0, split - before) : split + after], None
