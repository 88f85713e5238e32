"""Scopes that follow renames: a memory scoped `file:src/a.py` answers a question about
`file:src/b.py` once git says a.py was renamed to b.py (the lifecycle snapshot knows; the memory
file is only rewritten when someone says it still holds). Pure."""

from __future__ import annotations

from local_recall.memory.model import scope_matches

# memory id -> (its scope's old path, the path git says it was renamed to)
Moves = dict[str, tuple[str, str]]


def in_scope(
    applies_to: str,
    wanted: str,
    *,
    include_global: bool = True,
    moved: tuple[str, str] | None = None,
) -> bool:
    """`scope_matches`, or the same for the path the memory's `file:` scope was renamed to."""
    if scope_matches(applies_to, wanted, include_global=include_global):
        return True
    if moved is None or applies_to != f"file:{moved[0]}":
        return False
    return scope_matches(f"file:{moved[1]}", wanted, include_global=include_global)
