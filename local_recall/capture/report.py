"""What one pipeline pass did: `PassReport` (returned by `Recall.sync_transcripts`, printed by
`local-recall sync --json`, kept in the daemon's status) and the `Tally` a pass counts into."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
    created_ids: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # worth telling, not failures (e.g. a corrupt state file reset)
    # None: the pass went through. Otherwise why it ended early: "already_running", "disabled",
    # "rate_limited", "budget", "stop_requested".
    stopped: str | None = None
    index_synced: bool = False
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(self.memories_created or self.thinking_created)

    def to_json(self) -> dict[str, Any]:
        return {
            "transcripts_seen": self.transcripts_seen,
            "transcripts_processed": self.transcripts_processed,
            "transcripts_skipped": self.transcripts_skipped,
            "chunks_sent": self.chunks_sent,
            "api_calls": self.api_calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "memories_created": self.memories_created,
            "duplicates": self.duplicates,
            "near_duplicates": self.near_duplicates,
            "dropped": self.dropped,
            "rejected": self.rejected,
            "superseded": self.superseded,
            "thinking_created": self.thinking_created,
            "summaries_written": self.summaries_written,
            "summary_calls": self.summary_calls,
            "created_ids": list(self.created_ids),
            "errors": list(self.errors),
            "notes": list(self.notes),
            "stopped": self.stopped,
            "index_synced": self.index_synced,
            "seconds": round(self.seconds, 3),
        }


@dataclass(slots=True)
class Tally:
    seen: int = 0
    processed: int = 0
    skipped: int = 0
    chunks: int = 0
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    created: list[str] = field(default_factory=list)
    duplicates: int = 0
    near_duplicates: int = 0
    dropped: int = 0
    rejected: int = 0
    superseded: int = 0
    thinking: int = 0
    summaries: int = 0
    summary_calls: int = 0
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stopped: str | None = None
    index_synced: bool = False

    def answered(self, input_tokens: int, output_tokens: int, cost_usd: float | None) -> None:
        """One extractor call returned an answer."""
        self.calls += 1
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.cost += cost_usd or 0.0

    def report(self, seconds: float) -> PassReport:
        return PassReport(
            transcripts_seen=self.seen,
            transcripts_processed=self.processed,
            transcripts_skipped=self.skipped,
            chunks_sent=self.chunks,
            api_calls=self.calls,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cost_usd=self.cost,
            memories_created=len(self.created),
            duplicates=self.duplicates,
            near_duplicates=self.near_duplicates,
            dropped=self.dropped,
            rejected=self.rejected,
            superseded=self.superseded,
            thinking_created=self.thinking,
            summaries_written=self.summaries,
            summary_calls=self.summary_calls,
            created_ids=tuple(self.created),
            errors=tuple(self.errors),
            notes=tuple(self.notes),
            stopped=self.stopped,
            index_synced=self.index_synced,
            seconds=seconds,
        )
