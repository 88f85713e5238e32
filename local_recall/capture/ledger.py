"""A pass's hold on both of its files, loaded together when it starts and saved as they
change: the progress per transcript (`state/pipeline.json`, progress.py and progress_file.py)
and today's extraction spend (`state/budget.json`, budget.py). The decisions over these values
are pure (pipeline_plan.py, progress.py, budget.py); the ledger only keeps them.

The fingerprint of a transcript's processed prefix is computed in one place, when its progress
is recorded (`record`): whatever moved the offset leaves the fingerprint empty.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path

from local_recall.capture.budget import (
    BUDGET_FILENAME,
    BudgetLimits,
    DailySpend,
    budget_allows,
    calls_left,
    load_daily_spend,
    record_spend,
    save_daily_spend,
)
from local_recall.capture.progress import PipelineState, TranscriptState
from local_recall.capture.progress_file import load_state, prefix_fingerprint, save_state
from local_recall.capture.transcripts.model import TranscriptFile


class Ledger:
    """The pass's progress and spend, for one pass started at `now`. Raises StorageError when
    a file cannot be written."""

    def __init__(
        self,
        state_dir: Path,
        state: PipelineState,
        spend: DailySpend,
        limits: BudgetLimits,
        now: datetime,
    ) -> None:
        self.state_dir = state_dir
        self.state = state
        self.spent = spend
        self.limits = limits
        self.now = now

    @classmethod
    def load(
        cls, state_dir: Path, limits: BudgetLimits, now: datetime
    ) -> tuple[Ledger, str | None]:
        """The ledger, and why the state file was set aside (None when it was usable)."""
        loaded = load_state(state_dir)
        spend = load_daily_spend(state_dir / BUDGET_FILENAME, now.date())
        return cls(state_dir, loaded.state, spend, limits, now), loaded.problem

    # --- the daily budget ---------------------------------------------------------------------

    def calls_left(self) -> int | None:
        return calls_left(self.spent, self.limits, self.now.date())

    def allows_call(self) -> bool:
        return budget_allows(self.spent, self.limits, self.now.date())

    def spend(self, input_tokens: int, output_tokens: int) -> None:
        """One call made (answered or not) and what it used."""
        self.spent = record_spend(
            self.spent, self.now.date(), input_tokens=input_tokens, output_tokens=output_tokens
        )
        save_daily_spend(self.state_dir / BUDGET_FILENAME, self.spent)

    # --- progress -----------------------------------------------------------------------------

    @property
    def paused(self) -> bool:
        """The API asked us to wait and the time has not come."""
        until = self.state.paused_until
        return until is not None and self.now < until

    def pause(self, until: datetime) -> None:
        self.state = replace(self.state, paused_until=until)
        save_state(self.state_dir, self.state)

    def unavailable(self, reason: str) -> None:
        """The extractor cannot run (ExtractorUnavailable): remembered, with since when, for
        `doctor`, `daemon status` and the session-start warning (capture/health.py)."""
        since = self.state.unavailable_since or self.now
        self.state = replace(self.state, unavailable_since=since, unavailable_reason=reason[:500])
        save_state(self.state_dir, self.state)

    def available(self) -> None:
        """The extractor answered again."""
        if self.state.unavailable_since is not None:
            self.state = replace(self.state, unavailable_since=None, unavailable_reason=None)
            save_state(self.state_dir, self.state)

    def entry(self, key: str, session_id: str) -> TranscriptState:
        return self.state.get(key) or TranscriptState(key, session_id)

    def record(self, entry: TranscriptState, *, seen: TranscriptFile | None = None) -> None:
        """Save `entry`; `seen`: also record the file's size and mtime as handled."""
        if seen is not None:
            entry = replace(entry, size=seen.size, mtime_ns=seen.mtime_ns)
        if not entry.prefix_hash:
            entry = replace(
                entry, prefix_hash=prefix_fingerprint(Path(entry.path), entry.offset) or ""
            )
        self.state = self.state.with_transcript(entry)
        save_state(self.state_dir, self.state)
