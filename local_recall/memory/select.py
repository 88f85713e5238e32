"""Choosing memories from a listing: the filters of `list` (scope, keyword, time) and their
order. Pure: the store supplies the memories, the lifecycle the renamed scopes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TypedDict

from local_recall.memory.model import Memory
from local_recall.memory.scope_moves import in_scope


class MemoryFilters(TypedDict, total=False):
    """The keyword arguments of `select_memories` (`Recall.list` passes them through)."""

    scope: str | None
    include_global: bool
    keyword: str | None
    since: datetime | None
    until: datetime | None
    newest_first: bool
    limit: int | None
    moved: Mapping[str, tuple[str, str]] | None  # renamed scopes (memory/scope_moves.py)


def select_memories(
    memories: Sequence[Memory],
    *,
    scope: str | None = None,
    include_global: bool = True,
    keyword: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    newest_first: bool = False,
    limit: int | None = None,
    moved: Mapping[str, tuple[str, str]] | None = None,
) -> list[Memory]:
    """Filter and order memories (a pure decision; the store only supplies the list)."""
    wanted_keyword, moves = (keyword.lower() if keyword else None), moved or {}
    chosen = [
        m
        for m in memories
        if (
            scope is None
            or in_scope(m.applies_to, scope, include_global=include_global, moved=moves.get(m.id))
        )
        and (wanted_keyword is None or wanted_keyword in (k.lower() for k in m.keywords))
        and (since is None or m.occurred_at >= since)
        and (until is None or m.occurred_at <= until)
    ]
    chosen.sort(key=lambda m: (m.occurred_at, m.id), reverse=newest_first)
    return chosen if limit is None else chosen[:limit]


def _scoped(
    memory: Memory, scope: str, include_global: bool, moves: Mapping[str, tuple[str, str]]
) -> bool:
    return in_scope(
        memory.applies_to, scope, include_global=include_global, moved=moves.get(memory.id)
    )
