"""An in-process keyword index for processes that stay up (the daemon, the MCP server): a
prompt's full-text candidates from postings in memory instead of a LanceDB full-text query.

    index = KeywordIndex()
    index.update(memories, terms)                 # after every sync: only changed memories move
    index.search(("dedupl", "hash"), limit=100)   # key → BM25, best first

Why: LanceDB's full-text query costs 4–8 ms a prompt (27 ms at 100,000 memories), most of it
fixed overhead, and runs on a thread that competes with the query's embedding on two cores.
The postings here are built from the stems relevance.py already keeps per memory
(`MemoryTerms`, computed once per memory for the life of the process), so the index costs no
second tokenisation; a query is a few numpy operations per query stem.

What it scores: BM25 (k1 1.2, b 0.75, as the full-text index) over each memory's distinct
stems, a stem of the subject or keywords counting twice, as they would in the full-text
document. Only candidates come from it: a memory's score is its calibrated relevance
(relevance.py), from the same features on every path, so which engine found a candidate does
not change how it scores.

Pure: no I/O; numpy is its only import beyond the standard library.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Final

import numpy as np
import numpy.typing as npt

from local_recall.memory.model import Memory
from local_recall.search.relevance import MemoryTerms

K1: Final = 1.2
B: Final = 0.75
HEAD_TF: Final = 2  # a subject/keyword stem: in the document's head and usually its body too

Terms = Callable[[str, Memory], MemoryTerms]


# The postings live in one compact base (CSR arrays: ~5 bytes a posting, 30 MB at 100,000
# memories) plus a small overlay of what changed since; the base is rebuilt once the overlay
# and the dead slots reach this share of the live memories (a save costs a dictionary update).
REBUILD_SHARE: Final = 0.1
REBUILD_MIN: Final = 256


class KeywordIndex:
    """Stems to memory slots, updated by difference. Not thread-safe: the caller serialises
    updates and searches (the searcher's lock)."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._slot: dict[str, int] = {}  # live memory key → slot
        self._keys: list[str] = []  # slot → key ("" once dead)
        self._docs: list[MemoryTerms | None] = []  # slot → the terms it was indexed with
        self._lengths = np.zeros(0, dtype=np.float32)  # slot → distinct stems
        self._alive = np.zeros(0, dtype=bool)
        self._total_length = 0.0
        self._dead = 0
        # the base: slots < _base_end; stem row r's postings at _offsets[r]:_offsets[r + 1]
        self._vocab: dict[str, int] = {}
        self._offsets = np.zeros(1, dtype=np.int64)
        self._posting_slots = np.zeros(0, dtype=np.int32)
        self._posting_tf = np.zeros(0, dtype=np.float32)
        self._base_end = 0
        self._overlay: dict[str, dict[int, int]] = {}  # stem → slot → tf, slots ≥ _base_end
        self._kinds: dict[str, npt.NDArray[np.bool_]] = {}  # kind → slots of that kind (cache)

    def __len__(self) -> int:
        return len(self._slot)

    def update(
        self, memories: Mapping[str, Memory], terms: Terms, *, keys: Iterable[str] | None = None
    ) -> int:
        """Index exactly `memories`; returns how many were added, changed or removed. A memory
        whose terms object is the one indexed is skipped (relevance.py keeps that object for as
        long as the memory's text is unchanged). `keys`: the only ones that may differ from
        the memories of the last update (the searcher's `Changes`): a save at 100,000 memories
        then looks at one memory, not at every one (None: all are looked at)."""
        if keys is None:
            gone = [key for key in self._slot if key not in memories]
            looked: Iterable[str] = memories
        else:
            wanted = dict.fromkeys(keys)
            gone = [key for key in wanted if key not in memories and key in self._slot]
            looked = [key for key in wanted if key in memories]
        changed: list[tuple[str, MemoryTerms]] = []
        for key in looked:
            found = terms(key, memories[key])
            slot = self._slot.get(key)
            if slot is None or self._docs[slot] is not found:
                changed.append((key, found))
        moved = len(gone) + len(changed)
        if not moved:
            return 0
        self._kinds.clear()
        pending = self._dead + len(self._keys) - self._base_end + moved
        if pending >= max(REBUILD_MIN, REBUILD_SHARE * len(memories)):
            kept = {key: self._docs[slot] for key, slot in self._slot.items() if key in memories}
            self._rebuild({**kept, **dict(changed)})
            return moved
        for key in gone:
            self._kill(self._slot.pop(key))
        for key, found in changed:
            slot = self._slot.get(key)
            if slot is not None:
                self._kill(slot)
            self._slot[key] = self._append(key, found)
        return moved

    def search(
        self, stems: Iterable[str], limit: int, *, kind: str | None = None
    ) -> dict[str, float]:
        """The `limit` best memories (of `kind`, if given) by BM25 over `stems`, best first;
        a memory with none of them is never returned."""
        count = len(self._slot)
        if count == 0 or limit <= 0:
            return {}
        average = self._total_length / count
        scores = np.zeros(len(self._keys), dtype=np.float32)
        hit = False
        for stem in dict.fromkeys(stems):
            slots, frequency = self._postings(stem)
            if not len(slots):
                continue
            live = int(np.count_nonzero(self._alive[slots])) if self._dead else len(slots)
            if not live:
                continue
            idf = math.log(1.0 + (count - live + 0.5) / (live + 0.5))
            norm = K1 * (1.0 - B + B * self._lengths[slots] / average)
            scores[slots] += np.float32(idf) * frequency * (K1 + 1.0) / (frequency + norm)
            hit = True
        if not hit:
            return {}
        if self._dead:
            scores[~self._alive[: len(scores)]] = 0.0
        if kind is not None:
            scores[~self._of_kind(kind)] = 0.0
        found = np.flatnonzero(scores > 0.0)
        if len(found) > limit:
            found = found[np.argpartition(-scores[found], limit - 1)[:limit]]
        order = found[np.argsort(-scores[found], kind="stable")]
        return {self._keys[int(slot)]: float(scores[slot]) for slot in order}

    # --- postings -------------------------------------------------------------------------------

    def _append(self, key: str, terms: MemoryTerms) -> int:
        slot = len(self._keys)
        self._keys.append(key)
        self._docs.append(terms)
        if slot >= len(self._lengths):
            size = max(64, 2 * len(self._lengths))
            self._lengths = np.resize(self._lengths, size)
            self._alive = np.resize(self._alive, size)
        length = len(terms.all)
        self._lengths[slot] = length
        self._alive[slot] = True
        self._total_length += length
        for stem in terms.all:
            self._overlay.setdefault(stem, {})[slot] = HEAD_TF if stem in terms.head else 1
        return slot

    def _kill(self, slot: int) -> None:
        """A removed or changed memory's old slot: masked, its postings left until a rebuild."""
        self._total_length -= float(self._lengths[slot])
        self._alive[slot] = False
        self._keys[slot], self._docs[slot] = "", None
        self._dead += 1

    def _postings(self, stem: str) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]:
        row = self._vocab.get(stem)
        extra = self._overlay.get(stem)
        if row is None and not extra:
            return _EMPTY
        if row is not None:
            start, end = int(self._offsets[row]), int(self._offsets[row + 1])
            slots, frequency = self._posting_slots[start:end], self._posting_tf[start:end]
            if not extra:
                return slots, frequency
        else:
            slots, frequency = _EMPTY
        assert extra is not None
        more = np.fromiter(extra.keys(), dtype=np.int32, count=len(extra))
        tf = np.fromiter(extra.values(), dtype=np.float32, count=len(extra))
        return np.concatenate((slots, more)), np.concatenate((frequency, tf))

    def _rebuild(self, docs: Mapping[str, MemoryTerms | None]) -> None:
        """One compact base of `docs`, slots renumbered, nothing dead, the overlay empty."""
        self._reset()
        vocab: dict[str, int] = {}
        rows: list[int] = []
        slots: list[int] = []
        tfs: list[int] = []
        for key, terms in docs.items():
            if terms is None:
                continue
            slot = len(self._keys)
            self._keys.append(key)
            self._docs.append(terms)
            self._slot[key] = slot
            for stem in terms.all:
                rows.append(vocab.setdefault(stem, len(vocab)))
                slots.append(slot)
                tfs.append(HEAD_TF if stem in terms.head else 1)
        count = len(self._keys)
        self._lengths = np.fromiter(
            (len(terms.all) for terms in self._docs if terms is not None), np.float32, count
        )
        self._alive = np.ones(count, dtype=bool)
        self._total_length = float(self._lengths.sum())
        row_of = np.asarray(rows, dtype=np.int64)
        order = np.argsort(row_of, kind="stable")
        self._posting_slots = np.asarray(slots, dtype=np.int32)[order]
        self._posting_tf = np.asarray(tfs, dtype=np.float32)[order]
        self._offsets = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(row_of, minlength=len(vocab)), out=self._offsets[1:])
        self._vocab = vocab
        self._base_end = count

    def _of_kind(self, kind: str) -> npt.NDArray[np.bool_]:
        mask = self._kinds.get(kind)
        if mask is None:
            prefix = f"{kind}/"
            mask = self._kinds[kind] = np.fromiter(
                (key.startswith(prefix) for key in self._keys), dtype=bool, count=len(self._keys)
            )
        return mask


_EMPTY: Final = (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32))
