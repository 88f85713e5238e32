"""How a memory's score for a query is made: pure functions over plain values.

    signals = gather_signals(vector, text, fuzzy, ran=frozenset({"vector", "bm25", "fuzzy"}))
    signals = {key: with_features(s, features[key]) for key, s in signals.items()}
    scores = {key: score_hit(s) for key, s in signals.items()}

Every search path — hybrid over the index, a degraded one, the no-daemon fallback of a hook —
collects its candidates' raw `Signals`, adds each candidate's relevance features, and turns
them into its 0..1 score with `score_hit`, the one place a score is computed: the calibrated
relevance of relevance.py (docs/search.md#scores).
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Final, NamedTuple

from local_recall.memory.model import Memory
from local_recall.memory.scope_moves import in_scope
from local_recall.search.relevance import Features, relevance
from local_recall.search.text_terms import words

SNIPPET_CHARS: Final = 240

# all-MiniLM-L6-v2 gives a question and an unrelated text a cosine below ~0.2: below it, and
# without a word in common, a memory is not a hit at all (score 0), whatever the model says.
NO_EVIDENCE_COSINE: Final = 0.2

# The signals a search can gather. "bm25" (the index's full-text score) and "coverage" (word
# matches weighted by the store's term statistics, computed from the files) are the two forms
# of the text signal's candidates; every path computes coverage for its candidates' scores.
VECTOR: Final = "vector"
BM25: Final = "bm25"
COVERAGE: Final = "coverage"
FUZZY: Final = "fuzzy"


class Signals(NamedTuple):
    """The raw inputs of one memory's score for one query. `cosine`, `bm25`: as the candidate
    lists gave them (a signal that ran but did not return this memory is None, unless its list
    was cut off: then the list's last value). The relevance features (`coverage`, `fuzzy`,
    `head_coverage`, `unknown`, `single_term`; `cosine` made exact from the stored vectors) are
    filled in by `with_features` before `score_hit`.
    A NamedTuple, not a dataclass: one is made per candidate (5x cheaper to create)."""

    ran: frozenset[str]  # which of VECTOR, BM25, COVERAGE, FUZZY this search gathered
    cosine: float | None = None  # best cosine similarity of the memory's vectors
    bm25: float | None = None  # raw BM25 of the memory's full-text document
    bm25_best: float = 0.0  # the best BM25 of this query (0 when BM25 did not run)
    coverage: float | None = None  # 0..1 idf-weighted share of the query's stems it holds
    fuzzy: float | None = None  # 0..1 share of query words close to a subject/keyword word
    terms: int = 0  # content words in the query
    head_coverage: float = 0.0  # coverage over subject + keywords only
    unknown: float = 0.0  # idf-weighted share of the query's stems in no memory of the store
    single_term: float = 0.0  # 1.0 when the query has one content word

    def to_json(self) -> dict[str, object]:
        return {**self._asdict(), "ran": sorted(self.ran)}


def with_features(signals: Signals, features: Features) -> Signals:
    """The signals with the relevance features of this (query, memory) pair."""
    return signals._replace(
        cosine=features.cosine,
        coverage=features.coverage,
        fuzzy=features.fuzzy,
        head_coverage=features.head_coverage,
        unknown=features.unknown,
        single_term=features.single_term,
    )


def features_of(signals: Signals) -> Features:
    """The relevance features the signals hold; no cosine unless the vector signal ran."""
    cosine = signals.cosine if VECTOR in signals.ran else None
    return Features(
        cosine=cosine,
        coverage=signals.coverage or 0.0,
        head_coverage=signals.head_coverage,
        fuzzy=signals.fuzzy or 0.0,
        unknown=signals.unknown,
        single_term=signals.single_term,
    )


def score_hit(signals: Signals) -> float:
    """A memory's score in 0..1: the calibrated relevance of its features (relevance.py) —
    roughly the probability that it answers the query, the same on every path. Without a
    cosine (vector signal not run, no vector for this memory, embedder unavailable) the
    word-only model of the same fit answers, on the same scale.

    0 (never returned) for a memory with no evidence at all: not one query word, no close
    identifier, a cosine below NO_EVIDENCE_COSINE — the logistic model never says 0, and a
    search must not list every candidate of an unrelated query at 0.01."""
    if not signals.ran:
        return 0.0
    features = features_of(signals)
    if (
        features.coverage <= 0.0
        and features.fuzzy <= 0.0
        and (features.cosine is None or features.cosine < NO_EVIDENCE_COSINE)
    ):
        return 0.0
    return relevance(features)


def gather_signals(
    vector: Mapping[str, float],
    text: Mapping[str, float],
    fuzzy: Mapping[str, float],
    *,
    ran: frozenset[str],
    vector_missing: float | None = None,
    text_missing: float | None = None,
    terms: int = 0,
) -> dict[str, Signals]:
    """Each candidate's Signals from the per-signal candidate lists (key → raw value). `text`
    holds BM25 scores when BM25 is in `ran`, else coverage. `*_missing`: the value a memory
    left out of a full candidate list is given (that list's last one)."""
    keys = {*vector, *text, *fuzzy}
    if not keys:
        return {}
    bm25 = BM25 in ran
    best = max(text.values(), default=0.0) if bm25 else 0.0
    found: dict[str, Signals] = {}
    for key in keys:  # positional: a hook's files-only search makes thousands of these
        raw_text = text.get(key, text_missing)
        found[key] = Signals(
            ran,
            vector.get(key, vector_missing),
            raw_text if bm25 else None,
            best,
            None if bm25 else raw_text,
            fuzzy.get(key),
            terms,
        )
    return found


def ran_signals(*, vector: bool, text: bool, fuzzy: bool, coverage: bool = False) -> frozenset[str]:
    """The `ran` set of a search: which signals it gathered (text as BM25 or as coverage)."""
    names = []
    if vector:
        names.append(VECTOR)
    if text:
        names.append(COVERAGE if coverage else BM25)
    if fuzzy:
        names.append(FUZZY)
    return frozenset(names)


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
    moved: Mapping[str, tuple[str, str]] | None = None,
) -> list[tuple[str, float]]:
    """Filter and order: best score first; between equal scores the newer memory first.
    `moved`: memory id -> (old, new) path of a renamed `file:` scope, which then matches too."""
    chosen, moves = [], moved or {}
    for key, score in scores.items():
        memory = memories.get(key)
        if memory is None or score <= 0 or score < min_score:
            continue
        if scope is not None and not in_scope(
            memory.applies_to, scope, include_global=include_global, moved=moves.get(memory.id)
        ):
            continue
        if (since is not None and memory.occurred_at < since) or (
            until is not None and memory.occurred_at > until
        ):
            continue
        chosen.append((key, round(score, 6), memory.occurred_at.timestamp()))
    chosen.sort(key=lambda item: (-item[1], -item[2], item[0]))
    return [(key, score) for key, score, _ in chosen[:limit]]


