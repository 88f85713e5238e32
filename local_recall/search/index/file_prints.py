"""The fingerprints of the memory files (plan.py's `on_disk`), kept by difference.

    prints = FilePrints()
    on_disk = prints.of(memories, changes)   # only memories that are other objects are looked at

A save at 100,000 memories looks at its own memory, not at every memory's fields:
which memories changed comes from changes.py (object identity), and a memory whose fields are
the same as last time keeps its fingerprint without hashing its text again. No I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from local_recall.memory.model import Memory
from local_recall.search.changes import Changes, changes_since
from local_recall.search.index.plan import Fingerprint, fingerprint


class FilePrints:
    def __init__(self) -> None:
        # key → (what the fingerprint was computed from, fingerprint)
        self._cache: dict[str, tuple[tuple[Any, ...], Fingerprint]] = {}
        self._on_disk: dict[str, Fingerprint] = {}  # of `_from`
        self._from: Mapping[str, Memory] = {}
        self.step: Changes | None = None  # what the last call found changed

    def of(
        self, memories: Mapping[str, Memory], changes: Changes | None = None
    ) -> Mapping[str, Fingerprint]:
        """The fingerprints of `memories` (a snapshot: never changed afterwards); `changes`:
        from the memories of the last call (else found by identity). The mapping returned is
        ours, valid until the next call."""
        step = changes_since(self._from, memories, changes)
        for key in step.removed:
            self._cache.pop(key, None)
            self._on_disk.pop(key, None)
        for key in step.changed:
            memory = memories[key]
            basis = (
                memory.subject,
                memory.content_hash,
                memory.keywords,
                memory.applies_to,
                memory.occurred_at,
                memory.kind,
            )
            cached = self._cache.get(key)
            if cached is None or cached[0] != basis:
                cached = self._cache[key] = (basis, fingerprint(memory, memory.keywords))
            self._on_disk[key] = cached[1]
        self._from, self.step = memories, step
        return self._on_disk
