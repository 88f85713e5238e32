"""What relevance is computed from, gathered the same way on every path.

    inputs = RelevanceInputs(layout.state_dir)
    signals = inputs.score_ready(profile, signals, memories, query_vector, embedder_fp)
    gathered = inputs.files_candidates(...)    # the no-daemon fallback's candidates

relevance.py needs, per candidate: the exact cosine of the query and the memory's stored
vectors (read from the vector cache the indexer writes, so the daemon and a cold hook read the
same numbers), the memory's terms (computed for candidates only, ~80 µs each, kept for the life
of the process) and the store's term statistics (persisted by the indexer; computed from the
files when missing). See vector_cache.py for the files and how hostile ones are handled.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from local_recall.memory.model import Memory
from local_recall.repo.files import stat_key
from local_recall.search.background import BACKGROUND_JSON, read_background
from local_recall.search.changes import Changes
from local_recall.search.decision import Background
from local_recall.search.relevance import (
    Features,
    MemoryTerms,
    QueryProfile,
    TermStats,
    extract_features,
    fuzzy_share,
    memory_terms,
    query_weights,
    relevance_bound,
)
from local_recall.search.scoring import (
    VECTOR,
    Signals,
    best_of,
    coverage_scores,
    gather_signals,
    ran_signals,
    score_hit,
    with_features,
)
from local_recall.search.term_counts import TermCounts
from local_recall.search.term_log import (
    DEFAULT_POLICY,
    TermPolicy,
    read_term_stats,
    terms_stamp,
)
from local_recall.search.vector_cache import VectorCache, read_vector_cache
from local_recall.search.vector_log import VECTORS_JSON, cache_stamp

FILES_ONLY = "files only: word match + fuzzy, no index or embedder"
FILES_AND_VECTORS = "files only: word match + fuzzy + stored vectors, no index"


@dataclass(frozen=True, slots=True)
class Gathered:
    """Every candidate's raw signals, which signals ran, and why any were missing."""

    signals: dict[str, Signals]
    ran: frozenset[str]
    degraded_reason: str | None = None


