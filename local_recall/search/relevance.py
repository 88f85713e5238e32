"""Calibrated relevance: how likely a memory answers a query, in [0, 1], the same on every path.

    query = query_profile("how do I run the tests?")
    stats = term_stats(memory_terms(m.subject, m.keywords, m.body) for m in memories)
    features = extract_features(query, memory_terms(...), stats, cosine=0.61)
    if relevance(features) >= DEFAULT_THRESHOLD: ...  # inject / return it

Search scores used to be relative (BM25 divided by the query's best BM25; a vector floor), so
the best hit of a query always looked good, whatever it matched, and a fixed threshold could
not tell an answer from "the best of nothing". The features here are absolute: the cosine of
the query's embedding and the memory's stored vector (the same numbers wherever they are read),
and word matches weighted by the store's own term statistics. A logistic model turns them into a
probability-like score; its constants were fitted on LoCoMo dev conversations (see FIT_NOTE).

Same inputs on every path, or the decisions differ: the cosine is read from the stored vectors
(exact dot products, not an ANN index's approximate distances) and the TermStats are the
store's, persisted beside the vectors by the indexer (`TermStats.to_json` /
`term_stats_from_json`): `memory_terms` costs ~80 µs a memory, too much for 10k memories in a
cold hook, so a search computes it for its candidates only.

Pure: strings and numbers in, numbers out. rapidfuzz (a C extension, no I/O) is imported lazily.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final

from local_recall.search.text_terms import STOP_WORDS, identifier_parts, words

# --- the fitted constants -------------------------------------------------------------------

FIT_NOTE: Final = (
    "benchmarks/relevance_fit.py: LoCoMo observations, fitted on dev conversations 26, 30, 41 "
    "(positives: each question's evidence memories among its candidates; negatives: the other "
    "candidates, every candidate of another conversation's questions and of generic coding "
    "prompts), evaluated on held-out dev conversations 42, 43. No test conversation is used."
)
# Intercept first, then one weight per entry of `Features.vector()` (cosine known) and of
# `Features.lexical_vector()` (no vector for this memory, or no embedder). Fitted with
# `benchmarks/relevance_fit.py --negative-rate 0.08`; the intercept is shifted so that
# DEFAULT_THRESHOLD is the threshold at which 8 % of the fit split's negative prompts get
# anything. Held-out (conversations 42, 43; 377 questions, 457 negative prompts), with cosine:
# hit AUC 0.934, evidence found 0.668 (0.687 is the ceiling of the 10 best candidates),
# negatives with anything 0.055; lexical only: AUC 0.891, 0.496, 0.083.
WEIGHTS: Final = (-5.9136, 9.0003, 4.4574, -1.1793, 0.8724, 1.3731, -2.4409)
LEXICAL_WEIGHTS: Final = (-2.9182, 5.5847, -2.0496, 3.3531, 0.28, -5.7798)
# Inject / return a memory at or above this relevance (both models share it).
DEFAULT_THRESHOLD: Final = 0.5

FUZZY_MIN_RATIO: Final = 80.0  # rapidfuzz ratio (0..100): one or two typos
STEM_CHARS: Final = 6  # "deduplicating" and "deduplicate" meet at "dedupl"


# --- terms ----------------------------------------------------------------------------------


@lru_cache(maxsize=1 << 16)  # a store repeats its words: stemming each once is most of the cost
def stem(word: str) -> str:
    """A crude English stem: a common suffix dropped, then the first STEM_CHARS letters.
    "tests" → "test", "running" → "run", "deduplicating" → "dedupl". Both sides of every
    comparison go through it, so it only has to be consistent, not linguistically right."""
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"  # tries → try
    elif word.endswith("es") and len(word) > 4 and word[:-2].endswith(("s", "x", "z", "ch", "sh")):
        word = word[:-2]  # boxes, pushes, classes (but makes → make)
    else:
        for suffix in ("ing", "ed", "s"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
                word = word[: -len(suffix)]
                if suffix != "s" and word[-1] == word[-2] and word[-1] in "bdgmnpt":
                    word = word[:-1]  # running → runn → run, stopped → stop
                break
    return word[:STEM_CHARS]


def content_words(text: str) -> list[str]:
    """Lower-cased words and identifier parts minus stop words, in order, without duplicates."""
    seen: dict[str, None] = {}
    for word in [*words(text), *identifier_parts(text)]:
        if word not in STOP_WORDS and (len(word) > 1 or word.isdigit()):
            seen.setdefault(word, None)
    return list(seen)


@dataclass(frozen=True, slots=True)
class QueryProfile:
    words: tuple[str, ...]  # content words (for fuzzy matching)
    stems: tuple[str, ...]  # their stems, without duplicates


def query_profile(query: str, max_terms: int = 48) -> QueryProfile:
    found = content_words(query)[:max_terms]
    return QueryProfile(tuple(found), tuple(dict.fromkeys(stem(w) for w in found)))


@dataclass(frozen=True, slots=True)
class MemoryTerms:
    """A memory's stems by field; `head_words` feeds the fuzzy match (identifiers, typos).
    `all` and `fuzzy_choices` are derived once: every search scores ~100 candidates with them."""

    head: frozenset[str]  # subject + keywords
    body: frozenset[str]
    head_words: frozenset[str]
    all: frozenset[str] = field(init=False)
    fuzzy_choices: tuple[str, ...] = field(init=False)  # head words a fuzzy match may pick

    def __post_init__(self) -> None:
        object.__setattr__(self, "all", self.head | self.body)
        object.__setattr__(self, "fuzzy_choices", tuple(w for w in self.head_words if len(w) >= 3))


def memory_terms(subject: str, keywords: Sequence[str], body: str) -> MemoryTerms:
    head_words = frozenset(content_words(f"{subject} {' '.join(keywords)}"))
    return MemoryTerms(
        head=frozenset(map(stem, head_words)),
        # plain words only: splitting CamelCase in a long body costs 3x the rest (the subject
        # and keywords, where identifiers that name a memory sit, are split)
        body=frozenset(stem(w) for w in set(words(body)) if w not in STOP_WORDS),
        head_words=head_words,
    )


@dataclass(frozen=True, slots=True)
class TermStats:
    """Document frequencies of stems over the whole store (all memories a search may return)."""

    documents: int
    df: Counter[str]

    def idf(self, term: str) -> float:
        """BM25's idf (always > 0): rare terms weigh most; a term the store lacks weighs most."""
        df = self.df.get(term, 0)
        return math.log(1.0 + (self.documents - df + 0.5) / (df + 0.5))

    def to_json(self) -> dict[str, object]:
        return {"documents": self.documents, "df": dict(self.df)}


