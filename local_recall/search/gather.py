"""Which memories could answer a query, and their raw signals — the inputs of scoring.py's
pure decisions — gathered from the index (`from_index`: vector and full-text candidates, with
the fuzzy match in a worker meanwhile) or, with no index at hand, from the files alone
(`from_files`: word coverage, fuzzy and the vector cache). Failures degrade, never surface:
the `Gathered` value says which signals ran and why any were missing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from local_recall.errors import EmbedderUnavailable
from local_recall.memory.model import Memory
from local_recall.search.changes import Changes, changes_since
from local_recall.search.embedders import Embedder, embedder_fingerprint
from local_recall.search.fuzzy import FuzzyMatcher
from local_recall.search.index.candidates import IndexQuery, from_index
from local_recall.search.index.queries import Candidate, text_search
from local_recall.search.index.rows import MemoryIndex
from local_recall.search.keyword_index import KeywordIndex
from local_recall.search.query import SearchQuery
from local_recall.search.relevance import query_profile
from local_recall.search.relevance_inputs import Gathered, RelevanceInputs
from local_recall.search.scoring import (
    Engines,
    Signals,
    best_of,
    choose_engines,
    coverage_scores,
    gather_signals,
    ran_signals,
)
from local_recall.search.vector_cache import VectorCache


def engines_of(
    query: SearchQuery, limit: int, memories: int, cache: VectorCache | None, *, kept: bool
) -> Engines:
    """A search's engines (scoring.choose_engines); `kept`: a keyword index is kept here.
    `--mode text` asks LanceDB: BM25 over the whole document is what a person who asks for a
    text search gets everywhere; in hybrid, text only gathers candidates, which the relevance
    scores alike whichever engine found them."""
    return choose_engines(
        limit,
        memories,
        vectors=None if cache is None else len(cache.keys),
        filtered=query.scope is not None,
        dated=query.since is not None or query.until is not None,
        keywords=kept,
        whole_text=(query.mode == "text" and not query.prompt) or query.lancedb_text,
    )


def _head_moved(old: Memory | None, new: Memory) -> bool:
    """Whether the fuzzy vocabulary (subjects and keywords) may differ for this memory."""
    return old is None or old.subject != new.subject or old.keywords != new.keywords


class SignalGatherer:
    """One per Searcher: it keeps the fuzzy vocabulary, two worker threads and whether the
    index answered last time. Not for concurrent use (searches are serialised)."""

    def __init__(
        self,
        index: MemoryIndex,
        relevance: RelevanceInputs,
        embedder: Callable[[], Embedder],
        *,
        rebuild: Callable[[], bool],
    ) -> None:
        self.index = index
        self.relevance = relevance
        self._embedder = embedder  # loaded on first use: the files path may never need it
        self._rebuild = rebuild  # rebuild a failing index: whether it is usable now
        self.index_ok = True
        self.kinds: frozenset[str] = frozenset()
        self._fuzzy: FuzzyMatcher | None = None
        self._kind_counts: dict[str, int] = {}  # kind -> memories of it, kept by difference
        self._executor: ThreadPoolExecutor | None = None
        # Kept by long-lived processes (`keep_keywords`): the full-text candidates without a
        # LanceDB query. None: each search asks LanceDB's full-text index.
        self.keywords: KeywordIndex | None = None
        self._memories: Mapping[str, Memory] = {}

    @property
    def embedder(self) -> Embedder:
        return self._embedder()

    def use(self, memories: Mapping[str, Memory], changes: Changes | None = None) -> None:
        """The memories searched from now on; `changes`: from the memories used last (else
        found here, by identity). The fuzzy vocabulary depends only on subjects and keywords:
        it is rebuilt when one of them changes. Each part costs what changed, not the store."""
        step = changes_since(self._memories, memories, changes)
        if step.removed or any(_head_moved(step.before.get(k), memories[k]) for k in step.changed):
            self._fuzzy = None
        for key in step.removed:
            self._count_kind(step.before[key].kind, -1)
        for key in step.changed:
            old = step.before.get(key)
            if old is not None:
                self._count_kind(old.kind, -1)
            self._count_kind(memories[key].kind, 1)
        self.kinds = frozenset(self._kind_counts)
        self._memories = memories
        if self.keywords is not None:
            self.keywords.update(memories, self.relevance.terms, keys=step.keys)

    def _count_kind(self, kind: str, by: int) -> None:
        left = self._kind_counts.get(kind, 0) + by
        if left > 0:
            self._kind_counts[kind] = left
        else:
            self._kind_counts.pop(kind, None)

    def keep_keywords(self) -> None:
        """Keep an in-process keyword index from now on (keyword_index.py): for a process that
        answers many searches (the daemon, the MCP server). Built here from the memories last
        used (~80 µs a memory whose terms are not cached yet), then updated by difference."""
        if self.keywords is None:
            self.keywords = KeywordIndex()
            self.keywords.update(self._memories, self.relevance.terms)

    def from_index(
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
        present = kind is None or kind in self.kinds
        # Filtering by kind in LanceDB costs a scan of the column; skip it when every
        # memory is of the wanted kind anyway.
        index_kind = None if self.kinds <= {kind} else kind
        use_vector = query.mode in ("hybrid", "semantic")
        use_text = query.mode in ("hybrid", "text")
        use_fuzzy = query.mode in ("hybrid", "fuzzy")
        cache = self._cache() if use_vector else None
        engines = engines_of(query, limit, len(memories), cache, kept=self.keywords is not None)
        depth = engines.depth
        ask = IndexQuery(depth=depth, kind=index_kind, since=query.since, until=query.until)
        in_process = self._keyword_text(engines, terms, text, index_kind)
        # The full-text query and the fuzzy match run in workers while this thread embeds the
        # query and asks for vectors (onnxruntime and LanceDB release the GIL): hybrid costs
        # about the slowest of the three, not their sum.
        text_future = None
        if use_text and present and self.index_ok and terms and in_process is None:
            text_future = self._pool().submit(text_search, self.index, terms, **ask.arguments())
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
            if self.index_ok:
                found = self._from_index(
                    query_vector,
                    cache if engines.vector == "exact" else None,
                    terms if use_text and in_process is None else None,
                    text_future,
                    ask,
                    rebuild=self._rebuild if allow_rebuild else None,
                    keyword_text=in_process if use_text else None,
                )
                self.index_ok = found is not None
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

    def _cache(self) -> VectorCache | None:
        with contextlib.suppress(EmbedderUnavailable):
            return self.relevance.vectors(embedder_fingerprint(self.embedder))
        return None

    def _keyword_text(
        self, engines: Engines, terms: list[str], text: str, kind: str | None
    ) -> Callable[[], dict[str, float]] | None:
        """The full-text candidates from the in-process keyword index, where `engines` chose
        it; None: LanceDB's full-text query answers."""
        keywords = self.keywords
        if keywords is None or not terms or engines.text != "keywords":
            return None
        stems = query_profile(text).stems
        return lambda: keywords.search(stems, engines.depth, kind=kind)

    def _from_index(
        self,
        query_vector: Any,
        exact_from: VectorCache | None,
        terms: list[str] | None,
        text_future: Future[list[Candidate]] | None,
        ask: IndexQuery,
        *,
        rebuild: Callable[[], bool] | None,
        keyword_text: Callable[[], dict[str, float]] | None = None,
    ) -> tuple[dict[str, float], dict[str, float]] | None:
        """The index's (vector, text) candidates for `query_vector` (None: no vector signal):
        from LanceDB, or exactly from the vector cache `exact_from`; the text ones from
        `keyword_text` (the in-process keyword index) when given, as `engines` chose."""
        exact = None
        if exact_from is not None and query_vector is not None:
            exact = exact_from.nearest(query_vector, ask.depth, kind=ask.kind)
        vector = query_vector if exact is None else None
        found = from_index(self.index, vector, terms, text_future, ask, rebuild=rebuild)
        if found is None:
            return None
        return (
            found[0] if exact is None else exact,
            found[1] if keyword_text is None else keyword_text(),
        )

    def from_files(
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
            depth=choose_engines(limit, len(of_kind), vectors=None).depth,
            fuzzy=lambda words: self._fuzzy_matcher(memories).scores(words),
            query_vector=lambda: self.relevance.query_vector(text, self.embedder.embed_query),
            embedder=lambda: embedder_fingerprint(self.embedder),
        )

    def cached_cosines(
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
        if kind is not None and not self.kinds <= {kind}:  # a filter only where it drops some
            matched = {k: v for k, v in matched.items() if memories[k].kind == kind}
        return best_of(matched, depth)

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            # two workers: the full-text query and the fuzzy match (searches are serialised)
            self._executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="recall-search")
        return self._executor

    def _fuzzy_matcher(self, memories: Mapping[str, Memory]) -> FuzzyMatcher:
        if self._fuzzy is None:
            self._fuzzy = FuzzyMatcher(memories)
        return self._fuzzy
