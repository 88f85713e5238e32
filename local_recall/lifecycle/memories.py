"""What the lifecycle reads of a `Memory`: its provenance (commit, branch, files), review state
and supersession, as the lifecycle's own values. Pure.

Provenance keys are optional in a file (hand-written and older memories have none): a memory
without a commit is never stale and never "elsewhere" — nothing is known against it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from local_recall.lifecycle.consolidation import Candidate
from local_recall.lifecycle.snapshot import Provenanced
from local_recall.lifecycle.staleness import anchors_of
from local_recall.memory.model import Memory


def commit_of(memory: Memory) -> str | None:
    return memory.commit


def branch_of(memory: Memory) -> str | None:
    return memory.branch


def is_unreviewed(memory: Memory) -> bool:
    return memory.unreviewed


def superseded_by(memory: Memory) -> str | None:
    """The id of the memory that replaced this one (set by the pipeline when the extractor says
    a new memory supersedes it; docs/team.md#superseded-memories)."""
    return memory.superseded_by


def anchors(memory: Memory) -> tuple[str, ...]:
    """The files of its provenance plus an `applies_to: file:<path>` scope."""
    return anchors_of(memory.applies_to, memory.files)


def provenanced(memory: Memory) -> Provenanced:
    return Provenanced(
        id=memory.id,
        commit=commit_of(memory),
        branch=branch_of(memory),
        anchors=anchors(memory),
        superseded_by=superseded_by(memory),
        unreviewed=is_unreviewed(memory),
    )


def provenance_line(memory: Memory) -> str | None:
    """`commit abc123def456 on topic, session <id>`: the provenance a merged memory keeps."""
    parts = []
    commit, branch, session = memory.commit, memory.branch, memory.session
    if commit:
        parts.append(f"commit {commit[:12]}" + (f" on {branch}" if branch else ""))
    if session:
        parts.append(f"session {session}")
    return ", ".join(parts) or None


def candidate(memory: Memory) -> Candidate:
    line = provenance_line(memory)
    return Candidate(
        id=memory.id,
        subject=memory.subject,
        body=memory.body,
        keywords=memory.keywords,
        anchors=anchors(memory),
        occurred_at=memory.occurred_at,
        reviewed=not is_unreviewed(memory),
        superseded=superseded_by(memory) is not None,
        sources=(line,) if line else (),
    )


def consolidation_text(memory: Memory) -> str:
    """What two wordings are compared on: subject and body."""
    return f"{memory.subject}\n{memory.body}"


def provenance_of_all(memories: Sequence[Memory]) -> list[Provenanced]:
    return [provenanced(m) for m in memories]


def provenance_key(found: Sequence[Memory]) -> str:
    """A digest of what staleness depends on in the memories (ids, commits, branches, scopes,
    files), straight from the fields: the warm `stale` path builds no Provenanced for it."""
    lines = sorted(
        f"{m.id}\0{m.commit}\0{m.branch}\0{m.applies_to}\0{'|'.join(m.files)}" for m in found
    )
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogateescape")).hexdigest()[:32]