def term_stats_from_json(data: object) -> TermStats | None:
    """TermStats from `to_json` output; None when the data is not of that shape."""
    if not isinstance(data, dict):
        return None
    documents, df = data.get("documents"), data.get("df")
    if not isinstance(documents, int) or not isinstance(df, dict):
        return None
    if not all(isinstance(k, str) and isinstance(v, int) for k, v in df.items()):
        return None
    return TermStats(documents, Counter(df))


def term_stats(memories: Iterable[MemoryTerms]) -> TermStats:
    df: Counter[str] = Counter()
    documents = 0
    for terms in memories:
        documents += 1
        df.update(terms.all)
    return TermStats(documents, df)


# --- features and the score -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Features:
    """What relevance is computed from; every field is absolute (not relative to other hits)."""

    cosine: float | None  # query embedding · memory vector (best of its passages); None: unknown
    coverage: float  # idf-weighted share of the query's stems found anywhere in the memory
    head_coverage: float  # the same over subject + keywords only
    fuzzy: float  # share of query words ≥ 4 letters with a close match in subject/keywords
    unknown: float  # idf-weighted share of the query's stems found in no memory of the store
    single_term: float  # 1.0 when the query has one content word (one match is weak evidence)

    def vector(self) -> tuple[float, ...]:
        cosine = 0.0 if self.cosine is None else self.cosine
        return (cosine, *self.lexical_vector())

    def lexical_vector(self) -> tuple[float, ...]:
        return (self.coverage, self.head_coverage, self.fuzzy, self.unknown, self.single_term)


