"""A memory's track record: what the sessions that were shown it did with it, and the bounded
factor that moves its rank (docs/hooks.md#what-is-learned). Pure: outcomes and `now` in.

A session that followed a pointer to a memory, or whose work relied on it, counts for it; one
that was shown it and did nothing with it, or found it wrong, counts against it. Each session
weighs 0.5 ** (age / half-life): what the code needed a year ago says less than last week.

The factor moves ORDER only, like lifecycle/ranking.py's `rank_factor`: whether a memory is
worth showing at all stays the relevance decision's (search/decision.py), so a memory nobody has
followed yet still reaches the prompt that needs it; among the hits that do, the ones that
helped before go first (and so take the full-text slot and the pointer ranks).
benchmarks/README.md#learning-from-sessions measured it.
"""

# No `from __future__ import annotations` and NamedTuples: the prompt paths import this.

import math
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import NamedTuple

from local_recall.learning.outcomes import Outcome, one_per_session

HALF_LIFE_DAYS = 90.0  # [learning] half_life_days
# The factor stays within 1 ± TRACK_SPAN: a track record reorders hits of similar relevance,
# it never lifts a weak match over a clearly better one (a planted record can do no more).
TRACK_SPAN = 0.2
# A memory starts at the repository's own rate, worth this many sessions: one or two sessions
# barely move it (one more follow at a 0.3 base rate: factor 1.05).
PRIOR_SESSIONS = 4.0


class Track(NamedTuple):
    """What the sessions shown one memory did with it: sessions of each use (as counted), and
    the decayed weights for and against that the factor reads."""

    relied: int = 0
    followed: int = 0
    ignored: int = 0  # shown and nothing done (full text counts only where relied is judged)
    disputed: int = 0
    good: float = 0.0  # relied + followed, each session weighted by its age
    bad: float = 0.0  # ignored + disputed, the same
    last: str = ""  # the newest session's `at`

    @property
    def sessions(self) -> int:
        return self.relied + self.followed + self.ignored + self.disputed

    def to_json(self) -> dict[str, object]:
        return {
            "relied": self.relied,
            "followed": self.followed,
            "ignored": self.ignored,
            "disputed": self.disputed,
            "weight_for": round(self.good, 3),
            "weight_against": round(self.bad, 3),
            "last": self.last,
        }


def age_weight(at: str, now: datetime, half_life_days: float) -> float:
    """0.5 ** (age in days / half-life); a time in the future (a clock's skew, a hostile line)
    weighs as now, a time that does not parse nothing."""
    try:
        when = datetime.fromisoformat(at)
        age = (now - when).total_seconds() / 86400
    except (ValueError, TypeError):  # TypeError: a naive time against an aware `now`
        return 0.0
    if half_life_days <= 0:
        return 1.0
    return math.pow(0.5, max(0.0, age) / half_life_days)


def judges_full_text(outcomes: Iterable[Outcome]) -> bool:
    """Whether these outcomes come with the extraction pass's judgement (any `relied` or
    `disputed`). Without it a memory shown in full is recorded `ignored` whatever the session
    did with it, and the best memories (the ones shown in full most) would sink."""
    return any(o.use in ("relied", "disputed") for o in outcomes)


def tracks(
    outcomes: Iterable[Outcome], now: datetime, half_life_days: float = HALF_LIFE_DAYS
) -> dict[str, Track]:
    """Memory id -> its track record; one outcome per (session, memory)."""
    kept = list(one_per_session(outcomes).values())
    judged = judges_full_text(kept)
    result: dict[str, Track] = {}
    for outcome in kept:
        track = result.get(outcome.memory_id, Track())
        weight = age_weight(outcome.at, now, half_life_days)
        use = outcome.use
        if use == "ignored" and outcome.tier == "full" and not judged:
            continue  # nothing was asked of this session about full text
        good = weight if use in ("relied", "followed") else 0.0
        result[outcome.memory_id] = track._replace(
            relied=track.relied + (use == "relied"),
            followed=track.followed + (use == "followed"),
            ignored=track.ignored + (use == "ignored"),
            disputed=track.disputed + (use == "disputed"),
            good=track.good + good,
            bad=track.bad + (weight - good),
            last=max(track.last, outcome.at),
        )
    return result


def base_rate(records: Iterable[Track]) -> float:
    """The repository's share of sessions that used what they were shown (Laplace: 0.5 with
    nothing to go on): the rate at which a memory's factor is 1."""
    good = bad = 0.0
    for track in records:
        good, bad = good + track.good, bad + track.bad
    return (good + 1.0) / (good + bad + 2.0)


def track_factor(track: Track, base: float) -> float:
    """1 ± TRACK_SPAN: 1 at the base rate, 1 + span for a memory every session used, 1 - span
    for one none did, with PRIOR_SESSIONS at the base rate in between."""
    rate = (track.good + PRIOR_SESSIONS * base) / (track.good + track.bad + PRIOR_SESSIONS)
    if rate >= base:
        return 1.0 + TRACK_SPAN * (rate - base) / max(1e-9, 1.0 - base)
    return 1.0 - TRACK_SPAN * (base - rate) / max(1e-9, base)


def track_factors(records: Mapping[str, Track]) -> dict[str, float]:
    """Memory id -> its order factor (a memory without a record: 1, so absent from the map)."""
    base = base_rate(records.values())
    return {memory_id: track_factor(track, base) for memory_id, track in records.items()}
