"""The store's term statistics as one process keeps them: counted by difference, persisted
by difference, so a save at 100,000 memories costs what it changes.

    counts = TermCounts()
    counts.count(memories, changes, terms)       # a save: its memory's stems, not every memory's
    counts.persist(state_dir, compact=False)     # a line of what changed (term_log.py)
    stats = counts.stats()                       # a TermStats, copied only when asked for

Counts are integers: after any sequence of adds, edits and deletes they equal `term_stats` of
every memory from scratch, in memory and in the files (tested with random sequences).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path

from local_recall.memory.model import Memory
from local_recall.search.changes import Changes, changes_since
from local_recall.search.relevance import MemoryTerms, TermStats
from local_recall.search.term_log import (
    DEFAULT_POLICY,
    TermPolicy,
    TermsStamp,
    append_term_delta,
    apply_delta,
    read_term_files,
    stats_difference,
    terms_stamp,
    write_term_base,
)

Terms = Callable[[str, Memory], MemoryTerms]


class TermCounts:
    """Document frequencies of the memories last counted, and what of them the files lack."""

    def __init__(self) -> None:
        self._counted: dict[str, MemoryTerms] = {}  # what `_df` counts, by key
        self._counted_from: Mapping[str, Memory] = {}  # the memories `_counted` holds
        self._df: Counter[str] = Counter()
        self._documents = 0
        self._snapshot: TermStats | None = None  # of `_df`, made when asked for
        self._unwritten: Counter[str] = Counter()  # `_df` minus what we last persisted
        self._written: tuple[TermsStamp | None, int] | None = None  # the files as we left them
        self.started = False  # counted once: counting on costs what changed

    def count(
        self, memories: Mapping[str, Memory], changes: Changes | None, terms: Terms
    ) -> list[str]:
        """Count `memories` (a snapshot: never changed afterwards); `changes`: from the
        memories counted last (else found by identity). Returns the keys gone."""
        step = changes_since(self._counted_from, memories, changes)
        for gone in step.removed:
            counted = self._counted.pop(gone, None)
            if counted is not None:
                self._add(counted, -1)
        for key in step.changed:
            found = terms(key, memories[key])
            counted = self._counted.get(key)
            if counted is not found:
                if counted is not None:
                    self._add(counted, -1)
                self._add(found, 1)
                self._counted[key] = found
        self._counted_from, self.started = memories, True
        if self._documents != len(memories):
            self._documents, self._snapshot = len(memories), None
        return list(step.removed)

    def _add(self, terms: MemoryTerms, by: int) -> None:
        apply_delta(self._df, dict.fromkeys(terms.all, by))
        apply_delta(self._unwritten, dict.fromkeys(terms.all, by))
        self._snapshot = None

    def stats(self) -> TermStats:
        if self._snapshot is None:  # a copy: later counts change ours
            self._snapshot = TermStats(self._documents, Counter(self._df))
        return self._snapshot

    def persist(
        self, state_dir: Path, *, compact: bool, policy: TermPolicy = DEFAULT_POLICY
    ) -> TermsStamp | None:
        """Bring the files (term_log.py) to our counts, writing what changed: a line of what
        we counted since, when the files are as we last left them; a line of the difference,
        when another process moved them; a new base when the log is long (or unusable).
        `compact`: off the save path, where a long log is folded sooner. Raises OSError.
        Returns the files' stamp after."""
        stamp = terms_stamp(state_dir)
        ours = TermStats(self._documents, self._df)
        written: TermsStamp | None = None
        if stamp is not None and not policy.log_too_long(
            stamp[1][2] if stamp[1] else 0, stamp[0][2] if stamp[0] else 0, compact=compact
        ):
            if self._written is not None and stamp == self._written[0]:
                moved = self._unwritten or self._documents != self._written[1]
                written = (
                    append_term_delta(state_dir, ours.documents, self._unwritten)
                    if moved
                    else stamp
                )
            else:
                theirs, appendable = read_term_files(state_dir)
                if theirs is not None and appendable:
                    delta = stats_difference(ours, theirs)
                    written = append_term_delta(state_dir, ours.documents, delta)
        if written is None:
            written = write_term_base(state_dir, ours)
        self._unwritten.clear()
        self._written = (written, self._documents)
        return written
