"""Review: which memories no person has looked at yet (or a newer memory superseded), accepting
them, rejecting any memory.

A memory the pipeline (or an agent through MCP) writes carries `review: unreviewed` in its
frontmatter. Accepting removes that one line (a one-line git diff). Rejecting deletes the file
and remembers its content hash in the committed `rejected-hashes.txt` (lifecycle/rejections.py),
so no teammate's pipeline extracts the same text again. docs/team.md#review.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path

from local_recall.errors import StorageError
from local_recall.lifecycle.rejections import (
    GITATTRIBUTES_LINE,
    read_rejections,
    remember_rejections,
)
from local_recall.memory.model import Memory, parse_memory_id
from local_recall.memory.store import MemoryStore
from local_recall.repo.files import write_text_atomic


def unreviewed(memories: Iterable[Memory]) -> list[Memory]:
    """What awaits a person, oldest first (the order they were written): unreviewed memories
    superseded ones (a newer memory replaced them: keep or reject) and disputed ones (a session
    found them wrong: accept, edit or reject)."""
    return sorted(
        (m for m in memories if m.unreviewed or m.superseded_by or m.disputed),
        key=lambda m: (m.occurred_at, m.id),
    )


def accept(store: MemoryStore, ids: Sequence[str]) -> list[Memory]:
    """Mark memories reviewed; a superseded or disputed one is kept as still true (its mark
    removed).
    Every id is checked (and read) before any file changes; one already reviewed is returned
    as it is, without a rewrite."""
    wanted = [store.get(memory_id) for memory_id in dict.fromkeys(map(parse_memory_id, ids))]
    return [store.update(m.id, _accepted) if _waiting(m) else m for m in wanted]


def _waiting(memory: Memory) -> bool:
    return memory.unreviewed or bool(memory.superseded_by) or memory.disputed is not None


def _accepted(memory: Memory) -> Memory:
    return replace(
        memory, unreviewed=False, superseded_by=None, superseded_reason=None, disputed=None
    )


def reject(store: MemoryStore, ids: Sequence[str], rejected: Path, today: date) -> list[Memory]:
    """Delete memories (reviewed or not) and remember their content hashes, in one step under
    the store lock: the hashes are written first."""

    def remember(memories: list[Memory]) -> None:
        try:
            remember_rejections(rejected, [m.content_hash for m in memories], today)
        except OSError as exc:
            raise StorageError(f"cannot record the rejection in {rejected}: {exc}") from None

    return store.remove([parse_memory_id(memory_id) for memory_id in ids], remember)


def rejected_hashes(rejected: Path) -> frozenset[str]:
    return read_rejections(rejected)


GITATTRIBUTES_NAME = ".gitattributes"


def ensure_gitattributes(recall_dir: Path) -> list[str]:
    """Declare git's union merge driver for rejected-hashes.txt in local-recall/.gitattributes
    (two branches that each rejected memories then merge without a conflict). Adds the line
    when missing; never removes or reorders a person's lines. Returns the lines added."""
    path = recall_dir / GITATTRIBUTES_NAME
    if path.is_symlink():
        raise StorageError(f"{path} is a symlink; refusing to write through it")
    try:
        existing = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        existing = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise StorageError(f"cannot read {path}: {exc}") from None
    if any(line.split() == GITATTRIBUTES_LINE.split() for line in existing.splitlines()):
        return []
    text = existing + ("\n" if existing and not existing.endswith("\n") else "")
    write_text_atomic(path, f"{text}{GITATTRIBUTES_LINE}\n")
    return [GITATTRIBUTES_LINE]
