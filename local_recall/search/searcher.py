"""Hybrid search over memories: vectors + LanceDB full-text (BM25) + fuzzy subject/keyword match.

    hits = recall.search("how do we deduplicate memories?", scope="file:src/", limit=5)

Modes: hybrid (all three signals fused), semantic (vectors), text (BM25), fuzzy (typo- and
identifier-tolerant matching of the subject and keywords). How the score is made and what a
threshold on it means: docs/search.md. The decisions — fusion, fuzzy scoring, filtering,
ordering — are pure functions below; `Searcher` only gathers their inputs.

Failures degrade, they never surface: an unreachable embedder leaves text + fuzzy; a broken
index is rebuilt, and until it is, search runs over the memory files alone. Why the last search
was degraded is kept in `state/search-status.json` for `local-recall doctor`.
"""

from __future__ import annotations

import contextlib
import heapq
import json
import logging
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from local_recall.errors import (
    ConfigError,
    EmbedderUnavailable,
    IndexUnavailable,
    InvalidInput,
    StorageError,
)
from local_recall.memory.model import (
    KINDS,
    Memory,
    estimate_tokens,
    format_timestamp,
    parse_scope,
    scope_matches,
)
from local_recall.memory.store import MemoryStore
from local_recall.repo.config import Config
from local_recall.repo.files import write_text_atomic
from local_recall.repo.layout import Layout
from local_recall.search.embedders import Embedder, embedder_fingerprint
from local_recall.search.index import (
    Candidate,
    IndexReport,
    MemoryIndex,
    console_progress,
    embedder_identity,
    sync_memories,
)
from local_recall.search.index_plan import row_key
from local_recall.search.text_terms import identifier_parts, query_terms, query_text, words

log = logging.getLogger(__name__)

MODES: Final = ("hybrid", "semantic", "text", "fuzzy")
SNIPPET_CHARS: Final = 240
STATUS_FILE: Final = "search-status.json"
MAX_LIMIT: Final = 1_000


# --- values ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SearchHit:
    id: str
    subject: str
    score: float  # 0..1, see docs/search.md#scores
    applies_to: str
    occurred_at: datetime
    keywords: tuple[str, ...]
    snippet: str
    tokens: int  # estimate of the whole memory (subject + body)
    kind: str
    path: str

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "subject": self.subject,
            "score": round(self.score, 4),
            "applies_to": self.applies_to,
            "occurred_at": format_timestamp(self.occurred_at),
            "keywords": list(self.keywords),
            "snippet": self.snippet,
            "tokens": self.tokens,
            "kind": self.kind,
            "path": self.path,
        }


@dataclass(frozen=True, slots=True)
class SearchStatus:
    """The state of the last search or sync, for `doctor` and `Recall.search_status()`."""

    fallback: str | None  # why search ran degraded, None when everything worked
    at: str | None  # ISO time it was recorded
    embedder: str | None = None  # provider:model the search used

    def to_json(self) -> dict[str, Any]:
        return {"fallback": self.fallback, "at": self.at, "embedder": self.embedder}


@dataclass(frozen=True, slots=True)
class IndexHealth:
    """What `local-recall doctor` reports about search (gathered by `Searcher.health()`)."""

    embedder: str  # provider:model as configured
    embedder_fingerprint: str | None  # None when it cannot be loaded or reached
    embedder_error: str | None
    index_embedder: str | None  # the fingerprint the index was built with (None: text-only)
    index_exists: bool
    indexed: int | None  # rows in the index; None when it cannot be read
    index_error: str | None
    files: int  # readable memory files of both kinds
    has_ann: bool
    last_fallback: str | None


@dataclass(frozen=True, slots=True)
class Weights:
    """How much each signal counts in a hybrid score (renormalised over the signals present).
    Chosen on the LoCoMo dev split (benchmarks/README.md): the vector signal carries most of
    the meaning, BM25 the exact words, fuzzy the typos and identifiers."""

    vector: float = 0.6
    text: float = 0.3
    fuzzy: float = 0.1


