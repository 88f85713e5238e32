"""The lifecycle carried out on a repository: the snapshot of stale and unmerged memories, marking
a memory still true, planning and applying a consolidation. `Recall` delegates here.

Git runs only in `snapshot()` (a handful of commands per HEAD, see git_facts.py); the search path
asks `life_of`, which reads the cached snapshot file (one stat per query when it has not changed).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from local_recall.errors import InvalidInput, MemoryNotFound, StorageError
from local_recall.lifecycle import git_facts, memories, snapshot
from local_recall.lifecycle.consolidation import (
    Proposal,
    Thresholds,
    plan_consolidation,
    propose,
)
from local_recall.lifecycle.neighbours import candidate_pairs
from local_recall.lifecycle.ranking import LifeFacts, rank_factor
from local_recall.lifecycle.rejections import FILENAME, remember_rejections
from local_recall.lifecycle.snapshot import Snapshot
from local_recall.lifecycle.staleness import CHANGED, Stale
from local_recall.memory.drafts import redacted_edits
from local_recall.memory.life import Life
from local_recall.memory.model import Memory
from local_recall.memory.store import MemoryStore
from local_recall.memory.store_files import only_claimant
from local_recall.repo.config import LifecycleConfig
from local_recall.repo.files import stat_key
from local_recall.repo.layout import Layout

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

SNAPSHOT_FILE = "lifecycle.json"
UNKNOWN_BRANCH = "unmerged"  # the label of a memory from a commit HEAD lacks, branch unknown


@dataclass(frozen=True, slots=True)
class Applied:
    """What `apply_consolidation` did: the memories kept (rewritten) and deleted."""

    kept: tuple[Memory, ...]
    removed: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"kept": [m.id for m in self.kept], "removed": list(self.removed)}


class Lifecycle:
    def __init__(
        self,
        layout: Layout,
        store: MemoryStore,
        config: LifecycleConfig,
        environ: Mapping[str, str],
        clock: Callable[[], datetime],
    ) -> None:
        self.root = layout.root
        self.store = store
        self.config = config
        self.environ = environ
        self.clock = clock
        self.snapshot_path = layout.state_dir / SNAPSHOT_FILE
        self.rejections_path = layout.recall_dir / FILENAME
        self._cached: tuple[tuple[int, int, int], Snapshot | None] | None = None

    @property
    def thresholds(self) -> Thresholds:
        return Thresholds(
            self.config.consolidate_cosine,
            self.config.consolidate_text_ratio,
            self.config.consolidate_cosine_alone,
        )

    # --- staleness and branches -----------------------------------------------------------------

    def snapshot(self, *, refresh: bool = False, found: Sequence[Memory] | None = None) -> Snapshot:
        """The facts at the current HEAD: the saved snapshot when it is current, else computed
        (git) and saved. `refresh` computes even when the saved one looks current. `found`: the
        store's memories when the caller has scanned it already."""
        found = self.store.scan().memories if found is None else found
        digest = memories.provenance_key(found)
        state = git_facts.repo_state(self.root, self.environ)
        if not refresh:
            saved = snapshot.load(self.snapshot_path)
            if snapshot.is_current(saved, state, digest):
                assert saved is not None
                return saved
        fresh = snapshot.compute(
            self.root,
            memories.provenance_of_all(found),
            threshold=self.config.stale_changed_ratio,
            environ=self.environ,
            state=state,
            digest=digest,
        )
        with contextlib.suppress(OSError):  # a cache: a read-only state folder costs only speed
            snapshot.save(self.snapshot_path, fresh)
        return fresh

    def stale(self, *, refresh: bool = False) -> list[tuple[Memory, Stale]]:
        """Stale memories with the reason, oldest first."""
        every = self.store.scan().memories
        facts = self.snapshot(refresh=refresh, found=every)
        found = [(m, facts.stale[m.id]) for m in every if m.id in facts.stale]
        return sorted(found, key=lambda item: (item[0].occurred_at, item[0].id))

    def cached(self) -> Snapshot | None:
        """The saved snapshot as the search path sees it: re-read only when the file changed;
        never computed here (no git on the hook path)."""
        key = stat_key(self.snapshot_path)
        if key is None:
            self._cached = None
            return None
        if self._cached is None or self._cached[0] != key:
            self._cached = (key, snapshot.load(self.snapshot_path))
        return self._cached[1]

    def moves(self) -> dict[str, tuple[str, str]]:
        """(old, new) path of every memory whose anchor git renamed, from the cached snapshot
        (no git): a `file:` scope then follows the rename (memory/scope_moves.py)."""
        facts = self.cached()
        stale = facts.stale.items() if facts is not None else ()
        return {mid: (s.anchor, s.renamed_to) for mid, s in stale if s.renamed_to}

    def life_of(self, found: Sequence[Memory]) -> list[Life]:
        facts = self.cached()
        result = []
        for memory in found:
            prov = memories.provenanced(memory)
            life = (
                facts.facts(prov)
                if facts is not None
                else LifeFacts(superseded_by=prov.superseded_by)
            )
            branch = life.elsewhere_branch
            result.append(
                Life(
                    stale=life.stale,
                    branch=None if branch is None else branch or UNKNOWN_BRANCH,
                    superseded_by=life.superseded_by,
                    order=rank_factor(life),
                )
            )
        return result

    def mark_still_true(self, memory_id: str) -> Memory:
        """Re-anchor a memory at the current commit: its `commit` becomes HEAD, so changes made
        before now no longer count against it; an anchor renamed since follows the rename, a
        deleted one is dropped (a `file:` scope on it widens to its folder)."""
        head = git_facts.repo_state(self.root, self.environ).head
        if head is None:
            raise InvalidInput("this repository has no commit yet: nothing to re-anchor at")
        prov = memories.provenanced(self.store.get(memory_id))
        # Each anchor judged on its own (one snapshot over pseudo-memories, one per anchor).
        single = [replace(prov, id=str(n), anchors=(a,)) for n, a in enumerate(prov.anchors)]
        verdicts = snapshot.compute(
            self.root, single, threshold=self.config.stale_changed_ratio, environ=self.environ
        ).stale
        moved = {s.anchor: s.renamed_to for s in verdicts.values() if s.reason != CHANGED}
        return self.store.update(memory_id, lambda m: reanchored(m, head, moved))

    # --- consolidation --------------------------------------------------------------------------

    def plan(self, keys: Sequence[str], matrix: npt.NDArray[np.float32]) -> list[Proposal]:
        """Groups of near-duplicates among the memories with these vectors (index keys are
        `<kind>/<id>`), each with its proposal."""
        found = {m.id: m for m in self.store.scan().memories}
        ids = [key.rpartition("/")[2] for key in keys]
        texts = {i: memories.consolidation_text(found[i]) for i in ids if i in found}
        pairs = candidate_pairs(ids, matrix, texts, floor=self.thresholds.floor)
        candidates = {i: memories.candidate(found[i]) for i in texts}
        return plan_consolidation(pairs, candidates, self.thresholds)

    def merge(self, ids: Sequence[str]) -> Applied:
        """Two or more wordings of one fact made one memory, as `consolidate` would (`propose`:
        the best-written kept with the keywords, anchors and provenance of all)."""
        wanted = list(dict.fromkeys(ids))
        if len(wanted) < 2:
            raise InvalidInput("merge takes two different memories")
        found = {m.id: m for m in self.store.scan().memories}
        for memory_id in wanted:
            if memory_id not in found:
                raise MemoryNotFound(memory_id)
        return self.apply([propose([memories.candidate(found[i]) for i in wanted])])

    def apply(self, proposals: Sequence[Proposal]) -> Applied:
        """Carry out proposals: the hashes of the memories merged away are remembered first (so
        no daemon re-extracts them, even after a crash half-way), then the kept memory is
        rewritten with the merged fields and the others are deleted. Every id is checked before
        anything is written."""
        found = {m.id: m for m in self.store.scan().memories}
        seen: set[str] = set()
        for proposal in proposals:
            for memory_id in (proposal.keep, *proposal.remove):
                if memory_id not in found:
                    raise MemoryNotFound(memory_id)
                if memory_id in seen:
                    raise InvalidInput(f"memory {memory_id} is in two proposals")
                seen.add(memory_id)
            only_claimant(self.store.directory, proposal.keep)  # before anything is written
        keep_hashes = {found[p.keep].content_hash for p in proposals}
        gone = [found[i].content_hash for p in proposals for i in p.remove]
        try:
            remember_rejections(
                self.rejections_path, [h for h in gone if h not in keep_hashes], self.clock().date()
            )
        except OSError as exc:
            raise StorageError(f"cannot write {self.rejections_path}: {exc}") from None
        kept = []
        for proposal in proposals:
            removed = [found[i] for i in proposal.remove]
            kept.append(self.store.update(proposal.keep, _merger(proposal, removed)))
            for memory_id in proposal.remove:
                self.store.delete(memory_id)
        return Applied(tuple(kept), tuple(i for p in proposals for i in p.remove))


