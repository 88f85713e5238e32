"""Carrying out a pass's work items (`pipeline_plan.WorkItem`), one transcript each: read its
new turns from the source, plan the chunks (`plan_chunks`, pure), ask the extractor, write the
memories (writer.py) and record the progress (ledger.py). It decides nothing the plans did not.

The progress moves only after a chunk's memories are on disk, so a crash or a failed call at any
point costs at most a repeated call, never a lost or duplicated memory. A failed call is
recorded with its backoff; a rate limit, an API that does not answer at all, a spent budget or
a stop request end the pass (`PassStopped`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import cast

from local_recall.capture.extraction.prompt import (
    MAX_EXISTING,
    ExistingMemory,
    ExtractionResult,
    Extractor,
    ReadsShown,
)
from local_recall.capture.extraction.summary_prompt import Summariser
from local_recall.capture.ledger import Ledger
from local_recall.capture.pipeline_plan import (
    ChunkPlan,
    PlannedChunk,
    WorkItem,
    is_quiet,
    plan_chunks,
    retry_delay,
)
from local_recall.capture.progress import TranscriptState, advanced, failed
from local_recall.capture.provenance import chunk_files
from local_recall.capture.report import Tally
from local_recall.capture.session_signals import SessionSignals
from local_recall.capture.sources import SessionSource
from local_recall.capture.transcripts.condense import NEW_TURNS_HEADER
from local_recall.capture.transcripts.model import TranscriptFile, Turn
from local_recall.capture.writer import MemoryWriter, session_of
from local_recall.errors import (
    ApiUnreachable,
    ExtractionFailed,
    RateLimited,
    RecallError,
    TranscriptUnreadable,
)
from local_recall.learning.shown import FirstShown
from local_recall.learning.signals import Verdicts
from local_recall.repo.config import ExtractionConfig

log = logging.getLogger(__name__)

# How long an API rate limit pauses extraction when the CLI does not say (it never does).
RATE_LIMIT_PAUSE = timedelta(minutes=5)
CONTEXT_TURNS = 2

# (text, n) -> the n existing memories most similar to text, as (id, subject)
SimilarMemories = Callable[[str, int], Sequence[tuple[str, str]]]


class PassStopped(Exception):
    """End the pass now: "rate_limited", "unreachable", "budget" or "stop_requested"."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Models:
    """A pass's extractor and summariser: the ones given, else built from the config the
    first time a call is needed (a pass with nothing to send never looks for `claude`)."""

    def __init__(
        self,
        build: Callable[[], Extractor],
        extractor: Extractor | None = None,
        summariser: Summariser | None = None,
    ) -> None:
        self._build = build
        self._extractor = extractor
        self._summariser = summariser

    def extractor(self) -> Extractor:
        if self._extractor is None:
            self._extractor = self._build()
        return self._extractor

    def summariser(self) -> Summariser | None:
        """The given summariser, else the extractor if it can summarise (a test's scripted one
        may not: then no summaries), else the one built from the config."""
        chosen = self._summariser or self._extractor or self.extractor()
        return chosen if isinstance(chosen, Summariser) else None


