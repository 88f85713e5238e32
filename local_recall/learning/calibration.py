"""The repository's tier cut-offs, calibrated from what its sessions did with what they were
shown (docs/hooks.md#what-is-learned). Pure: outcomes, `now` and the configured cut-offs in.

Pointers followed more often than the rate the defaults were set at (FOLLOW_TARGET) say the
plausible tier is worth more lines here: its cut-off goes down; followed less, it goes up. The
same for full text with the sessions' `relied` (only when the extraction pass judges them:
learning/track.py `judges_full_text`). Each rate has a Beta prior at its target worth
PRIOR_SESSIONS sessions, so a few sessions cannot swing it, and a cut-off moves at most
MAX_SHIFT from its configured value whatever the record says (it is committed: it may be
hostile).
"""

# No `from __future__ import annotations` and NamedTuples: the prompt hook imports this.

from collections.abc import Iterable
from datetime import datetime
from typing import NamedTuple

from local_recall.learning.outcomes import Outcome, one_per_session
from local_recall.learning.track import HALF_LIFE_DAYS, age_weight, judges_full_text

MAX_SHIFT = 0.1
PRIOR_SESSIONS = 20.0
# The rates a session reached at the default cut-offs on the coding benchmark's tune projects
# (benchmarks/learning_sim.py, its scripted agent): at these the cut-offs stay where they are.
FOLLOW_TARGET = 0.11
RELIED_TARGET = 0.55


class Calibration(NamedTuple):
    """The cut-offs to use, and the evidence they come from (for `why`)."""

    min_score: float
    pointer_min_score: float
    pointer_sessions: int  # (session, memory) pairs shown a pointer
    follow_rate: float  # decayed share of those followed (or relied on); 0 with none
    full_sessions: int  # pairs shown in full, when relied is judged (else 0)
    relied_rate: float

    def to_json(self) -> dict[str, object]:
        return {
            name: round(v, 4) if isinstance(v, float) else v for name, v in self._asdict().items()
        }


def shifted(default: float, used: float, shown: float, target: float) -> float:
    """`default` moved by at most MAX_SHIFT: down when the (prior-smoothed) rate of use is over
    `target`, up when under; within [0, 1]."""
    rate = (used + PRIOR_SESSIONS * target) / (shown + PRIOR_SESSIONS)
    if rate >= target:
        shift = -MAX_SHIFT * (rate - target) / max(1e-9, 1.0 - target)
    else:
        shift = MAX_SHIFT * (target - rate) / max(1e-9, target)
    return min(1.0, max(0.0, default + shift))


def calibrate(
    outcomes: Iterable[Outcome],
    *,
    min_score: float,
    pointer_min_score: float,
    now: datetime,
    half_life_days: float = HALF_LIFE_DAYS,
) -> Calibration:
    """The cut-offs for this repository given its outcomes and the configured ones."""
    kept = list(one_per_session(outcomes).values())
    judged = judges_full_text(kept)
    pointer = [0.0, 0.0, 0]  # used, shown (decayed), pairs
    full = [0.0, 0.0, 0]
    for outcome in kept:
        if outcome.tier == "full" and not judged:
            continue
        weight = age_weight(outcome.at, now, half_life_days)
        tally = pointer if outcome.tier == "pointer" else full
        useful = outcome.use == "relied" or (
            outcome.tier == "pointer" and outcome.use == "followed"
        )
        tally[0] += weight if useful else 0.0
        tally[1] += weight
        tally[2] += 1
    return Calibration(
        min_score=shifted(min_score, full[0], full[1], RELIED_TARGET),
        pointer_min_score=shifted(pointer_min_score, pointer[0], pointer[1], FOLLOW_TARGET),
        pointer_sessions=int(pointer[2]),
        follow_rate=pointer[0] / pointer[1] if pointer[1] else 0.0,
        full_sessions=int(full[2]),
        relied_rate=full[0] / full[1] if full[1] else 0.0,
    )