# The one threshold of the engine choice. Up to this many stored vectors (~45k memories of ~3
# passages each), vector candidates come exactly from the vector cache: a matrix product beats
# LanceDB's per-query overhead, and LanceDB scans flat (exactly) for what the product does not
# answer (a date filter). Above it the index builds an ANN (HNSW) index, which answers instead.
# At 100k rows (lancedb 0.40) the product took ~10 ms, the ANN queries ~24 ms (each query reads
# the table's schema three times); the product grows ~0.1 ms per 1k rows.
EXACT_NEAREST_MAX_ROWS = 150_000
ANN_FROM_ROWS = EXACT_NEAREST_MAX_ROWS + 1  # a table's ANN index is built from this many rows
# Not an engine's threshold: the cost of scoring candidates. From this many memories each signal
# returns 50 candidates, not 100 (scale.py at 5,000 memories: hybrid 4.9 -> 14.8 ms p50 at 100).
SHALLOW_FROM_MEMORIES = 5_000


class Engines(NamedTuple):
    """Which engine answers each signal of a search, and how many candidates each returns."""

    vector: str  # "exact": the product over the vector cache; "index": LanceDB's vector query
    text: str  # "keywords": the in-process keyword index; "index": LanceDB's full-text query
    depth: int  # candidates per signal (`candidate_depth`)


def choose_engines(
    limit: int,
    memories: int,
    *,
    vectors: int | None,
    filtered: bool = False,
    dated: bool = False,
    keywords: bool = False,
    whole_text: bool = False,
) -> Engines:
    """The engines of one search over `memories` with `vectors` rows in the vector cache (None:
    no cache). The exact product answers up to EXACT_NEAREST_MAX_ROWS rows without a date
    filter (`dated`); else LanceDB, whose ANN index exists only above that many rows. The
    keyword index answers the full text where it is kept (`keywords`: a long-lived process)
    and the query has no dates (it holds none) and does not ask for BM25 over the whole
    document (`whole_text`: `--mode text`, or a caller that wants LanceDB's)."""
    exact = vectors is not None and 0 < vectors <= EXACT_NEAREST_MAX_ROWS and not dated
    return Engines(
        vector="exact" if exact else "index",
        text="keywords" if keywords and not dated and not whole_text else "index",
        depth=candidate_depth(limit, memories, filtered=filtered),
    )


def candidate_depth(limit: int, memories: int, *, filtered: bool) -> int:
    """How many candidates each signal returns, whichever engine answers. Deep (100) in a
    small store; 50 from SHALLOW_FROM_MEMORIES memories, where every extra candidate costs
    scoring time (LoCoMo: R@5 −0.005 at 50 vs 100, with the imputation in `gather_signals`).
    ×4 when a scope filter will drop some afterwards."""
    base = max(100, limit * 10) if memories < SHALLOW_FROM_MEMORIES else max(50, limit * 5)
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


def _any_in(stems: Sequence[str], text: str) -> bool:
    return any(stem in text for stem in stems)


def coverage_scores(terms: Sequence[str], memories: Mapping[str, Memory]) -> dict[str, float]:
    """Without an index: the share of query words found in each memory (prefix-tolerant so
    "deduplicating" meets "deduplicate"). Slow and plain, but it needs only the files."""
    wanted = [t for t in terms if len(t) > 1]
    if not wanted:
        return {}
    stems = [t[:6] for t in wanted]
    scores: dict[str, float] = {}
    for key, memory in memories.items():
        text = f"{memory.subject} {' '.join(memory.keywords)} {memory.body}"
        # An ASCII text (NFKC leaves it as it is) holds a word starting with a stem only if it
        # holds the stem: one without any is ruled out without splitting it into words.
        if text.isascii() and not _any_in(stems, text.lower()):
            continue
        have = {w[:6] for w in words(text)}
        found = sum(1 for s in stems if s in have)
        if found:
            scores[key] = found / len(stems)
    return scores
