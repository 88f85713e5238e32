"""The repository's tier cut-offs from its sessions (learning/calibration.py): literals."""

from datetime import UTC, datetime

import pytest

from local_recall.learning.calibration import (
    FOLLOW_TARGET,
    MAX_SHIFT,
    RELIED_TARGET,
    calibrate,
    shifted,
)
from local_recall.learning.outcomes import Outcome

NOW = datetime(2026, 11, 28, tzinfo=UTC)


def out(n: int, use: str, tier: str = "pointer", at: str = "2026-11-28T00:00:00Z") -> Outcome:
    return Outcome(f"{n:08x}-0000-4000-8000-000000000000", f"{n:032x}", at, tier, use)  # type: ignore[arg-type]


def cut(outcomes: list[Outcome]) -> tuple[float, float]:
    got = calibrate(outcomes, min_score=0.5, pointer_min_score=0.3, now=NOW)
    return round(got.min_score, 4), round(got.pointer_min_score, 4)


def test_nothing_learned_keeps_the_configured_cut_offs() -> None:
    assert cut([]) == (0.5, 0.3)


def test_at_the_target_rate_nothing_moves() -> None:
    assert shifted(0.3, used=30 * FOLLOW_TARGET, shown=30, target=FOLLOW_TARGET) == pytest.approx(
        0.3
    )


def test_pointers_followed_often_lower_the_pointer_cut_off_bounded() -> None:
    followed = [out(n, "followed") for n in range(1000)]
    assert cut(followed) == (0.5, round(0.3 - MAX_SHIFT * (1 - 20 * 0.7 / 1020 / 0.7), 4))
    assert cut(followed)[1] >= 0.3 - MAX_SHIFT


def test_pointers_rarely_followed_raise_it() -> None:
    ignored = [out(n, "ignored") for n in range(1000)]
    assert 0.3 + MAX_SHIFT * 0.97 < cut(ignored)[1] <= 0.3 + MAX_SHIFT


def test_a_few_sessions_cannot_swing_it() -> None:
    """A Beta prior worth 20 sessions: three followed pointers move the cut by under 0.02."""
    _, pointer = cut([out(n, "followed") for n in range(3)])
    assert 0.3 - 0.02 < pointer < 0.3


def test_full_text_moves_only_when_relied_is_judged() -> None:
    # no extraction judgement: a memory shown in full is "ignored" whatever happened
    assert cut([out(n, "ignored", "full") for n in range(100)])[0] == 0.5
    relied = [out(n, "relied", "full") for n in range(100)]
    assert cut(relied)[0] < 0.5 - MAX_SHIFT / 2
    half = [out(n, "relied" if n % 10 < 3 else "ignored", "full") for n in range(100)]
    assert 0.5 < cut(half)[0] <= 0.5 + MAX_SHIFT  # relied 0.3 < RELIED_TARGET
    assert RELIED_TARGET > 0.3


def test_old_sessions_count_less() -> None:
    new = calibrate(
        [out(n, "followed") for n in range(50)], min_score=0.5, pointer_min_score=0.3, now=NOW
    )
    old = calibrate(
        [out(n, "followed", at="2025-11-28T00:00:00Z") for n in range(50)],
        min_score=0.5,
        pointer_min_score=0.3,
        now=NOW,
    )
    assert new.pointer_min_score < old.pointer_min_score < 0.3
    assert (new.pointer_sessions, new.follow_rate) == (50, 1.0)


def test_never_outside_zero_and_one() -> None:
    got = calibrate(
        [out(n, "ignored") for n in range(500)], min_score=1.0, pointer_min_score=0.95, now=NOW
    )
    assert got.pointer_min_score == 1.0
