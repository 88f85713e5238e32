"""The lifecycle facts of every memory at one HEAD, computed once and cached in gitignored state.

The hooks never run git: they read the last snapshot. The daemon (on a HEAD or memory change) and
`local-recall stale` refresh it. A snapshot is keyed by HEAD, the working tree's changes and a
digest of the memories' provenance, so it is recomputed exactly when one of them moves.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from local_recall.lifecycle import git_facts
from local_recall.lifecycle.ranking import LifeFacts, is_elsewhere
from local_recall.lifecycle.staleness import Anchored, FileChange, Stale, find_stale
from local_recall.repo.files import write_text_atomic

SNAPSHOT_VERSION = 1
MAX_SNAPSHOT_BYTES = 64 << 20


@dataclass(frozen=True, slots=True)
class Provenanced:
    """What the lifecycle reads of a memory (from its frontmatter)."""

    id: str
    commit: str | None
    branch: str | None
    anchors: tuple[str, ...]
    superseded_by: str | None = None
    unreviewed: bool = False


@dataclass(frozen=True, slots=True)
class Snapshot:
    head: str | None
    branch: str | None
    dirty: str
    digest: str  # of the memories' provenance
    stale: Mapping[str, Stale]
    elsewhere: Mapping[str, str]  # memory id -> the branch it was made on ("" when unknown)

    def facts(self, memory: Provenanced) -> LifeFacts:
        stale = self.stale.get(memory.id)
        return LifeFacts(
            stale=stale.detail if stale else None,
            superseded_by=memory.superseded_by,
            elsewhere_branch=self.elsewhere.get(memory.id),
            unreviewed=memory.unreviewed,
        )


def provenance_digest(memories: Sequence[Provenanced]) -> str:
    h = hashlib.sha256()
    for m in sorted(memories, key=lambda m: m.id):
        h.update(f"{m.id}\0{m.commit}\0{m.branch}\0{'|'.join(m.anchors)}\n".encode())
    return h.hexdigest()[:32]


def compute(
    root: Path,
    memories: Sequence[Provenanced],
    *,
    threshold: float,
    environ: Mapping[str, str] | None = None,
    state: git_facts.RepoState | None = None,
    digest: str | None = None,
) -> Snapshot:
    """Run the few git commands this HEAD needs and judge every memory. `digest`: the memories'
    provenance digest when the caller has one (else `provenance_digest`)."""
    state = state or git_facts.repo_state(root, environ)
    digest = digest or provenance_digest(memories)
    if state.head is None:
        return Snapshot(None, state.branch, state.dirty, digest, {}, {})
    commits = git_facts.history(root, environ=environ)
    known = {c.sha for c in commits}
    wanted = {m.commit for m in memories if m.commit and m.anchors}
    unknown: dict[str, tuple[FileChange, ...]] = {}
    for sha in sorted(wanted - known)[:200]:  # a bounded number of direct diffs
        changes = git_facts.diff_to_head(root, sha, environ)
        if changes is not None:
            unknown[sha] = changes
    anchors = {a for m in memories for a in m.anchors}
    uncommitted = git_facts.diff_to_head(root, None, environ) or ()
    # Only anchors' sizes matter: a renamed anchor is judged "renamed" before its size is asked.
    counts = git_facts.line_counts(root, anchors)
    stale = find_stale(
        [Anchored(m.id, m.commit, m.anchors) for m in memories],
        commits,
        head_lines=counts,
        uncommitted=uncommitted,
        threshold=threshold,
        unknown_commits=unknown,
    )
    ancestors = git_facts.ancestors(root, environ)
    elsewhere = {
        m.id: m.branch or ""
        for m in memories
        if is_elsewhere(m.commit, m.branch, ancestors=ancestors, current_branch=state.branch)
    }
    return Snapshot(state.head, state.branch, state.dirty, digest, stale, elsewhere)


def is_current(
    snapshot: Snapshot | None,
    state: git_facts.RepoState,
    memories: Sequence[Provenanced] | str,
) -> bool:
    """`memories`: the memories, or their digest (computed by the caller more cheaply)."""
    digest = memories if isinstance(memories, str) else provenance_digest(memories)
    return (
        snapshot is not None
        and snapshot.head == state.head
        and snapshot.dirty == state.dirty
        and snapshot.digest == digest
    )


def save(path: Path, snapshot: Snapshot) -> None:
    data = {
        "version": SNAPSHOT_VERSION,
        "head": snapshot.head,
        "branch": snapshot.branch,
        "dirty": snapshot.dirty,
        "digest": snapshot.digest,
        "stale": {mid: s.to_json() for mid, s in snapshot.stale.items()},
        "elsewhere": dict(snapshot.elsewhere),
    }
    write_text_atomic(path, json.dumps(data, separators=(",", ":")))


def load(path: Path) -> Snapshot | None:
    """The cached snapshot, or None when missing, unreadable or from another version. The state
    folder is gitignored but may still be planted: every field is checked, nothing is trusted."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read(MAX_SNAPSHOT_BYTES + 1)
        if len(raw) > MAX_SNAPSHOT_BYTES:
            return None
        data = json.loads(raw)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != SNAPSHOT_VERSION:
        return None
    stale_in = data.get("stale")
    elsewhere_in = data.get("elsewhere")
    if not isinstance(stale_in, dict) or not isinstance(elsewhere_in, dict):
        return None
    stale: dict[str, Stale] = {}
    for mid, item in stale_in.items():
        if isinstance(item, dict) and all(
            isinstance(item.get(k), str) for k in ("reason", "anchor", "detail")
        ):
            renamed = item.get("renamed_to")
            stale[str(mid)] = Stale(
                item["reason"],
                item["anchor"],
                item["detail"],
                renamed if isinstance(renamed, str) else None,
            )
    elsewhere = {str(k): v for k, v in elsewhere_in.items() if isinstance(v, str)}

    def text(key: str) -> str | None:
        value = data.get(key)
        return value if isinstance(value, str) else None

    return Snapshot(
        text("head"), text("branch"), text("dirty") or "", text("digest") or "", stale, elsewhere
    )