# Cosine similarities of all-MiniLM-L6-v2 between a question and an unrelated text sit below
# ~0.2; a memory that answers it is usually above ~0.5. The vector signal maps [0.2, 1] onto
# [0, 1] (linearly, so no two memories tie at the top) and ignores anything below.
VECTOR_FLOOR: Final = 0.2
# BM25 is divided by the best score of the query, but never by less than this: in a store of
# ten memories a one-word match scores ~2-4 and should not count as a perfect text match.
TEXT_REFERENCE: Final = 5.0
FUZZY_MIN_RATIO: Final = 80.0  # rapidfuzz ratio (0..100) under which two words differ


# --- pure decisions -------------------------------------------------------------------------


def vector_signal(cosine: float) -> float:
    return min(1.0, max(0.0, (cosine - VECTOR_FLOOR) / (1.0 - VECTOR_FLOOR)))


def fuse(
    vector: Mapping[str, float],
    text: Mapping[str, float],
    fuzzy: Mapping[str, float],
    *,
    weights: Weights = Weights(),
    use_vector: bool = True,
    use_text: bool = True,
    use_fuzzy: bool = True,
    vector_missing: float | None = None,
    text_missing: float | None = None,
    text_reference: float = TEXT_REFERENCE,
) -> dict[str, float]:
    """Score every candidate in 0..1: a weighted mean of its signals, each in 0..1.

    vector: cosine similarities (mapped by `vector_signal`); text: BM25 scores (divided by the
    best of this query or `text_reference`, whichever is larger; 1.0 for the 0..1 word
    coverage used without an index); fuzzy: already 0..1. A signal
    that did not run (`use_*` False) drops out and the others' weights are renormalised; a
    candidate a signal did not return gets 0 from it — or `vector_missing` / `text_missing`
    (raw cosine / BM25) when that signal's candidate list was cut off at its depth."""
    parts: list[tuple[float, Callable[[str], float]]] = []
    if use_vector:
        v_gap = 0.0 if vector_missing is None else vector_signal(vector_missing)
        parts.append((weights.vector, lambda k: vector_signal(vector[k]) if k in vector else v_gap))
    if use_text:
        best = max(max(text.values(), default=0.0), text_reference)
        t_gap = text_missing or 0.0
        parts.append((weights.text, lambda k: min(1.0, text.get(k, t_gap) / best)))
    if use_fuzzy:
        parts.append((weights.fuzzy, lambda k: fuzzy.get(k, 0.0)))
    total = sum(w for w, _ in parts)
    if total <= 0:
        return {}
    keys = {*vector, *text, *fuzzy}
    return {k: sum(w * signal(k) for w, signal in parts) / total for k in keys}


def rank(
    scores: Mapping[str, float],
    memories: Mapping[str, Memory],
    *,
    scope: str | None,
    include_global: bool,
    since: datetime | None,
    until: datetime | None,
    min_score: float,
    limit: int,
) -> list[tuple[str, float]]:
    """Filter and order: best score first; between equal scores the newer memory first."""
    chosen = []
    for key, score in scores.items():
        memory = memories.get(key)
        if memory is None or score <= 0 or score < min_score:
            continue
        if scope is not None and not scope_matches(
            memory.applies_to, scope, include_global=include_global
        ):
            continue
        if (since is not None and memory.occurred_at < since) or (
            until is not None and memory.occurred_at > until
        ):
            continue
        chosen.append((key, round(score, 6), memory.occurred_at.timestamp()))
    chosen.sort(key=lambda item: (-item[1], -item[2], item[0]))
    return [(key, score) for key, score, _ in chosen[:limit]]


@dataclass(frozen=True, slots=True)
class IndexQuery:
    """The part of a search every index query shares."""

    depth: int
    kind: str | None
    since: datetime | None
    until: datetime | None

    def arguments(self) -> dict[str, Any]:
        return {"limit": self.depth, "kind": self.kind, "since": self.since, "until": self.until}


def candidate_depth(limit: int, memories: int, ann_threshold: int, *, filtered: bool) -> int:
    """How many candidates each signal returns. Deep (100) where queries are exact and cheap;
    50 on stores large enough for the ANN index, where every extra candidate costs time
    (LoCoMo: R@5 −0.005 at 50 vs 100, with the imputation in `fuse`). ×4 when a scope filter
    will drop some afterwards."""
    base = max(100, limit * 10) if memories < ann_threshold else max(50, limit * 5)
    return max(1, min(base * (4 if filtered else 1), memories))