class RelevanceInputs:
    """Caches of one process: memory terms by key, the term statistics, the vector cache
    (re-read when its files change). Not for concurrent use (searches are serialised)."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self._terms: dict[str, tuple[Memory, MemoryTerms]] = {}
        self._counts = TermCounts()  # the statistics, counted and persisted by difference
        self._stats: TermStats | None = None
        self._stats_stamp: object = None
        self._vectors: VectorCache | None = None
        self._vectors_stamp: object = None
        self._background: Background | None = None
        self._query_vectors: dict[str, Any] = {}
        self._background_stamp: object = None

    # --- the inputs ---------------------------------------------------------------------------

    def terms(self, key: str, memory: Memory) -> MemoryTerms:
        cached = self._terms.get(key)
        if cached is not None:
            known, terms = cached
            if known is memory or (
                known.subject == memory.subject
                and known.keywords == memory.keywords
                and known.body == memory.body
            ):
                return terms
        terms = memory_terms(memory.subject, memory.keywords, memory.body)
        self._terms[key] = (memory, terms)
        return terms

    def compute_stats(
        self, memories: Mapping[str, Memory], changes: Changes | None = None
    ) -> TermStats:
        """The store's statistics from the memories themselves (what the indexer persists),
        kept by difference (term_counts.py): a save counts its memory's terms again, not
        every memory's. `changes`: from the memories counted last (the searcher's). A mapping
        given here is a snapshot: never changed afterwards."""
        self._count(memories, changes)
        self._stats, self._stats_stamp = self._counts.stats(), ("computed", len(memories))
        return self._stats

    def follow(self, memories: Mapping[str, Memory], changes: Changes | None) -> None:
        """Count the memories a sync loaded (`changes`: from the last load) once counting has
        begun, whether or not the statistics are written: the next count then starts from the
        last load (never the first count: a search-only process may never need it)."""
        if self._counts.started:
            self._count(memories, changes)

    def _count(self, memories: Mapping[str, Memory], changes: Changes | None) -> None:
        for gone in self._counts.count(memories, changes, self.terms):
            self._terms.pop(gone, None)

    def persist_stats(
        self,
        memories: Mapping[str, Memory],
        changes: Changes | None = None,
        *,
        compact: bool,
        policy: TermPolicy = DEFAULT_POLICY,
    ) -> None:
        """Count `memories` (as `compute_stats`), then write what changed (term_log.py:
        appended, or a new base off the save path). Raises OSError."""
        self._count(memories, changes)
        written = self._counts.persist(self.state_dir, compact=compact, policy=policy)
        # the files now say what we counted: searches need not read them back
        self._stats, self._stats_stamp = self._counts.stats(), written

    def stats(self, memories: Mapping[str, Memory]) -> TermStats:
        """The persisted statistics (the indexer's), else computed from the files."""
        stamp = terms_stamp(self.state_dir)
        if self._stats is not None and stamp == self._stats_stamp:
            return self._stats
        persisted = read_term_stats(self.state_dir) if stamp is not None else None
        if persisted is not None:
            self._stats, self._stats_stamp = persisted, stamp
            return persisted
        if self._stats is not None and self._stats_stamp == ("computed", len(memories)):
            return self._stats
        return self.compute_stats(memories)

    def vectors(self, embedder: str) -> VectorCache | None:
        stamp = cache_stamp(self.state_dir)  # a save appends to the log: the json stays
        if stamp is None:
            self._vectors = None
            return None
        if stamp != self._vectors_stamp or (
            self._vectors is not None and self._vectors.embedder != embedder
        ):
            self._vectors = read_vector_cache(self.state_dir, embedder=embedder)
            self._vectors_stamp = stamp
        return self._vectors

    def background(self) -> Background | None:
        """The store's background (decision.py), re-read when its file changes."""
        stamp = stat_key(self.state_dir / BACKGROUND_JSON)
        if stamp != self._background_stamp:
            self._background = None if stamp is None else read_background(self.state_dir)
            self._background_stamp = stamp
        return self._background

    def query_vector(self, text: str, embed: Callable[[str], Any]) -> Any:
        """The query's embedding; the last few hundred are kept (the background's probes, a
        prompt searched again)."""
        found = self._query_vectors.get(text)
        if found is None:
            found = embed(text)
            if len(self._query_vectors) >= 512:
                self._query_vectors.clear()
            self._query_vectors[text] = found
        return found

    def forget_vectors(self) -> None:
        self._vectors, self._vectors_stamp = None, None

    # --- scoring --------------------------------------------------------------------------------

    def score_ready(
        self,
        profile: QueryProfile,
        signals: Mapping[str, Signals],
        memories: Mapping[str, Memory],
        cosines: Mapping[str, float] | None,
        *,
        keep: int | None = None,
        slack: float = 1.0,
        needed: Callable[[Sequence[float]], float] | None = None,
        at_least: int = 0,
    ) -> dict[str, Signals]:
        """Each candidate's signals with its relevance features. `cosines`: exact cosines
        from the vector cache (None: keep what the candidate lists gave).

        `keep`: only the candidates that can still matter are scored in full (the fuzzy match
        is most of a candidate's cost; `relevance_bound` says the most it can add). A candidate
        is dropped when its bound is below `slack` × the keep-th best relevance (slack < 1: a
        later re-order, such as the lifecycle's, may lift it that much), or below
        `needed(two best relevances)`: the least a runner-up needs to reach the caller's floor
        once the decision has moved it — but never before `at_least` are scored. So the `keep`
        best above the floor (and the `at_least` best whatever their score) come out exactly as
        from scoring every candidate."""
        stats = self.stats(memories)
        weights = query_weights(profile, stats)
        ready: dict[str, Signals] = {}
        bounded: list[tuple[float, str, Signals, MemoryTerms, Features]] = []
        for key, found in signals.items():
            memory = memories.get(key)
            if memory is None:
                continue
            cosine = found.cosine if VECTOR in found.ran else None
            if cosines is not None and VECTOR in found.ran:
                cosine = cosines.get(key, cosine)
            terms = self.terms(key, memory)
            if keep is None:
                features = extract_features(profile, terms, stats, cosine, weights)
                ready[key] = with_features(found, features)
                continue
            partial = extract_features(profile, terms, stats, cosine, weights, fuzzy=False)
            bounded.append((relevance_bound(partial), key, found, terms, partial))
        if keep is not None:
            ready = _best_scored(profile, bounded, keep, slack, needed, at_least)
        return ready

    def files_candidates(
        self,
        terms: list[str],
        *,
        mode: str,
        of_kind: Mapping[str, Memory],
        depth: int,
        fuzzy: Callable[[list[str]], Mapping[str, float]],
        query_vector: Callable[[], Any],
        embedder: Callable[[], str],
    ) -> tuple[Gathered, dict[str, float] | None]:
        """The no-daemon fallback's candidates, from the files and the vector cache: the best
        `depth` by word coverage, by fuzzy match and by cosine. Also returns the exact cosines
        of every memory (None when the embedder or the cache is unavailable: the word-only
        model then scores, and the result says so)."""
        use_vector = mode in ("hybrid", "semantic")
        use_text = mode != "fuzzy"
        use_fuzzy = mode in ("hybrid", "fuzzy")
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="recall-embed") as pool:
            # loading the model (~0.6 s, mostly in onnxruntime, without the GIL) overlaps the
            # word scan of the files
            later = pool.submit(self._all_cosines, query_vector, embedder) if use_vector else None
            text_hits = best_of(coverage_scores(terms, of_kind), depth) if use_text else {}
            fuzzy_hits: dict[str, float] = {}
            if use_fuzzy:
                matched = fuzzy(terms)
                fuzzy_hits = best_of({k: v for k, v in matched.items() if k in of_kind}, depth)
            cosines = None if later is None else later.result()
        vector_hits: dict[str, float] = {}
        if cosines is not None:
            vector_hits = best_of({k: v for k, v in cosines.items() if k in of_kind}, depth)
        ran = ran_signals(vector=cosines is not None, text=True, fuzzy=use_fuzzy, coverage=True)
        signals = gather_signals(vector_hits, text_hits, fuzzy_hits, ran=ran, terms=len(terms))
        reason = FILES_ONLY if cosines is None else FILES_AND_VECTORS
        return Gathered(signals, ran, reason), cosines

    def _all_cosines(
        self, query_vector: Callable[[], Any], embedder: Callable[[], str]
    ) -> dict[str, float] | None:
        from local_recall.errors import EmbedderUnavailable

        if not (self.state_dir / VECTORS_JSON).is_file():
            return None  # no cache: not worth loading the model
        try:
            cache = self.vectors(embedder())
            vector = None if cache is None else query_vector()
        except EmbedderUnavailable:
            return None
        if cache is None or vector is None:
            return None
        return cache.best_cosines(vector)


