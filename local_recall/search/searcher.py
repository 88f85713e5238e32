"""`Searcher`: runs a `SearchQuery` — gathers each candidate's signals, scores and ranks them.

    result = searcher.run(SearchQuery("how do we deduplicate memories?", scope="file:src/"))

Modes: hybrid (all three signals fused), semantic (vectors), text (BM25), fuzzy (typo- and
identifier-tolerant matching of the subject and keywords). What a score is: scoring.py and
docs/search.md. The candidates and their raw signals come from gather.py; this module scores
them with those pure decisions, ranks them and keeps the index in step with the files.

Failures degrade, they never surface: an unreachable embedder leaves text + fuzzy; a broken
index is rebuilt, and until it is, search runs over the memory files alone. The result says so
(`SearchResult.degraded_reason`); the last reason is also kept for `local-recall doctor`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from local_recall.errors import IndexUnavailable
from local_recall.memory.life import Life
from local_recall.memory.model import Memory
from local_recall.memory.store import MemoryStore
from local_recall.repo.config import Config
from local_recall.repo.layout import Layout
from local_recall.search.background import refresh_background
from local_recall.search.changes import Changes, Loaded, changes_of, load_kind
from local_recall.search.decision import decide, decide_ranked, least_relevance
from local_recall.search.embedders import Embedder, EmbedderFactory, embedder_fingerprint
from local_recall.search.gather import SignalGatherer
from local_recall.search.index.plan import row_key
from local_recall.search.index.relevance_cache import write_relevance_cache
from local_recall.search.index.rows import MemoryIndex
from local_recall.search.index.sync import IndexReport, ProgressCallback, sync_memories
from local_recall.search.limits import MAX_LIMIT
from local_recall.search.query import MODES, SearchHit, SearchQuery, SearchResult
from local_recall.search.query_intent import prompt_intent
from local_recall.search.relevance import query_profile
from local_recall.search.relevance_inputs import FILES_ONLY, RelevanceInputs
from local_recall.search.scoring import (
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

# Only candidates that can reach the `limit` best are scored in full (relevance_inputs.py):
# one whose relevance bound is below this share of the limit-th best is dropped. Ordering by
# life (lifecycle/ranking.py: at most 0.8 × 0.6 × 0.9 down for another hit) can lift a hit by
# less than 1 / 0.43; anything re-ordering by more must lower this.
ORDER_SLACK = 0.4

# The lifecycle facts of the ranked memories, from a cache (never git): set by the facade.
LifeLookup = Callable[[Sequence[Memory]], Sequence[Life]]


def _key_of(memory: Memory) -> str:
    return row_key(memory.kind, memory.id)


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
        self.index = MemoryIndex(layout.index_dir, layout.state_dir / "index.lock")
        self._status = StatusFile(layout.state_dir / STATUS_FILE, clock)
        self._embedder: Embedder | None = None
        self._memories: dict[str, Memory] | None = None
        self.changes: Changes | None = None  # from the load before the last to the last
        self._loads: dict[str, Loaded] = {}  # by kind: what `_memories` was loaded from
        self.relevance = RelevanceInputs(layout.state_dir)
        self.gather = SignalGatherer(
            self.index,
            self.relevance,
            lambda: self.embedder,
            rebuild=self._rebuilt,
        )
        self.lifecycle: LifeLookup | None = None
        # memory id -> (old, new) path of a renamed `file:` scope, from the lifecycle cache
        self.moves: Callable[[], Mapping[str, tuple[str, str]]] | None = None

    def keep_keywords(self) -> None:
        """For a long-lived process: full-text candidates from an in-process keyword index
        (search/keyword_index.py) instead of a LanceDB query per search."""
        self.gather.keep_keywords()

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._factory(self._config)
        return self._embedder

    @property
    def status_path(self) -> Path:
        return self._status.path

    # --- sync -----------------------------------------------------------------------------------

    def load_memories(
        self, scanned: Mapping[str, Sequence[Memory]] | None = None
    ) -> dict[str, Memory]:
        """Every readable memory of both kinds, from the stores' stat-keyed catalogs; `scanned`:
        a store's memories its caller scanned a moment ago (by kind), not scanned again."""
        found, changed, loads = {}, [], {}  # changed: keys of another object than last time
        for store in self._stores:
            listed = (scanned or {}).get(store.kind) or store.scan().memories
            held = self._loads.get(store.kind) if self._memories is not None else None
            loads[store.kind], more = load_kind(listed, held, _key_of)
            found.update(loads[store.kind][1])
            changed += more
        # found once, handed to each consumer: their work follows the change, not the store
        self.changes, self._loads = changes_of(self._memories or {}, found, changed), loads
        self.gather.use(found, self.changes)
        self._memories = found
        return found

    def loaded_memories(self) -> dict[str, Memory]:
        """Every memory as the last sync (or `load_memories`) read it, by row key."""
        return self._memories if self._memories is not None else self.load_memories()

    def sync(
        self,
        *,
        rebuild: bool = False,
        progress: ProgressCallback | None = None,
        waiting: bool = False,
        background: bool = True,
        scanned: Mapping[str, Sequence[Memory]] | None = None,
    ) -> IndexReport:
        """Embed new or changed memories, drop deleted ones, then refresh the relevance cache
        and the background; `waiting`: someone waits on it (background.py: only a far-off
        background is recomputed then); `background=False`: it is left to a later sync (a
        save's paraphrase check uses none: the next sync sees the count has moved); `scanned`:
        as `load_memories`."""
        memories = self.load_memories(scanned)
        try:
            report = sync_memories(
                self.index,
                memories,
                self.embedder,
                rebuild=rebuild,
                progress=progress,
                changes=self.changes,
            )
        except IndexUnavailable as exc:
            self.gather.index_ok = False
            self._record(f"index unavailable: {exc}")
            return IndexReport(0, 0, 0, len(memories), False, 0.0, f"index unavailable: {exc}")
        self.gather.index_ok = True
        self._record(report.fallback)
        self.relevance.follow(memories, self.changes)  # every sync: the next costs its change
        write_relevance_cache(
            self.index,
            self.relevance.state_dir,
            lambda compact: self.relevance.persist_stats(memories, self.changes, compact=compact),
            report,
            compact=background,  # a save's sync appends; a later one folds a long log
        )
        if not background:
            return report
        refresh_background(
            self.relevance.state_dir,
            self.relevance.background(),
            memories=sum(m.kind == "episodic" for m in memories.values()),
            embedder=lambda: embedder_fingerprint(self.embedder),
            best_relevance=self._best_relevance,
            waiting=waiting,
        )
        return report

    def _best_relevance(self, probe: str) -> float:
        """A background probe's best relevance in the store: a search's, before the decision."""
        probe_query = SearchQuery(probe, limit=1, min_score=0.0, prompt=True)  # as a prompt is
        found = self.run(probe_query, sync=False, raw=True)
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
            self.sync(waiting=True)
        memories = self._memories if self._memories is not None else self.load_memories()
        terms = query_terms(text)
        vectors: list[Any] = []
        if use_index:
            gathered = self.gather.from_index(
                text, terms, query, count, memories, allow_rebuild=sync, vectors=vectors
            )
            self._record(gathered.degraded_reason)
            cosines = self.gather.cached_cosines(vectors, gathered.signals)
        else:
            gathered, cosines = self.gather.from_files(text, terms, query, count, memories)
        # Every candidate scored by its calibrated relevance (relevance.py), on every path.
        background = None if raw else self.relevance.background()
        intent = prompt_intent(text)
        # Unfiltered, the two best relevances make the decision: knowing them, candidates that
        # cannot reach the floor (or the `count` best) are not scored in full. A filter applies
        # after scoring (rank), so a filtered search scores every candidate.
        unfiltered = query.scope is None and query.since is None and query.until is None
        signals = self.relevance.score_ready(
            query_profile(text),
            gathered.signals,
            memories,
            cosines,
            keep=max(2, count, query.at_least)
            if unfiltered
            else None,  # the decision reads the two best
            slack=ORDER_SLACK,
            needed=lambda top: least_relevance(floor, decide(top, background, intent)),
            at_least=query.at_least,
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
            moved=self.moves() if self.moves is not None and query.scope else None,
        )
        # The score: the relevance moved by the store-aware decision (decision.py), so that the
        # best hit's score is the probability that it answers the prompt, given this store.
        scored, decision = decide_ranked(ordered, background, intent)
        ranked = [
            (key, score)
            for rank, (key, score) in enumerate(scored)
            if score > 0 and (score >= floor or rank < query.at_least)
        ]
        ranked = ranked[: count if self.lifecycle is None else len(ranked)]
        lives: Sequence[Life | None] = [None] * len(ranked)
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
        return SearchResult(hits, gathered.degraded_reason, gathered.ran, decision=decision)

    def search(
        self, query: str, *, sync: bool = True, use_index: bool = True, **fields: Any
    ) -> list[SearchHit]:
        """`run` for a query given as keyword arguments (the fields of SearchQuery)."""
        return list(self.run(SearchQuery(query, **fields), sync=sync, use_index=use_index).hits)

    def _rebuilt(self) -> bool:
        """Rebuild a failing index (then ask it again): whether it is usable now."""
        self.sync(rebuild=True)
        return self.gather.index_ok

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
