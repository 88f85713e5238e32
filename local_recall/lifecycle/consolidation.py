"""Near-duplicate memories: which ones form a group, and what one memory the group becomes. Pure.

Candidate pairs come from a nearest-neighbour search per memory (the index's ANN), never from an
all-pairs comparison; a pair is a near-duplicate when the embeddings are very close AND the texts
agree (rapidfuzz), or the embeddings are nearly identical, or one memory says the other's subject
again with a detail of its own and the embeddings are close (memory/likeness.py `restates`).
Groups are the connected components of those pairs, so three wordings of one fact become one
group.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

# Defaults: a paraphrase must be close in meaning AND share most of its words, or be nearly the
# same vector. benchmarks/consolidation.py measures what they catch (docs/team.md).
COSINE_WITH_TEXT = 0.85
TEXT_RATIO = 65.0
COSINE_ALONE = 0.95
# One restating the other's subject: the write path's cosine (benchmarks/README.md).
COSINE_RESTATED = 0.70


@dataclass(frozen=True, slots=True)
class Thresholds:
    """When a pair is a near-duplicate (config `[lifecycle] consolidate_*`)."""

    cosine_with_text: float = COSINE_WITH_TEXT
    text_ratio: float = TEXT_RATIO
    cosine_alone: float = COSINE_ALONE
    cosine_restated: float = COSINE_RESTATED

    @property
    def floor(self) -> float:
        """No pair under this cosine can qualify: the neighbour search stops there."""
        return min(self.cosine_with_text, self.cosine_alone, self.cosine_restated)


@dataclass(frozen=True, slots=True)
class Pair:
    a: str
    b: str
    cosine: float
    text_ratio: float  # rapidfuzz token_set_ratio of subject + body, 0..100
    restated: bool = False  # one says the other's subject again (memory/likeness.py `restates`)


@dataclass(frozen=True, slots=True)
class Candidate:
    """What the proposal needs of a memory."""

    id: str
    subject: str
    body: str
    keywords: tuple[str, ...]
    anchors: tuple[str, ...]
    occurred_at: datetime
    reviewed: bool = True
    superseded: bool = False
    sources: tuple[str, ...] = ()  # provenance lines: commit, branch, session


@dataclass(frozen=True, slots=True)
class Proposal:
    keep: str  # the id whose file stays (rewritten with the merged fields)
    remove: tuple[str, ...]
    subject: str
    body: str
    keywords: tuple[str, ...]
    anchors: tuple[str, ...]
    occurred_at: datetime
    sources: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "keep": self.keep,
            "remove": list(self.remove),
            "subject": self.subject,
            "body": self.body,
            "keywords": list(self.keywords),
            "anchors": list(self.anchors),
            "occurred_at": self.occurred_at.isoformat(),
            "sources": list(self.sources),
        }


def is_near_duplicate(pair: Pair, thresholds: Thresholds = Thresholds()) -> bool:
    if pair.cosine >= thresholds.cosine_alone:
        return True
    if pair.restated and pair.cosine >= thresholds.cosine_restated:
        return True
    return pair.cosine >= thresholds.cosine_with_text and pair.text_ratio >= thresholds.text_ratio


def group_pairs(
    pairs: Iterable[Pair], thresholds: Thresholds = Thresholds()
) -> list[tuple[str, ...]]:
    """Connected components of the near-duplicate pairs, each sorted, largest first."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for pair in pairs:
        if pair.a != pair.b and is_near_duplicate(pair, thresholds):
            ra, rb = find(pair.a), find(pair.b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    groups: dict[str, list[str]] = {}
    for node in parent:
        groups.setdefault(find(node), []).append(node)
    found = [tuple(sorted(members)) for members in groups.values() if len(members) > 1]
    return sorted(found, key=lambda g: (-len(g), g))


def _quality(memory: Candidate) -> tuple[bool, bool, int, int, float]:
    """Best-written first: reviewed by a person, not superseded, then the fuller text (capped so
    a rambling body does not win on length alone), more keywords, then the earliest."""
    return (
        memory.reviewed,
        not memory.superseded,
        min(len(memory.body.split()), 200),
        len(memory.keywords),
        -memory.occurred_at.timestamp(),
    )


def _union(values: Iterable[str], *, casefold: bool) -> tuple[str, ...]:
    seen: dict[str, str] = {}
    for value in values:
        key = value.casefold() if casefold else value
        seen.setdefault(key, value)
    return tuple(seen.values())


def propose(group: Sequence[Candidate], *, max_keywords: int = 20) -> Proposal:
    """One memory for a group: the best-written one's subject and body, the union of keywords
    (its own first) and anchors, the earliest occurred_at, the provenance of all."""
    if len(group) < 2:
        raise ValueError("a group has at least two memories")
    ordered = sorted(group, key=_quality, reverse=True)
    best = ordered[0]
    return Proposal(
        keep=best.id,
        remove=tuple(m.id for m in ordered[1:]),
        subject=best.subject,
        body=best.body,
        keywords=_union((k for m in ordered for k in m.keywords), casefold=True)[:max_keywords],
        anchors=_union((a for m in ordered for a in m.anchors), casefold=False),
        occurred_at=min(m.occurred_at for m in group),
        sources=_union((s for m in ordered for s in m.sources), casefold=False),
    )


def plan_consolidation(
    pairs: Iterable[Pair],
    candidates: Mapping[str, Candidate],
    thresholds: Thresholds = Thresholds(),
) -> list[Proposal]:
    """Every group's proposal; ids missing from `candidates` (deleted meanwhile) drop out.

    A group is a connected component, so a chain A~B~C can join A and C although they are not
    alike: the proposal keeps only the best-written member and those near-duplicate of IT; the
    rest are left for the next run (when they may pair with each other)."""
    pairs = [p for p in pairs if p.a != p.b and is_near_duplicate(p, thresholds)]
    linked: dict[str, set[str]] = {}
    for pair in pairs:
        linked.setdefault(pair.a, set()).add(pair.b)
        linked.setdefault(pair.b, set()).add(pair.a)
    proposals = []
    for ids in group_pairs(pairs, thresholds):
        members = [candidates[i] for i in ids if i in candidates]
        if len(members) < 2:
            continue
        best = max(members, key=_quality)
        close = [m for m in members if m.id == best.id or m.id in linked.get(best.id, ())]
        if len(close) > 1:
            proposals.append(propose(close))
    return proposals