def _best_scored(
    profile: QueryProfile,
    bounded: list[tuple[float, str, Signals, MemoryTerms, Features]],
    keep: int,
    slack: float,
    needed: Callable[[Sequence[float]], float] | None,
    at_least: int = 0,
) -> dict[str, Signals]:
    """`score_ready`'s pruned scoring: candidates in order of their bound, until none left
    can matter (see there)."""
    bounded.sort(key=lambda item: (-item[0], item[1]))
    ready: dict[str, Signals] = {}
    best: list[float] = []  # a min-heap of the `keep` best relevances so far
    first: list[float] = []  # a min-heap of the `at_least` best (wanted whatever the floor)
    top: list[float] = []  # the two best, best first
    cut = 0.0  # known once the two best are: nothing below it can reach the floor
    settled = needed is None
    for bound, key, found, terms, partial in bounded:
        if not settled and len(top) == 2 and bound < top[1]:
            settled, cut = True, needed(top) if needed is not None else 0.0
        if settled and bound < cut and (len(first) >= at_least and (not first or bound < first[0])):
            # under the floor, and no later one can be among the `at_least` best (by relevance:
            # a pointer's rank needs no room for the lifecycle's re-order, unlike `keep`)
            break
        if len(best) >= keep and bound < slack * best[0]:
            break  # sorted by bound: no later candidate can be among the `keep` best
        share = fuzzy_share(profile.words, terms.head_words, terms.fuzzy_choices)
        p = partial
        features = Features(p.cosine, p.coverage, p.head_coverage, share, p.unknown, p.single_term)
        ready[key] = with_features(found, features)
        score = score_hit(ready[key])
        if len(best) < keep:
            heapq.heappush(best, score)
        elif score > best[0]:
            heapq.heapreplace(best, score)
        if len(first) < at_least:
            heapq.heappush(first, score)
        elif at_least and score > first[0]:
            heapq.heapreplace(first, score)
        top = sorted((*top, score), reverse=True)[:2]
    return ready