class Executor:
    def __init__(
        self,
        *,
        root: Path,
        config: ExtractionConfig,
        source: SessionSource,
        ledger: Ledger,
        writer: MemoryWriter,
        models: Models,
        tally: Tally,
        should_stop: Callable[[], bool],
        similar: SimilarMemories | None = None,
        signals: SessionSignals | None = None,
    ) -> None:
        self.root = root
        self.signals = signals
        self.config = config
        self.source = source
        self.ledger = ledger
        self.writer = writer
        self.models = models
        self.tally = tally
        self.should_stop = should_stop
        self.similar = similar
        self.now = ledger.now
        self.idle_after = timedelta(minutes=config.idle_minutes)

    def carry_out(self, item: WorkItem, transcript: TranscriptFile) -> None:
        entry = self.ledger.entry(item.path, transcript.session_id)
        if item.reason == "rewritten":
            if entry.offset:
                log.info("%s was rewritten or truncated: reading it again from 0", item.path)
            # Its memories stay (and are listed); progress starts over.
            entry = replace(entry, offset=0, read_from=0, prefix_hash="", pending_turns=0)
        try:
            parsed = self.source.read(transcript.path, item.read_from)
        except TranscriptUnreadable as exc:
            self._failed(entry, str(exc))
            return
        plan = plan_chunks(
            parsed.turns,
            offset=item.offset,
            end_offset=parsed.end_offset,
            min_turns=self.config.min_turns,
            session_over=item.reason == "idle" or self.is_quiet(transcript),
            max_chars=self.config.chunk_chars,
            context_turns=CONTEXT_TURNS,
        )
        if plan.action == "wait":
            self.tally.transcripts_skipped += 1
            self.ledger.record(replace(entry, pending_turns=plan.new_turns), seen=transcript)
            return
        self.tally.transcripts_processed += 1
        shown = self.signals.shown(transcript) if self.signals else {}
        verdicts: list[Verdicts] = []
        try:
            self._work(plan, item, entry, transcript, parsed.turns, shown, verdicts)
        finally:  # what the session did with its memories, from what was read (never fatal)
            if self.signals is not None and shown:
                self.tally.outcomes_recorded += self.signals.record(
                    transcript, shown, parsed.turns, verdicts
                )

    def _work(
        self,
        plan: ChunkPlan,
        item: WorkItem,
        entry: TranscriptState,
        transcript: TranscriptFile,
        turns: Sequence[Turn],
        shown: Mapping[str, FirstShown],
        verdicts: list[Verdicts],
    ) -> None:
        source = self.source.memory_source(transcript)
        if plan.action == "advance":
            thinking = self.writer.write_thinking(turns, item.offset, plan.end_offset, source)
            done = self._advanced(entry, plan.end_offset, plan.read_from, thinking_ids=thinking)
            self.ledger.record(done, seen=transcript)
            return
        offset = item.offset
        for index, planned in enumerate(plan.chunks):
            if self.should_stop():
                raise PassStopped("stop_requested")
            if not self.ledger.allows_call():
                raise PassStopped("budget")
            memory_ids = self._extract(planned, transcript, entry, turns, shown, verdicts)
            if memory_ids is None:
                return  # failed: the state stays where it was for this chunk
            thinking = self.writer.write_thinking(turns, offset, planned.end_offset, source)
            entry = self._advanced(
                entry,
                planned.end_offset,
                planned.read_from,
                memory_ids=memory_ids,
                thinking_ids=thinking,
            )
            last = index == len(plan.chunks) - 1
            # Size and mtime are recorded only once the whole file is done: a pass killed
            # between chunks must find the file "changed" and go on from the stored offset.
            self.ledger.record(entry, seen=transcript if last else None)
            offset = planned.end_offset

    def is_quiet(self, transcript: TranscriptFile) -> bool:
        return is_quiet(transcript.mtime_ns, self.now, self.idle_after)

    def _extract(
        self,
        planned: PlannedChunk,
        transcript: TranscriptFile,
        entry: TranscriptState,
        turns: Sequence[Turn],
        shown: Mapping[str, FirstShown] | None = None,
        verdicts: list[Verdicts] | None = None,
    ) -> list[str] | None:
        """Send one chunk and write its memories. None when the call failed (recorded).
        `shown`: what the session was shown, judged in the same call by an extractor that
        can (`ReadsShown`), its verdicts added to `verdicts`."""
        # The chunk's text was cleaned when its turns were read: nothing to redact again.
        extractor = self.models.extractor()
        self.tally.chunks_sent += 1
        try:
            existing = self._similar(planned.chunk.text)
            result = self._call(extractor, planned.chunk.text, existing, shown or {})
            if verdicts is not None:
                verdicts.append(result.verdicts)
        except RateLimited as exc:
            pause = timedelta(seconds=exc.retry_after_seconds or 0) or RATE_LIMIT_PAUSE
            self.ledger.pause(self.now + pause)
            self.tally.errors.append(f"{transcript.path}: {exc}")
            self.ledger.spend(0, 0)
            raise PassStopped("rate_limited") from None
        except ApiUnreachable as exc:  # every call would fail alike: the backoff retries
            self.ledger.spend(0, 0)
            self._failed(entry, str(exc))
            raise PassStopped("unreachable") from None
        except ExtractionFailed as exc:
            self.ledger.spend(0, 0)
            self._failed(entry, str(exc))
            return None
        self.tally.answered(result.input_tokens, result.output_tokens, result.cost_usd)
        self.tally.dropped += len(result.dropped)
        self.ledger.spend(result.input_tokens, result.output_tokens)
        source = self.source.memory_source(transcript)
        files = chunk_files(turns, planned.chunk.turn_uuids, str(self.root))
        ids: list[str] = []
        for candidate in result.memories:
            at, session = planned.chunk.last_timestamp, session_of(transcript)
            memory_id = self.writer.write_candidate(candidate, at, source, session, files)
            if memory_id is not None:
                ids.append(memory_id)
        return ids

    def _call(
        self,
        extractor: Extractor,
        text: str,
        existing: Sequence[ExistingMemory],
        shown: Mapping[str, FirstShown],
    ) -> ExtractionResult:
        name = self.root.name
        to_judge = self.signals.to_judge(shown) if self.signals else []
        if to_judge and getattr(extractor, "reads_shown", False):
            judge = cast(ReadsShown, extractor)
            return judge.extract(text, repo_name=name, existing=existing, shown_memories=to_judge)
        if existing:  # without similar memories, an extractor written before them works
            result = extractor.extract(text, repo_name=name, existing=existing)
        else:
            result = extractor.extract(text, repo_name=name)
        return replace(result, verdicts=Verdicts())  # not asked: whatever it said is not heard

    def _similar(self, text: str) -> list[ExistingMemory]:
        """The existing memories most like the chunk's new turns (never fatal: none)."""
        if self.similar is None:
            return []
        query = text.partition(NEW_TURNS_HEADER)[2] or text
        try:
            found = self.similar(query, MAX_EXISTING)
        except RecallError as exc:
            log.info("similar memories not looked up: %s", exc)
            return []
        return [ExistingMemory(memory_id, subject) for memory_id, subject in found]

    def _advanced(
        self,
        entry: TranscriptState,
        offset: int,
        read_from: int,
        *,
        memory_ids: Sequence[str] = (),
        thinking_ids: Sequence[str] = (),
    ) -> TranscriptState:
        # prefix "": the ledger fingerprints the new offset when it records the entry
        return advanced(entry, offset, read_from, "", self.now, memory_ids, thinking_ids)

    def _failed(self, entry: TranscriptState, reason: str) -> None:
        attempts = entry.attempts + 1
        self.tally.errors.append(f"{entry.path}: {reason}")
        log.warning("extraction of %s failed (attempt %d): %s", entry.path, attempts, reason)
        retry_at = self.now + retry_delay(attempts)
        self.ledger.record(failed(entry, reason, retry_at=retry_at, now=self.now))
