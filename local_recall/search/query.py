"""The search contract: a `SearchQuery` goes in, a `SearchResult` comes out.

    result = recall.query(SearchQuery("how do we deduplicate memories?", scope="file:src/"))
    for hit in result.hits:                 # best first
        hit.score, hit.memory.body          # the whole memory travels with its hit
    result.degraded, result.degraded_reason # and whether (and why) signals were missing

The CLI, the MCP server, the daemon's socket and the hooks' no-daemon fallback all ask in these
terms, so a score and a `min_score` mean the same on every path (docs/search.md#the-contract).
Pure values: validation raises InvalidInput naming the bad field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from local_recall.errors import InvalidInput
from local_recall.memory.life import Life
from local_recall.memory.model import KINDS, Memory, estimate_tokens, parse_scope
from local_recall.memory.timestamps import format_timestamp
from local_recall.search.decision import Decision
from local_recall.search.limits import MAX_LIMIT, MAX_QUERY_CHARS
from local_recall.search.scoring import Signals

MODES: Final = ("hybrid", "semantic", "text", "fuzzy")


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """What to look for. `limit` and `min_score` None take the `[search]` config defaults.
    `text` longer than MAX_QUERY_CHARS is searched by its head (see `check_query_text` for the
    adapters that refuse instead). `scope` is normalised (`parse_scope`)."""

    text: str
    mode: str = "hybrid"
    scope: str | None = None
    include_global: bool = True
    since: datetime | None = None
    until: datetime | None = None
    limit: int | None = None
    min_score: float | None = None
    kind: str | None = "episodic"  # None: both kinds
    # A prompt's search: a long-lived process takes the full-text candidates from its
    # in-process keyword index (keyword_index.py), as it does for every hybrid search; set, a
    # text-mode search does too (otherwise LanceDB's full-text query answers it).
    prompt: bool = False
    # The full-text candidates from LanceDB's query even where a keyword index is kept: `why`,
    # whose printed signals (the raw BM25) are then the same in every process.
    lancedb_text: bool = False
    # The best this many come back whatever their score (`min_score` applies past them): a
    # prompt's pointers by rank, with the candidates' full scoring still cut at the full-text
    # threshold for the rest.
    at_least: int = 0

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise InvalidInput(f"unknown search mode {self.mode!r}: use {', '.join(MODES)}")
        if self.kind is not None and self.kind not in KINDS:
            raise InvalidInput(f"unknown memory kind {self.kind!r}: use {', '.join(KINDS)}")
        if self.limit is not None:
            check_limit(self.limit)
        if self.min_score is not None:
            check_min_score(self.min_score)
        if not 0 <= self.at_least <= MAX_LIMIT:
            raise InvalidInput(f"at_least must be between 0 and {MAX_LIMIT}, got {self.at_least}")
        if self.scope is not None:
            object.__setattr__(self, "scope", parse_scope(self.scope))


def check_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    return limit


def check_min_score(min_score: float) -> float:
    if not 0.0 <= min_score <= 1.0:
        raise InvalidInput(f"min_score must be between 0 and 1, got {min_score}")
    return min_score


def check_query_text(text: str) -> str:
    """For adapters where a person or an agent typed the query (MCP, the CLI): refuse what the
    search would not read in full, rather than cutting it silently. Returns it stripped."""
    stripped = text.strip()
    if not stripped:
        raise InvalidInput("query is empty")
    if len(stripped) > MAX_QUERY_CHARS:
        raise InvalidInput(f"query is {len(stripped)} characters; the limit is {MAX_QUERY_CHARS}")
    return stripped


HitLife = Life  # a hit's life (memory/life.py), under the name search has used


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One memory that answers a query, with its score (0..1, docs/search.md#scores) and the
    raw signals it was computed from."""

    memory: Memory
    score: float
    snippet: str  # one line of the body around a query word
    signals: Signals | None = None
    life: HitLife | None = None
    repo: str | None = None  # an org hit's repository (its dataset name); None: this one

    @property
    def stale(self) -> str | None:
        return self.life.stale if self.life else None

    @property
    def branch(self) -> str | None:
        return self.life.branch if self.life else None

    @property
    def id(self) -> str:
        return self.memory.id

    @property
    def subject(self) -> str:
        return self.memory.subject

    @property
    def applies_to(self) -> str:
        return self.memory.applies_to

    @property
    def occurred_at(self) -> datetime:
        return self.memory.occurred_at

    @property
    def keywords(self) -> tuple[str, ...]:
        return self.memory.keywords

    @property
    def kind(self) -> str:
        return self.memory.kind

    @property
    def path(self) -> str:
        return str(self.memory.path) if self.memory.path else ""

    @property
    def tokens(self) -> int:
        """Estimate of the whole memory (subject + body)."""
        return estimate_tokens(f"{self.memory.subject}\n{self.memory.body}")

    def to_json(self, *, with_body: bool = False) -> dict[str, Any]:
        data = {
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
            "stale": self.stale,
            "branch": self.branch,
            "unreviewed": self.memory.unreviewed,
            "superseded_by": self.memory.superseded_by,
            "disputed": self.memory.disputed.reason if self.memory.disputed else None,
        }
        if self.repo is not None:
            data["repo"] = self.repo
        if with_body:
            data["body"] = self.memory.body
        return data


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The hits of one query, best first, and why the search ran degraded (None: it did not).
    Degraded means a signal the mode asks for was missing — the embedder or the index could not
    be used, or the caller asked for the files alone — so scores lean on fewer signals."""

    hits: tuple[SearchHit, ...] = ()
    degraded_reason: str | None = None
    ran: frozenset[str] = field(default_factory=frozenset)  # the signals gathered
    # what an org search adds: datasets skipped and why, a store that did not answer
    notes: tuple[str, ...] = ()
    decision: Decision | None = None  # how the scores were set for this store (decision.py)

    @property
    def degraded(self) -> bool:
        return self.degraded_reason is not None

    def to_json(self, *, with_body: bool = False) -> dict[str, Any]:
        return {
            "hits": [hit.to_json(with_body=with_body) for hit in self.hits],
            "degraded": self.degraded,
            "degraded_reason": self.degraded_reason,
            "signals": sorted(self.ran),
            "notes": list(self.notes),
            "decision": None if self.decision is None else self.decision.to_json(),
        }
