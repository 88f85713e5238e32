"""What the prompt hook uses of the sessions' outcomes: the calibrated cut-offs
(calibration.py) and the track records' order factors (track.py), computed once and kept in
state/learned.json while this user's outcomes (state/outcomes.jsonl), the settings and the day
are unchanged (docs/hooks.md#what-is-learned).

A prompt costs a stat of state/outcomes.jsonl and, in a hook process, reading that small JSON;
a long-lived process (the daemon, the MCP server) keeps the last answer in memory under the
same key. The outcomes are only parsed when they changed, a setting changed or a day passed
(the decay). The cache sits in state/, which a hostile checkout may have planted: a value
outside what calibration and the track record can produce (NaN and infinities included) is not
used, and a file that does not parse, whatever it raises, is not either (the answer is computed
again).
"""

# No `from __future__ import annotations` and NamedTuples: the prompt hook imports this.

import contextlib
import json
import math
from collections.abc import Mapping
from typing import Any, NamedTuple, TypeGuard

from local_recall.repo.files import read_bytes_nofollow, stat_key, through_symlink
from local_recall.repo.layout import Layout

CACHE = "learned.json"
OUTCOMES_FILE = "outcomes.jsonl"  # learning/usage_log.py's record in state/ (kept light here)
MAX_CACHE_BYTES = 4 * 1024 * 1024
_SPAN = 0.2 + 1e-9  # track.TRACK_SPAN
_SHIFT = 0.1 + 1e-9  # calibration.MAX_SHIFT


class LearnSettings(NamedTuple):
    """[learning] and the configured cut-offs they start from."""

    calibrate: bool
    track_record: bool
    half_life_days: float
    min_score: float
    pointer_min_score: float


class Learned(NamedTuple):
    min_score: float
    pointer_min_score: float
    factors: Mapping[str, float]  # memory id -> order factor (absent: 1)


def static(settings: LearnSettings) -> Learned:
    return Learned(settings.min_score, settings.pointer_min_score, {})


def usage_key(layout: Layout) -> list[Any]:
    """The outcomes' identity: the stat key of state/outcomes.jsonl ([] when it is gone)."""
    if through_symlink(layout.state_dir):
        return ["symlink"]  # usage_log reads nothing through a link
    return list(stat_key(layout.state_dir / OUTCOMES_FILE) or ())


def _near(value: Any, centre: float, span: float) -> TypeGuard[float]:
    """A finite number within `span` of `centre` (NaN compares false with everything, so
    `abs(nan - 1) > span` would let it through)."""
    return (
        isinstance(value, float | int)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and abs(value - centre) <= span
    )


def _valid(data: Any, settings: LearnSettings) -> Learned | None:
    """The cached answer, if it is one calibration and the track record could have given."""
    if not isinstance(data, dict):
        return None
    low, point, factors = data.get("min_score"), data.get("pointer_min_score"), data.get("factors")
    if not _near(low, settings.min_score, _SHIFT):
        return None
    if not _near(point, settings.pointer_min_score, _SHIFT):
        return None
    if not isinstance(factors, dict) or not all(_near(v, 1.0, _SPAN) for v in factors.values()):
        return None
    return Learned(float(low), float(point), {str(k): float(v) for k, v in factors.items()})


def compute(layout: Layout, settings: LearnSettings, now: Any) -> Learned:
    """From the outcomes on disk (`now`: an aware datetime)."""
    from local_recall.learning.calibration import calibrate
    from local_recall.learning.track import track_factors, tracks
    from local_recall.learning.usage_log import read_outcomes

    outcomes = read_outcomes(layout, now)
    learned = static(settings)
    if settings.calibrate:
        got = calibrate(
            outcomes,
            min_score=settings.min_score,
            pointer_min_score=settings.pointer_min_score,
            now=now,
            half_life_days=settings.half_life_days,
        )
        learned = learned._replace(min_score=got.min_score, pointer_min_score=got.pointer_min_score)
    if settings.track_record:
        factors = track_factors(tracks(outcomes, now, settings.half_life_days))
        # 1 means nothing: only the memories a record moves are kept
        learned = learned._replace(
            factors={m: round(f, 4) for m, f in factors.items() if round(f, 4) != 1.0}
        )
    return learned


_memo: dict[str, tuple[str, Learned]] = {}  # cache path -> (key, answer): long-lived processes


def read_learned(layout: Layout, settings: LearnSettings, now: Any) -> Learned:
    """What the prompt hook decides with; never raises for a bad or missing file (static)."""
    if not settings.calibrate and not settings.track_record:
        return static(settings)
    cache = layout.state_dir / CACHE
    key = json.dumps([usage_key(layout), list(settings), now.strftime("%Y-%m-%d")])
    memo = _memo.get(str(cache))
    if memo is not None and memo[0] == key:
        return memo[1]
    learned = None
    # any: a planted file may nest past the parser's depth (RecursionError)
    with contextlib.suppress(Exception):
        data = json.loads(read_bytes_nofollow(cache, MAX_CACHE_BYTES))
        if isinstance(data, dict) and data.get("key") == key:
            learned = _valid(data.get("learned"), settings)
    if learned is None:
        learned = compute(layout, settings, now)
        from local_recall.repo.files import write_text_atomic

        with contextlib.suppress(OSError):  # a read-only checkout computes it again next time
            write_text_atomic(
                cache,
                json.dumps({"key": key, "learned": learned._asdict()}, separators=(",", ":")),
            )
    _memo[str(cache)] = (key, learned)
    return learned