NO_MATCH: Final = Features(None, 0.0, 0.0, 0.0, 1.0, 0.0)


@dataclass(frozen=True, slots=True)
class QueryWeights:
    """What a query's features need of the store, the same for every candidate: each stem's
    idf, their sum, and the share of that weight on stems no memory holds."""

    pairs: tuple[tuple[str, float], ...]  # (stem, idf), in the query's order
    total: float
    unknown: float


def query_weights(query: QueryProfile, stats: TermStats) -> QueryWeights:
    weights = [stats.idf(t) for t in query.stems]
    unknown = sum(w for t, w in zip(query.stems, weights, strict=True) if t not in stats.df)
    return QueryWeights(tuple(zip(query.stems, weights, strict=True)), sum(weights), unknown)


def extract_features(
    query: QueryProfile,
    memory: MemoryTerms,
    stats: TermStats,
    cosine: float | None,
    weights: QueryWeights | None = None,
    *,
    fuzzy: bool = True,
) -> Features:
    """The features of one (query, memory) pair. `cosine` None when there is no vector;
    `weights`: `query_weights(query, stats)`, computed once for all of a query's candidates;
    `fuzzy=False`: the fuzzy share (most of the cost) left at 0, for `relevance_bound`."""
    if not query.stems:
        return Features(cosine, 0.0, 0.0, 0.0, 1.0, 0.0)
    if weights is None:
        weights = query_weights(query, stats)
    total, everywhere, head_stems = weights.total, memory.all, memory.head
    coverage = sum(w for t, w in weights.pairs if t in everywhere)
    head = sum(w for t, w in weights.pairs if t in head_stems)
    return Features(
        cosine=cosine,
        coverage=coverage / total,
        head_coverage=head / total,
        fuzzy=fuzzy_share(query.words, memory.head_words, memory.fuzzy_choices) if fuzzy else 0.0,
        unknown=weights.unknown / total,
        single_term=1.0 if len(query.stems) == 1 else 0.0,
    )


def fuzzy_share(
    query_words: Sequence[str],
    head_words: Iterable[str],
    choices: Sequence[str] | None = None,
) -> float:
    """Share of the query's words of ≥ 4 letters that match a subject/keyword word with
    rapidfuzz ratio ≥ FUZZY_MIN_RATIO (`procesed` ~ `processed`, `proccessedlog` ~ …).
    `choices`: the head words of ≥ 3 letters, if already at hand."""
    wanted = [w for w in query_words if len(w) >= 4]
    if not wanted:
        return 0.0
    from rapidfuzz import fuzz, process

    if choices is None:
        choices = [w for w in head_words if len(w) >= 3]
    if not choices:
        return 0.0
    exact = head_words if isinstance(head_words, frozenset | set) else frozenset(choices)
    found = sum(
        1
        for w in wanted
        # the same word is a ratio of 100: no need to ask rapidfuzz
        if w in exact
        or process.extractOne(w, choices, scorer=fuzz.ratio, score_cutoff=FUZZY_MIN_RATIO)
    )
    return found / len(wanted)


def _logistic(weights: Sequence[float], values: Sequence[float]) -> float:
    z = weights[0] + sum(w * v for w, v in zip(weights[1:], values, strict=True))
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def relevance_bound(features: Features) -> float:
    """The most `relevance` can be once the fuzzy share is known (both models weigh it up):
    a candidate whose bound cannot win is never given the fuzzy match (scoring.py)."""
    fuzzy = LEXICAL_WEIGHTS[3] if features.cosine is None else WEIGHTS[4]
    if fuzzy <= 0:
        return relevance(features)
    f = features
    return relevance(Features(f.cosine, f.coverage, f.head_coverage, 1.0, f.unknown, f.single_term))


def relevance(features: Features) -> float:
    """How likely the memory answers the query, in [0, 1]; compare with DEFAULT_THRESHOLD.
    Without a cosine the lexical model (fitted the same way, on the same data) answers."""
    if features.cosine is None:
        return _logistic(LEXICAL_WEIGHTS, features.lexical_vector())
    return _logistic(WEIGHTS, features.vector())
