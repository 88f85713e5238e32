"""Is extraction working? What `daemon status`, `doctor`, `sync`, the viewer's stats and the
session-start warning say about it, from the pipeline's own progress file (`state/pipeline.json`):
the transcripts whose last attempt failed (the reason as the extractor printed it, since when,
when each is retried) and an extractor that cannot run at all. Pure, but for `read_health`,
which reads the file without ever changing it (a status reader must not set a file aside)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from local_recall.capture.progress import STATE_VERSION, PipelineState, state_from_json
from local_recall.capture.progress_file import state_path
from local_recall.memory.timestamps import format_timestamp
from local_recall.repo.files import read_bytes_nofollow

# Failing this long, the session-start context says so (claude-mem#3538 added such a warning).
WARN_AFTER = timedelta(minutes=30)
MAX_REASON_CHARS = 300
MAX_STATE_BYTES = 64 << 20


@dataclass(frozen=True, slots=True)
class ExtractionHealth:
    failing: int = 0  # transcripts whose last attempt failed
    waiting: int = 0  # of those, waiting for their next retry
    since: datetime | None = None  # the oldest failure of the current streaks
    reason: str | None = None  # the latest failure, as the extractor printed it
    next_retry: datetime | None = None
    unavailable: bool = False  # the extractor cannot run at all (no `claude`, credentials)
    paused_until: datetime | None = None  # a rate limit

    @property
    def ok(self) -> bool:
        return not (self.failing or self.unavailable)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "failing": self.failing,
            "waiting": self.waiting,
            "since": _when(self.since),
            "reason": self.reason,
            "next_retry": _when(self.next_retry),
            "unavailable": self.unavailable,
            "paused_until": _when(self.paused_until),
        }


def extraction_health(state: PipelineState, now: datetime) -> ExtractionHealth:
    failing = [t for t in state.transcripts.values() if t.attempts > 0 and t.last_error]
    retries = [t.next_retry_at for t in failing if t.next_retry_at is not None]
    waiting = [when for when in retries if when > now]
    starts = [t.failing_since or t.processed_at for t in failing]
    since = min((s for s in starts if s is not None), default=None)
    latest = max(failing, key=lambda t: t.next_retry_at or now, default=None)
    reason = latest.last_error if latest is not None else None
    unavailable = state.unavailable_since is not None
    if unavailable:
        since = min(s for s in (since, state.unavailable_since) if s is not None)
        reason = state.unavailable_reason or reason
    paused = state.paused_until if state.paused_until and state.paused_until > now else None
    return ExtractionHealth(
        failing=len(failing),
        waiting=len(waiting),
        since=since,
        reason=None if reason is None else reason[:MAX_REASON_CHARS],
        next_retry=min(waiting, default=None),
        unavailable=unavailable,
        paused_until=paused,
    )


def describe(health: ExtractionHealth) -> str:
    """One line for a person: `ok`, or what fails, since when, what waits, and why."""
    if health.ok:
        paused = health.paused_until
        return f"ok (rate limited until {_when(paused)})" if paused else "ok"
    if health.unavailable:
        head = f"cannot run since {_when(health.since)}"
    else:
        head = f"failing since {_when(health.since)}"
    waits = ""
    if health.failing:
        noun = "transcript waits" if health.failing == 1 else "transcripts wait"
        waits = f"; {health.failing} {noun} for a retry"
        if health.next_retry is not None:
            waits += f", next at {_when(health.next_retry)}"
    return f"{head}{waits}: {health.reason or 'no reason recorded'}"


def warning_line(health: ExtractionHealth, now: datetime) -> str:
    """The session-start warning, or "" while extraction works or has failed only briefly."""
    if health.ok or health.since is None or now - health.since < WARN_AFTER:
        return ""
    return (
        "local-recall: extracting memories from sessions is "
        f"{describe(health)}. New memories are not being written; `local-recall doctor` "
        "says more."
    )


def read_health(state_dir: Path, now: datetime) -> ExtractionHealth | None:
    """The health as `state/pipeline.json` records it; None when there is no usable file."""
    try:
        data = json.loads(read_bytes_nofollow(state_path(state_dir), MAX_STATE_BYTES))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
        return None
    if not isinstance(data.get("transcripts"), dict):
        return None
    state, _ = state_from_json(data)
    return extraction_health(state, now)


def _when(moment: datetime | None) -> str | None:
    return None if moment is None else format_timestamp(moment)
