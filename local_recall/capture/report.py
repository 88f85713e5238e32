"""What one pipeline pass did. A pass counts into one mutable `Tally`; `Tally.report()` freezes
it into the `PassReport` returned by `Recall.sync_transcripts`, printed by
`local-recall sync --json` and kept in the daemon's status. The two share their field names, so
the report and its JSON are derived from the fields, never copied out by hand."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from local_recall.capture.pipeline_plan import PassPlan


@dataclass(frozen=True, slots=True)
class PassReport:
    transcripts_seen: int = 0
    transcripts_processed: int = 0  # read and brought up to date (or as far as allowed)
    transcripts_skipped: int = 0  # unchanged, waiting for more turns, in backoff or deferred
    chunks_sent: int = 0  # extractor calls (each may retry inside: see `max_attempts`)
    api_calls: int = 0  # extractor calls that returned an answer
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    memories_created: int = 0
    duplicates: int = 0  # same content as an existing memory: not written again
    near_duplicates: int = 0  # too similar to an existing memory: skipped
    dropped: int = 0  # candidates the extractor or validation rejected
    rejected: int = 0  # a person rejected this text before (rejected-hashes.txt): not written
    superseded: int = 0  # existing memories marked superseded by a new one
    thinking_created: int = 0
    summaries_written: int = 0  # session summaries created or updated (session-summaries/)
    summary_calls: int = 0  # of `api_calls`: summary requests that returned an answer
    # what sessions did with the memories shown them, newly noted (state/outcomes.jsonl)
    outcomes_recorded: int = 0
    created_ids: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # worth telling, not failures (e.g. a corrupt state file reset)
    # None: the pass went through. Otherwise why it ended early: "already_running", "disabled",
    # "rate_limited", "unreachable" (the model's API did not answer), "budget", "stop_requested".
    stopped: str | None = None
    index_synced: bool = False
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(self.memories_created or self.thinking_created)

    def to_json(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        for name, value in data.items():
            if isinstance(value, tuple):
                data[name] = list(value)
        data["cost_usd"] = round(self.cost_usd, 6)
        data["seconds"] = round(self.seconds, 3)
        return data


@dataclass(slots=True)
class Tally:
    """The one counter a pass (and the writer and the summaries it drives) counts into. Its
    fields are PassReport's, less the two derived when the report is made."""

    transcripts_seen: int = 0
    transcripts_processed: int = 0
    transcripts_skipped: int = 0
    chunks_sent: int = 0
    api_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    created_ids: list[str] = field(default_factory=list)  # memories_created: its length
    duplicates: int = 0
    near_duplicates: int = 0
    dropped: int = 0
    rejected: int = 0
    superseded: int = 0
    thinking_created: int = 0
    summaries_written: int = 0
    summary_calls: int = 0
    outcomes_recorded: int = 0
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stopped: str | None = None
    index_synced: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.created_ids or self.thinking_created)

    def answered(self, input_tokens: int, output_tokens: int, cost_usd: float | None) -> None:
        """One extractor call returned an answer."""
        self.api_calls += 1
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.cost_usd += cost_usd or 0.0

    def planned(self, plan: PassPlan, seen: int, *, paused: bool) -> None:
        """What the pass's plan already says: how many transcripts were seen and skipped, and
        why deferred work waits (a rate limit's pause, else the daily budget)."""
        self.transcripts_seen = seen
        self.transcripts_skipped = len(plan.unchanged) + len(plan.waiting) + len(plan.deferred)
        if plan.deferred:
            self.stopped = "rate_limited" if paused else "budget"

    def report(self, seconds: float) -> PassReport:
        frozen: dict[str, Any] = {}
        for name in (f.name for f in fields(self)):
            value = getattr(self, name)
            frozen[name] = tuple(value) if isinstance(value, list) else value
        return PassReport(**frozen, memories_created=len(self.created_ids), seconds=seconds)


def combined(first: PassReport, second: PassReport) -> PassReport:
    """Two passes (Claude Code's sessions, then another agent's) as one report: counts add up,
    lists join, the first early stop is kept, the index counts as synced if either did."""
    values: dict[str, Any] = {}
    for spec in fields(PassReport):
        a, b = getattr(first, spec.name), getattr(second, spec.name)
        if isinstance(a, bool):
            values[spec.name] = a or b
        elif isinstance(a, int | float | tuple):
            values[spec.name] = a + b
        else:
            values[spec.name] = a if a is not None else b
    return PassReport(**values)