def with_fields(memory: Memory, **values: Any) -> Memory:
    """Set provenance keys: as Memory fields where the model has them, else in `extra` (the
    frontmatter keys local-recall does not own are written back unchanged)."""
    own = {f.name for f in dataclasses.fields(memory)}
    direct = {k: v for k, v in values.items() if k in own}
    extra = {k: v for k, v in values.items() if k not in own}
    if extra:
        direct["extra"] = MappingProxyType({**memory.extra, **extra})
    return replace(memory, **direct)


def reanchored(memory: Memory, head: str, moved: Mapping[str, str | None]) -> Memory:
    """`memory` made at `head`, its anchors where they are now (`moved`: old path -> new path,
    None when deleted)."""
    scope = memory.applies_to
    if scope.startswith("file:") and scope[5:] in moved:
        new = moved[scope[5:]]
        folder = scope[5:].rpartition("/")[0]
        scope = f"file:{new}" if new else (f"file:{folder}/" if folder else "global")
    files = tuple(dict.fromkeys(n for f in memory.files if (n := moved.get(f, f)) is not None))
    return with_fields(replace(memory, applies_to=scope), commit=head, files=files)


def merged(memory: Memory, proposal: Proposal, removed: Sequence[Memory]) -> Memory:
    """The kept memory with the group's merged fields (its own subject and body): keywords and
    anchors of all, the earliest occurred_at, and `merged_from` naming each memory merged in
    with its provenance."""
    scope = memory.applies_to.removeprefix("file:") if memory.applies_to.startswith("file:") else ""
    values: dict[str, Any] = {}
    files = [a for a in proposal.anchors if a != scope]
    if files:
        values["files"] = tuple(files)
    previous = memory.extra.get("merged_from")
    earlier = [str(v) for v in previous] if isinstance(previous, list) else []
    values["merged_from"] = earlier + [
        m.id + (f" ({line})" if (line := memories.provenance_line(m)) else "") for m in removed
    ]
    # Redacted together like any write: a secret among another memory's keywords (committed by
    # a careless or hostile hand) must not be copied into the memory we keep.
    fields = redacted_edits(memory.subject, memory.body, list(proposal.keywords))
    kept = replace(memory, occurred_at=proposal.occurred_at, **fields)  # type: ignore[arg-type]
    return with_fields(kept, **values)


def _merger(proposal: Proposal, removed: Sequence[Memory]) -> Callable[[Memory], Memory]:
    return lambda memory: merged(memory, proposal, removed)
