"""`Searcher`: runs a `SearchQuery` — gathers each candidate's signals, scores and ranks them.

    result = searcher.run(SearchQuery("how do we deduplicate memories?", scope="file:src/"))

Modes: hybrid (all three signals fused), semantic (vectors), text (BM25), fuzzy (typo- and
identifier-tolerant matching of the subject and keywords). What a score is: scoring.py and
docs/search.md. This module only gathers the inputs of those pure decisions.

Failures degrade, they never surface: an unreachable embedder leaves text + fuzzy; a broken
index is rebuilt, and until it is, search runs over the memory files alone. The result says so
(`SearchResult.degraded_reason`); the last reason is also kept for `local-recall doctor`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any

from local_recall.errors import EmbedderUnavailable, IndexUnavailable
from local_recall.memory.model import Memory
from local_recall.memory.store import MemoryStore
from local_recall.repo.config import Config
from local_recall.repo.layout import Layout
from local_recall.search.background import refresh_background
from local_recall.search.decision import decide_ranked
from local_recall.search.embedders import Embedder, embedder_fingerprint
from local_recall.search.fuzzy import FuzzyMatcher
from local_recall.search.index import MemoryIndex
from local_recall.search.index_candidates import IndexQuery, from_index
from local_recall.search.index_plan import row_key
from local_recall.search.index_sync import (
    IndexReport,
    ProgressCallback,
    sync_memories,
    write_relevance_cache,
)
from local_recall.search.limits import MAX_LIMIT
from local_recall.search.query import MODES, HitLife, SearchHit, SearchQuery, SearchResult
from local_recall.search.query_intent import prompt_intent
from local_recall.search.relevance import query_profile
from local_recall.search.relevance_inputs import FILES_ONLY, Gathered, RelevanceInputs
from local_recall.search.scoring import (
    Signals,
    best_of,
    candidate_depth,
    coverage_scores,
    gather_signals,
    ran_signals,
    rank,
    score_hit,
    snippet,
)
from local_recall.search.status import (
    STATUS_FILE,
    IndexHealth,
    SearchStatus,
    StatusFile,
    index_health,
)
from local_recall.search.text_terms import query_terms, query_text

# What callers imported from here before the split keeps working.
__all__ = [
    "FILES_ONLY",
    "MODES",
    "EmbedderFactory",
    "IndexHealth",
    "SearchHit",
    "SearchQuery",
    "SearchResult",
    "SearchStatus",
    "Searcher",
]

log = logging.getLogger(__name__)

EmbedderFactory = Callable[[Config], Embedder]
# The lifecycle facts of the ranked memories, from a cache (never git): set by the facade.
LifeLookup = Callable[[Sequence[Memory]], Sequence[HitLife]]


class Searcher:
    """Keeps the index in step with the stores and answers queries. One per `Recall`; safe to
    keep for the life of a process (the daemon does): the embedder is loaded once. Not for
    concurrent use: callers serialise searches (the MCP server and the daemon hold a lock)."""

    def __init__(
        self,
        layout: Layout,
        config: Config,
        stores: Sequence[MemoryStore],
        embedder_factory: EmbedderFactory,
        clock: Callable[[], datetime],
    ) -> None:
        self._config = config
        self._stores = stores
        self._factory = embedder_factory
        self._ann_threshold = config.search.ann_threshold
        self.index = MemoryIndex(
            layout.index_dir, layout.state_dir / "index.lock", ann_threshold=self._ann_threshold
        )
        self._status = StatusFile(layout.state_dir / STATUS_FILE, clock)
        self._embedder: Embedder | None = None
        self._memories: dict[str, Memory] | None = None
        self._fuzzy: FuzzyMatcher | None = None
        self._fuzzy_signature = 0
        self._kinds: frozenset[str] = frozenset()
        self._executor: ThreadPoolExecutor | None = None
        self._index_ok = True
        self.relevance = RelevanceInputs(layout.state_dir)
        self.lifecycle: LifeLookup | None = None

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._factory(self._config)
        return self._embedder

    @property
    def status_path(self) -> Path:
        return self._status.path

    # --- sync -----------------------------------------------------------------------------------

    def load_memories(self) -> dict[str, Memory]:
        """Every readable memory of both kinds, from the stores' stat-keyed catalogs."""
        found: dict[str, Memory] = {}
        for store in self._stores:
            for memory in store.scan().memories:
                found[row_key(memory.kind, memory.id)] = memory
        # The fuzzy vocabulary depends only on subjects and keywords: rebuilt when they change.
        signature = hash(tuple((k, m.subject, m.keywords) for k, m in found.items()))
        if signature != self._fuzzy_signature:
            self._fuzzy = None
            self._fuzzy_signature = signature
        self._memories = found
        self._kinds = frozenset(m.kind for m in found.values())
        return found

    def sync(
        self, *, rebuild: bool = False, progress: ProgressCallback | None = None
    ) -> IndexReport:
        memories = self.load_memories()
        try:
            report = sync_memories(
                self.index,
                list(memories.values()),
                self.embedder,
                rebuild=rebuild,
                progress=progress,
            )
        except IndexUnavailable as exc:
            self._index_ok = False
            self._record(f"index unavailable: {exc}")
            return IndexReport(0, 0, 0, len(memories), False, 0.0, f"index unavailable: {exc}")
        self._index_ok = True
        self._record(report.fallback)
        changed = report.rebuilt or bool(report.embedded or report.updated or report.removed)
        write_relevance_cache(
            self.index,
            self.relevance.state_dir,
            lambda: self.relevance.compute_stats(memories),
            changed=changed,
        )
        refresh_background(
            self.relevance.state_dir,
            self.relevance.background(),
            memories=sum(m.kind == "episodic" for m in memories.values()),
            embedder=lambda: embedder_fingerprint(self.embedder),
            best_relevance=self._best_relevance,
        )
        return report

    def _best_relevance(self, probe: str) -> float:
        """A background probe's best relevance in the store: a search's, before the decision."""
        found = self.run(SearchQuery(probe, limit=1, min_score=0.0), sync=False, raw=True)
        return found.hits[0].score if found.hits else 0.0

    # --- search ---------------------------------------------------------------------------------

    def run(
        self, query: SearchQuery, *, sync: bool = True, use_index: bool = True, raw: bool = False
    ) -> SearchResult:
        """Best memories first. A blank query finds nothing: use `list` for the recent ones.

        `use_index=False` answers from the files alone (word coverage + fuzzy; no LanceDB, no
        model loaded — ~0.5 s instead of ~3 s in a fresh process, for a hook with no daemon);
        the result is then degraded, with the same scale of scores over fewer signals.
        `raw=True` scores by relevance alone (no decision): the background's own searches."""
        default = min(self._config.search.default_limit, MAX_LIMIT)
        count = default if query.limit is None else query.limit
        floor = self._config.search.min_score if query.min_score is None else query.min_score
        text = query_text(query.text)
        if not text:
            return SearchResult()
        if sync and use_index:
            self.sync()
        memories = self._memories if self._memories is not None else self.load_memories()
        terms = query_terms(text)
        vectors: list[Any] = []
        if use_index:
            gathered = self._index_signals(
                text, terms, query, count, memories, allow_rebuild=sync, vectors=vectors
            )
            cosines = self._cached_cosines(vectors, gathered.signals)
        else:
            gathered, cosines = self._files_signals(text, terms, query, count, memories)
        # Every candidate scored by its calibrated relevance (relevance.py), on every path.
        signals = self.relevance.score_ready(
            query_profile(text), gathered.signals, memories, cosines
        )
        relevance = {key: score_hit(s) for key, s in signals.items()}
        ordered = rank(
            relevance,
            memories,
            scope=query.scope,
            include_global=query.include_global,
            since=query.since,
            until=query.until,
            min_score=0.0,
            limit=len(relevance),
        )
        # The score: the relevance moved by the store-aware decision (decision.py), so that the
        # best hit's score is the probability that it answers the prompt, given this store.
        background = None if raw else self.relevance.background()
        scored, decision = decide_ranked(ordered, background, prompt_intent(text))
        ranked = [(key, score) for key, score in scored if score > 0 and score >= floor]
        ranked = ranked[: count if self.lifecycle is None else len(ranked)]
        lives: Sequence[HitLife | None] = [None] * len(ranked)
        if self.lifecycle is not None:
            # Stale, superseded and unmerged memories go below fresh ones of similar relevance:
            # the order uses score × factor, the score (and any threshold on it) stays relevance.
            found = self.lifecycle([memories[key] for key, _ in ranked])
            order = sorted(range(len(ranked)), key=lambda i: -ranked[i][1] * found[i].order)
            order = order[:count]  # a stable sort: equal keys keep rank()'s newer-first order
            ranked, lives = [ranked[i] for i in order], [found[i] for i in order]
        hits = tuple(
            SearchHit(
                memories[key],
                score,
                snippet(memories[key].body, terms),
                signals[key],
                life,
            )
            for (key, score), life in zip(ranked, lives, strict=True)
        )
        return SearchResult(hits, gathered.degraded_reason, gathered.ran, decision)

    def search(
        self, query: str, *, sync: bool = True, use_index: bool = True, **fields: Any
    ) -> list[SearchHit]:
        """`run` for a query given as keyword arguments (the fields of SearchQuery)."""
        return list(self.run(SearchQuery(query, **fields), sync=sync, use_index=use_index).hits)

    def _index_signals(
        self,
        text: str,
        terms: list[str],
        query: SearchQuery,
        limit: int,
        memories: Mapping[str, Memory],
        *,
        allow_rebuild: bool,
        vectors: list[Any],
    ) -> Gathered:
        """The index's candidates; the query's embedding is appended to `vectors`."""
        kind = query.kind
        present = kind is None or kind in self._kinds
        # Filtering by kind in LanceDB costs a scan of the column; skip it when every
        # memory is of the wanted kind anyway.
        index_kind = None if self._kinds <= {kind} else kind
        use_vector = query.mode in ("hybrid", "semantic")
        use_text = query.mode in ("hybrid", "text")
        use_fuzzy = query.mode in ("hybrid", "fuzzy")
        filtered = query.scope is not None
        depth = candidate_depth(limit, len(memories), self._ann_threshold, filtered=filtered)
        ask = IndexQuery(depth=depth, kind=index_kind, since=query.since, until=query.until)
        # The full-text query and the fuzzy match run in workers while this thread embeds the
        # query and asks for vectors (onnxruntime and LanceDB release the GIL): hybrid costs
        # about the slowest of the three, not their sum.
        text_future = None
        if use_text and present and self._index_ok and terms:
            text_future = self._pool().submit(self.index.text_search, terms, **ask.arguments())
        fuzzy_future = None
        if use_fuzzy and use_vector:
            fuzzy_future = self._pool().submit(self._fuzzy_scores, terms, kind, depth, memories)
        degraded: list[str] = []
        query_vector = None
        if use_vector:
            try:
                query_vector = self.relevance.query_vector(text, self.embedder.embed_query)
                vectors.append(query_vector)
            except EmbedderUnavailable as exc:
                degraded.append(f"embedder unavailable, text + fuzzy only: {exc}")
                use_vector, use_text, use_fuzzy = False, True, True
        vector: dict[str, float] = {}
        text_hits: dict[str, float] = {}
        coverage = False
        if (use_vector or use_text) and present:
            found = None
            if self._index_ok:
                found = from_index(
                    self.index,
                    query_vector,
                    terms if use_text else None,
                    text_future,
                    ask,
                    rebuild=self._rebuilt if allow_rebuild else None,
                )
                self._index_ok = found is not None
            if found is None:
                degraded.append("index unavailable: plain word match over the files")
                text_hits = coverage_scores(
                    terms, {k: m for k, m in memories.items() if kind is None or m.kind == kind}
                )
                coverage = True
                use_vector, use_text, use_fuzzy = False, True, True
            else:
                vector, text_hits = found
        fuzzy: dict[str, float] = {}
        if fuzzy_future is not None:
            fuzzy = fuzzy_future.result()
        elif use_fuzzy:  # fuzzy mode, or hybrid once the embedder turned out unavailable
            fuzzy = self._fuzzy_scores(terms, kind, depth, memories)
        reason = "; ".join(degraded) or None
        self._record(reason)
        ran = ran_signals(vector=use_vector, text=use_text, fuzzy=use_fuzzy, coverage=coverage)
        signals = gather_signals(
            vector,
            text_hits,
            fuzzy,
            ran=ran,
            # A memory a full candidate list left out scores at most its last entry there.
            vector_missing=min(vector.values()) if len(vector) >= depth else None,
            text_missing=min(text_hits.values()) if len(text_hits) >= depth else None,
            terms=len(terms),
        )
        return Gathered(signals, ran, reason)

    def _files_signals(
        self,
        text: str,
        terms: list[str],
        query: SearchQuery,
        limit: int,
        memories: Mapping[str, Memory],
    ) -> tuple[Gathered, dict[str, float] | None]:
        """The no-daemon fallback: candidates from the files (word coverage, fuzzy) and the
        vector cache; no LanceDB. The embedder is loaded only if the cache exists."""
        kind = query.kind
        of_kind = {k: m for k, m in memories.items() if kind is None or m.kind == kind}
        return self.relevance.files_candidates(
            terms,
            mode=query.mode,
            of_kind=of_kind,
            depth=candidate_depth(limit, len(of_kind), self._ann_threshold, filtered=False),
            fuzzy=lambda words: self._fuzzy_matcher(memories).scores(words),
            query_vector=lambda: self.relevance.query_vector(text, self.embedder.embed_query),
            embedder=lambda: embedder_fingerprint(self.embedder),
        )

    def _cached_cosines(
        self, vectors: Sequence[Any], signals: Mapping[str, Signals]
    ) -> dict[str, float] | None:
        """Exact cosines of the candidates from the vector cache (the numbers a cold hook
        reads), so both paths score alike; None without a query vector or a cache."""
        if not vectors:
            return None
        try:
            cache = self.relevance.vectors(embedder_fingerprint(self.embedder))
        except EmbedderUnavailable:
            return None
        return None if cache is None else cache.cosines_of(vectors[0], list(signals))

    def _fuzzy_scores(
        self, terms: list[str], kind: str | None, depth: int, memories: Mapping[str, Memory]
    ) -> dict[str, float]:
        matched = self._fuzzy_matcher(memories).scores(terms)
        if kind is not None and not self._kinds <= {kind}:  # a filter only where it drops some
            matched = {k: v for k, v in matched.items() if memories[k].kind == kind}
        return best_of(matched, depth)

    def _rebuilt(self) -> bool:
        """Rebuild a failing index (then ask it again): whether it is usable now."""
        self.sync(rebuild=True)
        return self._index_ok

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            # two workers: the full-text query and the fuzzy match (searches are serialised)
            self._executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="recall-search")
        return self._executor

    def _fuzzy_matcher(self, memories: Mapping[str, Memory]) -> FuzzyMatcher:
        if self._fuzzy is None:
            self._fuzzy = FuzzyMatcher(memories)
        return self._fuzzy

    # --- status ---------------------------------------------------------------------------------

    def health(self) -> IndexHealth:
        """Load the embedder, read the index: what doctor needs. Never raises."""
        files = len(self.load_memories())
        return index_health(lambda: self.embedder, self.index, files, self.status().fallback)

    def _record(self, fallback: str | None) -> None:
        """Remember why search is degraded, for doctor (the file changes only with it)."""
        embedder = self._embedder
        self._status.record(
            fallback, None if embedder is None else f"{embedder.name}:{embedder.model}"
        )

    def status(self) -> SearchStatus:
        return self._status.read()