def best_of(scores: Mapping[str, float], count: int) -> dict[str, float]:
    """The `count` best-scored keys (a common word can fuzzy-match thousands of memories)."""
    if len(scores) <= count:
        return dict(scores)
    return dict(heapq.nlargest(count, scores.items(), key=lambda item: item[1]))


def snippet(body: str, terms: Sequence[str], width: int = SNIPPET_CHARS) -> str:
    """One line of the body around the first query word it contains (else its start)."""
    flat = " ".join(body.split())
    if len(flat) <= width:
        return flat
    lowered = flat.lower()
    hits = [pos for t in terms if len(t) > 2 and (pos := lowered.find(t)) >= 0]
    start = max(0, min(hits) - width // 4) if hits else 0
    if start:
        space = flat.find(" ", start)
        start = space + 1 if 0 <= space < start + 20 else start
    text = flat[start : start + width]
    return ("…" if start else "") + text + ("…" if start + width < len(flat) else "")


# --- fuzzy ----------------------------------------------------------------------------------


class FuzzyMatcher:
    """rapidfuzz over the words of each memory's subject and keywords (identifiers split).

    A memory's fuzzy score is the share of the query's words that have a close match (ratio
    ≥ 80: one or two typos) among its words, each counted by how close it is. The vocabulary is
    bucketed by first and second letter so a query word is compared with a small slice of it."""

    def __init__(self, memories: Mapping[str, Memory]) -> None:
        # Words in more subjects than this are skipped: fuzzy matching is for typos and rare
        # identifiers, and a word shared by 2% of a large store would touch thousands of rows.
        self._common = max(200, len(memories) // 50)
        self._postings: dict[str, set[str]] = defaultdict(set)
        for key, memory in memories.items():
            for word in self.words_of(memory):
                self._postings[word].add(key)
        self._buckets: dict[str, list[str]] = defaultdict(list)
        for word in self._postings:
            self._buckets["0" + word[0]].append(word)
            if len(word) > 1:
                self._buckets["1" + word[1]].append(word)

    @staticmethod
    def words_of(memory: Memory) -> set[str]:
        text = f"{memory.subject} {' '.join(memory.keywords)}"
        found = {w for w in words(text) if len(w) > 1}
        found.update(identifier_parts(text))
        found.update(w.lower() for w in memory.keywords if " " not in w and len(w) > 1)
        return found

    def scores(self, terms: Sequence[str]) -> dict[str, float]:
        from rapidfuzz import fuzz, process

        wanted = [t for t in terms if len(t) > 1]
        if not wanted:
            return {}
        totals: dict[str, float] = defaultdict(float)
        for term in wanted:
            best: dict[str, float] = {}
            choices = {
                *self._buckets.get("0" + term[0], ()),
                *(self._buckets.get("1" + term[1], ()) if len(term) > 1 else ()),
            }
            if term in self._postings:
                choices.add(term)
            cutoff = 100.0 if len(term) < 4 else FUZZY_MIN_RATIO  # short words: exact only
            for word, ratio, _ in process.extract(
                term, list(choices), scorer=fuzz.ratio, score_cutoff=cutoff, limit=None
            ):
                keys = self._postings[word]
                if len(keys) > self._common:
                    continue  # a word in this many subjects tells nothing apart (BM25 weighs it)
                for key in keys:
                    best[key] = max(best.get(key, 0.0), ratio / 100.0)
            for key, value in best.items():
                totals[key] += value
        return {key: value / len(wanted) for key, value in totals.items()}


def coverage_scores(terms: Sequence[str], memories: Mapping[str, Memory]) -> dict[str, float]:
    """Without an index: the share of query words found in each memory (prefix-tolerant so
    "deduplicating" meets "deduplicate"). Slow and plain, but it needs only the files."""
    wanted = [t for t in terms if len(t) > 1]
    if not wanted:
        return {}
    stems = [t[:6] for t in wanted]
    scores: dict[str, float] = {}
    for key, memory in memories.items():
        have = {w[:6] for w in words(f"{memory.subject} {' '.join(memory.keywords)} {memory.body}")}
        found = sum(1 for s in stems if s in have)
        if found:
            scores[key] = found / len(stems)
    return scores


# --- the searcher ---------------------------------------------------------------------------


EmbedderFactory = Callable[[Config], Embedder]


def configured_embedder(config: Config) -> Embedder:
    """The embedder `[embedder]` names (the default Settings.embedder_factory)."""
    from local_recall.search.embedders import make_embedder

    return make_embedder(
        config.get("embedder", "provider"),
        model=config.get("embedder", "model") or None,
        ollama_host=config.get("embedder", "ollama_host") or None,
        timeout_seconds=config.get("embedder", "timeout_seconds"),
    )


class Searcher:
    """Keeps the index in step with the stores and answers queries. One per `Recall`; safe to
    keep for the life of a process (the daemon does): the embedder is loaded once."""

    def __init__(
        self,
        layout: Layout,
        config: Config,
        stores: Sequence[MemoryStore],
        embedder_factory: EmbedderFactory,
        clock: Callable[[], datetime],
    ) -> None:
        self._layout = layout
        self._config = config
        self._stores = stores
        self._factory = embedder_factory
        self._clock = clock
        self.index = MemoryIndex(
            layout.index_dir,
            layout.state_dir / "index.lock",
            ann_threshold=config.get("search", "ann_threshold"),
        )
        self._embedder: Embedder | None = None
        self._memories: dict[str, Memory] | None = None
        self._fuzzy: FuzzyMatcher | None = None
        self._fuzzy_signature = 0
        self._kinds: frozenset[str] = frozenset()
        self._executor: ThreadPoolExecutor | None = None
        self._ann_threshold = int(config.get("search", "ann_threshold"))
        self._index_ok = True
        self._status: SearchStatus | None = None
        self.weights = Weights()

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._factory(self._config)
        return self._embedder

    @property
    def status_path(self) -> Path:
        return self._layout.state_dir / STATUS_FILE

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

    def sync(self, *, rebuild: bool = False, progress: bool = False) -> IndexReport:
        memories = self.load_memories()
        try:
            if progress:
                with console_progress() as update:
                    report = sync_memories(
                        self.index,
                        list(memories.values()),
                        self.embedder,
                        rebuild=rebuild,
                        progress=update,
                    )
            else:
                report = sync_memories(
                    self.index, list(memories.values()), self.embedder, rebuild=rebuild
                )
        except IndexUnavailable as exc:
            self._index_ok = False
            self._record(f"index unavailable: {exc}")
            return IndexReport(0, 0, 0, len(memories), False, 0.0, f"index unavailable: {exc}")
        self._index_ok = True
        self._record(report.fallback)
        return report

    # --- search ---------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int | None = None,
        scope: str | None = None,
        mode: str = "hybrid",
        min_score: float | None = None,
        include_global: bool = True,
        since: datetime | None = None,
        until: datetime | None = None,
        kind: str | None = "episodic",
        sync: bool = True,
        use_index: bool = True,
    ) -> list[SearchHit]:
        """Best memories first. An empty (or blank) query returns []: use `list` for recent.

        `use_index=False` answers from the files alone (word match + fuzzy): no LanceDB, no
        model loaded — ~0.5 s instead of ~3 s in a fresh process, for a hook with no daemon."""
        if mode not in MODES:
            raise InvalidInput(f"unknown search mode {mode!r}: use {', '.join(MODES)}")
        if kind is not None and kind not in KINDS:
            raise InvalidInput(f"unknown memory kind {kind!r}: use {', '.join(KINDS)}")
        count = self._config.get("search", "default_limit") if limit is None else limit
        if not 1 <= count <= MAX_LIMIT:
            raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}, got {count}")
        floor = self._config.get("search", "min_score") if min_score is None else min_score
        if not 0.0 <= floor <= 1.0:
            raise InvalidInput(f"min_score must be between 0 and 1, got {floor}")
        wanted_scope = None if scope is None else parse_scope(scope)
        text = query_text(query)
        if not text:
            return []
        if sync and use_index:
            self.sync()
        memories = self._memories if self._memories is not None else self.load_memories()
        terms = query_terms(text)
        if not use_index:
            scores = self._lexical_scores(terms, mode, kind, count, memories)
        else:
            scores = self._scores(
                text,
                terms,
                mode,
                kind,
                since,
                until,
                count,
                memories,
                filtered=wanted_scope is not None,
                allow_rebuild=sync,
            )
        ranked = rank(
            scores,
            memories,
            scope=wanted_scope,
            include_global=include_global,
            since=since,
            until=until,
            min_score=floor,
            limit=count,
        )
        return [self._hit(memories[key], score, terms) for key, score in ranked]

    def _scores(
        self,
        text: str,
        terms: list[str],
        mode: str,
        kind: str | None,
        since: datetime | None,
        until: datetime | None,
        limit: int,
        memories: Mapping[str, Memory],
        *,
        filtered: bool,
        allow_rebuild: bool,
    ) -> dict[str, float]:
        present = kind is None or kind in self._kinds
        # Filtering by kind in LanceDB costs a scan of the column; skip it when every
        # memory is of the wanted kind anyway.
        index_kind = None if self._kinds <= {kind} else kind
        use_vector = mode in ("hybrid", "semantic")
        use_text = mode in ("hybrid", "text")
        use_fuzzy = mode in ("hybrid", "fuzzy")
        depth = candidate_depth(limit, len(memories), self._ann_threshold, filtered=filtered)
        ask = IndexQuery(depth=depth, kind=index_kind, since=since, until=until)
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
                query_vector = self.embedder.embed_query(text)
            except EmbedderUnavailable as exc:
                degraded.append(f"embedder unavailable, text + fuzzy only: {exc}")
                use_vector, use_text, use_fuzzy = False, True, True
        vector: dict[str, float] = {}
        text_hits: dict[str, float] = {}
        text_reference = TEXT_REFERENCE
        if (use_vector or use_text) and present:
            found = self._from_index(
                query_vector,
                terms if use_text else None,
                text_future,
                ask,
                allow_rebuild=allow_rebuild,
            )
            if found is None:
                degraded.append("index unavailable: plain word match over the files")
                text_hits = coverage_scores(
                    terms, {k: m for k, m in memories.items() if kind is None or m.kind == kind}
                )
                text_reference = 1.0  # coverage is 0..1, not BM25
                use_vector, use_text, use_fuzzy = False, True, True
            else:
                vector, text_hits = found
        fuzzy: dict[str, float] = {}
        if fuzzy_future is not None:
            fuzzy = fuzzy_future.result()
        elif use_fuzzy:  # fuzzy mode, or hybrid once the embedder turned out unavailable
            fuzzy = self._fuzzy_scores(terms, kind, depth, memories)
        self._record("; ".join(degraded) or None)
        return fuse(
            vector,
            text_hits,
            fuzzy,
            weights=self.weights,
            use_vector=use_vector,
            use_text=use_text,
            use_fuzzy=use_fuzzy,
            # A memory a full candidate list left out scores at most its last entry there.
            vector_missing=min(vector.values()) if len(vector) >= depth else None,
            text_missing=min(text_hits.values()) if len(text_hits) >= depth else None,
            text_reference=text_reference,
        )

    def _fuzzy_scores(
        self, terms: list[str], kind: str | None, depth: int, memories: Mapping[str, Memory]
    ) -> dict[str, float]:
        matched = self._fuzzy_matcher(memories).scores(terms)
        if kind is not None and not self._kinds <= {kind}:  # a filter only where it drops some
            matched = {k: v for k, v in matched.items() if memories[k].kind == kind}
        return best_of(matched, depth)

    def _lexical_scores(
        self,
        terms: list[str],
        mode: str,
        kind: str | None,
        limit: int,
        memories: Mapping[str, Memory],
    ) -> dict[str, float]:
        """The files alone: word coverage (for hybrid/text/semantic) and fuzzy (hybrid/fuzzy)."""
        of_kind = {k: m for k, m in memories.items() if kind is None or m.kind == kind}
        use_text = mode != "fuzzy"
        use_fuzzy = mode in ("hybrid", "fuzzy")
        depth = candidate_depth(limit, len(of_kind), self._ann_threshold, filtered=False)
        text_hits = coverage_scores(terms, of_kind) if use_text else {}
        fuzzy: dict[str, float] = {}
        if use_fuzzy:
            matched = self._fuzzy_matcher(memories).scores(terms)
            fuzzy = best_of({k: v for k, v in matched.items() if k in of_kind}, depth)
        return fuse(
            {},
            text_hits,
            fuzzy,
            weights=self.weights,
            use_vector=False,
            use_text=use_text,
            use_fuzzy=use_fuzzy,
            vector_missing=None,
            text_missing=None,
            text_reference=1.0,
        )

    def _from_index(
        self,
        query_vector: Any,
        terms: list[str] | None,
        text_future: Future[list[Candidate]] | None,
        ask: IndexQuery,
        *,
        allow_rebuild: bool,
    ) -> tuple[dict[str, float], dict[str, float]] | None:
        """(vector, text) candidates from the index; None when it cannot answer. A failing
        index is rebuilt once (when syncing is allowed) and asked again."""
        for attempt in (1, 2):
            if not self._index_ok:
                return None
            try:
                vector: dict[str, float] = {}
                if query_vector is not None:
                    found = self.index.vector_search(query_vector, **ask.arguments())
                    vector = {c.key: c.score for c in found}
                text: dict[str, float] = {}
                if text_future is not None:
                    future, text_future = text_future, None
                    text = {c.key: c.score for c in future.result()}
                elif terms:
                    text = {
                        c.key: c.score for c in self.index.text_search(terms, **ask.arguments())
                    }
                return vector, text
            except IndexUnavailable as exc:
                log.warning("search: %s", exc)
                if text_future is not None:  # let the worker finish before handles are dropped
                    with contextlib.suppress(IndexUnavailable):
                        text_future.result()
                    text_future = None
                self.index.forget()
                if attempt == 1 and allow_rebuild:
                    self.sync(rebuild=True)
                else:
                    self._index_ok = False
        return None

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            # two workers: the full-text query and the fuzzy match (searches are serialised)
            self._executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="recall-search")
        return self._executor

    def _fuzzy_matcher(self, memories: Mapping[str, Memory]) -> FuzzyMatcher:
        if self._fuzzy is None:
            self._fuzzy = FuzzyMatcher(memories)
        return self._fuzzy

    def _hit(self, memory: Memory, score: float, terms: Sequence[str]) -> SearchHit:
        return SearchHit(
            id=memory.id,
            subject=memory.subject,
            score=score,
            applies_to=memory.applies_to,
            occurred_at=memory.occurred_at,
            keywords=memory.keywords,
            snippet=snippet(memory.body, terms),
            tokens=estimate_tokens(f"{memory.subject}\n{memory.body}"),
            kind=memory.kind,
            path=str(memory.path) if memory.path else "",
        )

    # --- status ---------------------------------------------------------------------------------

    def health(self) -> IndexHealth:
        """Load the embedder, read the index: what doctor needs. Never raises."""
        memories = self.load_memories()
        fingerprint: str | None = None
        error: str | None = None
        identity = "?"
        try:
            embedder = self.embedder
            identity = embedder_identity(embedder)
            embedder.embed_query("local-recall doctor")  # loads MiniLM / reaches Ollama
            fingerprint = embedder_fingerprint(embedder)
        except (EmbedderUnavailable, ConfigError) as exc:
            error = str(exc)
        meta = self.index.read_meta()
        indexed: int | None = None
        index_error: str | None = None
        has_ann = False
        exists = self.index.exists()
        if exists:
            try:
                indexed = self.index.count()
                has_ann = self.index.has_ann()
            except IndexUnavailable as exc:
                index_error = str(exc)
        return IndexHealth(
            embedder=identity,
            embedder_fingerprint=fingerprint,
            embedder_error=error,
            index_embedder=None if meta is None else meta.embedder,
            index_exists=exists,
            indexed=indexed,
            index_error=index_error,
            files=len(memories),
            has_ann=has_ann,
            last_fallback=self.status().fallback,
        )

    def _record(self, fallback: str | None) -> None:
        """Remember why search is degraded; the file is rewritten only when that changes."""
        previous = self._status if self._status is not None else self.status()
        if previous.fallback == fallback:
            return
        status = SearchStatus(fallback, format_timestamp(self._clock()), _identity(self._embedder))
        self._status = status
        try:
            write_text_atomic(self.status_path, json.dumps(status.to_json()) + "\n")
        except StorageError as exc:  # read-only checkout: the status is informational
            log.debug("search status not saved: %s", exc)

    def status(self) -> SearchStatus:
        if self._status is not None:
            return self._status
        try:
            data = json.loads(self.status_path.read_text(encoding="utf-8"))
            return SearchStatus(data.get("fallback"), data.get("at"), data.get("embedder"))
        except (OSError, ValueError, AttributeError):
            return SearchStatus(None, None)


def _identity(embedder: Embedder | None) -> str | None:
    return None if embedder is None else f"{embedder.name}:{embedder.model}"
