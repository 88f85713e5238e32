"""What the viewer shows, decided over plain values: list filters parsed from a query string,
one memory as a JSON row, the filtered and paginated page of the list, an edit's fingerprint.
Decisions over values: no files, no framework (tested with literals in tests/web/test_web.py)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from local_recall.errors import InvalidInput
from local_recall.learning.outcomes import Outcome
from local_recall.lifecycle.memories import superseded_by
from local_recall.lifecycle.staleness import Stale
from local_recall.memory.model import KINDS, Memory, parse_scope, scope_matches
from local_recall.memory.timestamps import format_timestamp, parse_timestamp

PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
REVIEW_STATES = ("all", "unreviewed", "reviewed")
STALE_STATES = ("all", "stale", "fresh")


@dataclass(frozen=True, slots=True)
class ListFilter:
    kind: str | None = None  # None: both kinds
    scope: str | None = None  # normalised; matches like `search --scope` (globals excluded)
    review: str = "all"
    stale: str = "all"
    since: datetime | None = None
    until: datetime | None = None  # inclusive: a date means the end of that day
    session: str | None = None  # a prefix of the source session id
    offset: int = 0
    limit: int = PAGE_SIZE


def _choice(params: Mapping[str, str], name: str, allowed: Sequence[str]) -> str:
    value = params.get(name) or allowed[0]
    if value not in allowed:
        raise InvalidInput(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def _count(params: Mapping[str, str], name: str, default: int, high: int) -> int:
    raw = params.get(name) or str(default)
    if not raw.isdigit() or int(raw) > high:
        raise InvalidInput(f"{name} must be a whole number from 0 to {high}, got {raw!r}")
    return int(raw)


def _moment(params: Mapping[str, str], name: str, *, end_of_day: bool) -> datetime | None:
    raw = (params.get(name) or "").strip()
    if not raw:
        return None
    moment = parse_timestamp(raw)
    if end_of_day and len(raw) == 10:  # a bare date: the whole day counts
        moment += timedelta(days=1, seconds=-1)
    return moment


def parse_list_filter(params: Mapping[str, str]) -> ListFilter:
    """The list filters of a query string; InvalidInput names a bad one."""
    kind = params.get("kind") or None
    if kind is not None and kind not in KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    scope = (params.get("scope") or "").strip()
    limit = _count(params, "limit", PAGE_SIZE, MAX_PAGE_SIZE)
    return ListFilter(
        kind=kind,
        scope=parse_scope(scope) if scope else None,
        review=_choice(params, "review", REVIEW_STATES),
        stale=_choice(params, "stale", STALE_STATES),
        since=_moment(params, "since", end_of_day=False),
        until=_moment(params, "until", end_of_day=True),
        session=(params.get("session") or "").strip() or None,
        offset=_count(params, "offset", 0, 10**9),
        limit=max(1, limit),
    )


def provenance(memory: Memory) -> dict[str, Any]:
    """Where a memory came from (docs/memory-format.md#provenance)."""
    return {
        "commit": memory.commit,
        "branch": memory.branch,
        "session": memory.session,
        "files": list(memory.files),
        "unreviewed": memory.unreviewed,
        "superseded_by": superseded_by(memory),
    }


def memory_row(memory: Memory, stale: Stale | None = None) -> dict[str, Any]:
    """One line of the list: everything but the body."""
    prov = provenance(memory)
    return {
        "id": memory.id,
        "kind": memory.kind,
        "subject": memory.subject,
        "applies_to": memory.applies_to,
        "occurred_at": format_timestamp(memory.occurred_at),
        "keywords": list(memory.keywords),
        "source": memory.source,
        "unreviewed": prov["unreviewed"],
        "superseded_by": prov["superseded_by"],
        # a session found it wrong (the file's `disputed:` key): reason, date, session
        "disputed": memory.disputed.to_json() if memory.disputed else None,
        "branch": prov["branch"],
        "session": prov["session"],
        "stale": stale.to_json() if stale else None,
    }


def usage_counts(outcomes: Iterable[Outcome]) -> dict[str, dict[str, int]]:
    """Memory id -> how many of this user's sessions used it each way (learning/outcomes.py),
    for its page: the record in state/ is this user's alone."""
    counts: dict[str, dict[str, int]] = {}
    for outcome in outcomes:
        uses = counts.setdefault(outcome.memory_id, dict.fromkeys(USES_SHOWN, 0))
        uses[outcome.use] += 1
    return counts


USES_SHOWN = ("relied", "followed", "ignored", "disputed")


def matches(  # noqa: PLR0911 - one return per filter reads best
    memory: Memory, stale: Stale | None, wanted: ListFilter
) -> bool:
    if wanted.kind is not None and memory.kind != wanted.kind:
        return False
    if wanted.scope is not None and not scope_matches(
        memory.applies_to, wanted.scope, include_global=False
    ):
        return False
    if wanted.review != "all" and memory.unreviewed != (wanted.review == "unreviewed"):
        return False
    if wanted.stale != "all" and (stale is not None) != (wanted.stale == "stale"):
        return False
    if wanted.since is not None and memory.occurred_at < wanted.since:
        return False
    if wanted.until is not None and memory.occurred_at > wanted.until:
        return False
    return wanted.session is None or (memory.session or "").startswith(wanted.session)


@dataclass(frozen=True, slots=True)
class Page:
    total: int  # memories matching the filter
    rows: tuple[dict[str, Any], ...]


def list_page(memories: Iterable[Memory], stale: Mapping[str, Stale], wanted: ListFilter) -> Page:
    """The filtered memories, newest first (ties by id, so pages are stable), one page."""
    chosen = [m for m in memories if matches(m, stale.get(m.id), wanted)]
    chosen.sort(key=lambda m: (m.occurred_at, m.id), reverse=True)
    window = chosen[wanted.offset : wanted.offset + wanted.limit]
    return Page(len(chosen), tuple(memory_row(m, stale.get(m.id)) for m in window))


def fingerprint(memory: Memory) -> str:
    """What an editor started from: a save is refused when the file changed meanwhile."""
    fields = [memory.subject, memory.body, list(memory.keywords), memory.applies_to]
    return hashlib.sha256(json.dumps(fields, ensure_ascii=False).encode()).hexdigest()[:16]


def split_keywords(text: str) -> list[str]:
    """Keywords typed in one field, separated by commas."""
    return [word.strip() for word in text.split(",") if word.strip()]


def file_view_path(relative: str) -> str:
    """A repo-relative path the file view may be asked for, normalised (`./a//b` → `a/b`), or
    InvalidInput: absolute, outside the repository, under .git, a NUL."""
    raw = relative.strip().replace("\\", "/")
    if not raw or "\x00" in raw or raw.startswith("/"):
        raise InvalidInput("give a file's path relative to the repository")
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if not parts or ".." in parts or ".git" in parts:
        raise InvalidInput(f"{relative!r} is not a file of this repository")
    return "/".join(parts)


def named_files(memories: Iterable[Memory]) -> frozenset[str]:
    """The files memories name: their anchors and their `file:` scopes (a folder scope names
    no file). The file view serves only these (and only those git tracks)."""
    found: set[str] = set()
    for memory in memories:
        found.update(memory.files)
        if memory.applies_to.startswith("file:") and not memory.applies_to.endswith("/"):
            found.add(memory.applies_to.removeprefix("file:"))
    return frozenset(found)
