"""A memory's track record and its order factor (learning/track.py): literals, no disk."""

from datetime import UTC, datetime

import pytest

from local_recall.learning.outcomes import Outcome
from local_recall.learning.track import (
    TRACK_SPAN,
    Track,
    age_weight,
    base_rate,
    track_factor,
    track_factors,
    tracks,
)

NOW = datetime(2026, 11, 28, tzinfo=UTC)
A = "aaaaaaaa-0000-4000-8000-000000000001"
B = "bbbbbbbb-0000-4000-8000-000000000002"


def out(memory: str, n: int, use: str, tier: str = "pointer", at: str = "2026-11-28T00:00:00Z"):
    return Outcome(memory, f"{n:032x}", at, tier, use)  # type: ignore[arg-type]


def test_a_session_weighs_half_after_the_half_life() -> None:
    assert age_weight("2026-11-28T00:00:00Z", NOW, 90) == 1.0
    assert age_weight("2026-08-30T00:00:00Z", NOW, 90) == pytest.approx(0.5)
    assert age_weight("2026-06-01T00:00:00Z", NOW, 90) == pytest.approx(0.5 ** (180 / 90))
    assert age_weight("2027-05-01T00:00:00Z", NOW, 90) == 1.0  # the future: as now, never more
    assert age_weight("2026-08-30T00:00:00", NOW, 90) == 0.0  # naive: not comparable


def test_counts_and_weights_per_memory_one_per_session() -> None:
    got = tracks(
        [
            out(A, 1, "followed"),
            out(A, 1, "ignored"),  # the same (session, memory) again: the first counts
            out(A, 2, "relied", "full", "2026-08-30T00:00:00Z"),
            out(A, 3, "ignored"),
            out(B, 1, "disputed", "full"),
        ],
        NOW,
        90,
    )
    assert got[A] == Track(
        relied=1, followed=1, ignored=1, disputed=0, good=1.5, bad=1.0, last="2026-11-28T00:00:00Z"
    )
    assert got[B] == Track(disputed=1, bad=1.0, last="2026-11-28T00:00:00Z")


def test_full_text_ignored_counts_only_where_the_sessions_are_judged() -> None:
    """Without the extraction pass every memory shown in full is recorded ignored: counting it
    would sink the best memories, the ones shown in full most."""
    unjudged = tracks([out(A, 1, "ignored", "full"), out(A, 2, "ignored")], NOW)
    assert unjudged[A].ignored == 1 and unjudged[A].bad == 1.0
    judged = tracks(
        [out(A, 1, "ignored", "full"), out(A, 2, "ignored"), out(B, 3, "relied", "full")], NOW
    )
    assert judged[A].ignored == 2


def test_the_factor_is_one_at_the_base_rate_and_bounded() -> None:
    assert track_factor(Track(), 0.3) == 1.0
    assert track_factor(Track(good=3, bad=7), 0.3) == pytest.approx(1.0)
    best = track_factor(Track(followed=1000, good=1000.0), 0.3)
    worst = track_factor(Track(ignored=1000, bad=1000.0), 0.3)
    assert 1 + TRACK_SPAN * 0.99 < best <= 1 + TRACK_SPAN
    assert 1 - TRACK_SPAN <= worst < 1 - TRACK_SPAN * 0.99


def test_one_or_two_sessions_barely_move_it() -> None:
    assert track_factor(Track(good=1.0), 0.3) == pytest.approx(1 + 0.2 * (0.44 - 0.3) / 0.7)
    assert 1.0 < track_factor(Track(good=2.0), 0.3) < 1.08
    assert 0.92 < track_factor(Track(bad=2.0), 0.3) < 1.0


def test_base_rate_is_the_repository_s_with_a_laplace_prior() -> None:
    assert base_rate([]) == 0.5
    assert base_rate([Track(good=2, bad=6), Track(good=0, bad=0)]) == pytest.approx(0.3)


def test_what_helped_goes_before_what_was_ignored() -> None:
    outcomes = [out(A, n, "followed") for n in range(6)] + [out(B, n, "ignored") for n in range(6)]
    factors = track_factors(tracks(outcomes, NOW))
    assert factors[A] > 1.0 > factors[B]
    assert factors[A] - 1.0 == pytest.approx(1.0 - factors[B])  # symmetric at base 0.5
