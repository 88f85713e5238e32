"""One extraction pass: Claude Code transcripts in, deduplicated memory files out.

    report = Recall.open().sync_transcripts()      # the facade builds the `PassInputs`

collect (`transcripts.find_transcripts`: the repo, its subdirectories, its git worktrees and
subagents) -> plan (`pipeline_plan.plan_pass` over `state/pipeline.json`) -> per transcript:
parse from the stored offset (text cleaned once: `<private>` spans removed, secrets redacted)
-> `plan_chunks` (only new turns, after a little context) -> extract (`claude -p`) -> write
memories (`writer`: validated, redacted, exact duplicates returned instead of written;
near-duplicates skipped) -> advance the state. The state moves only after a chunk's memories
are on disk, so a crash or a failed call at any point costs at most a repeated call, never a
lost or duplicated memory. docs/pipeline.md.

Safe in a long-lived process (the daemon): no module state, one pass at a time per repo (a file
lock in `state/`), and `should_stop` is polled between items so SIGTERM can end a pass cleanly.
The pipeline sits below the facade: it takes plain values and a store, never `Recall`.

Longer than 400 lines: the pass, its failure handling and its session-summary step share one
state (budget, stop flag, clock, state file); the decisions are already in pipeline_plan.py,
summary_plan.py and progress.py, and the summary work itself in summaries.py.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
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
from local_recall.capture.extraction.backends import build_extractor
from local_recall.capture.extraction.prompt import MAX_EXISTING, ExistingMemory, Extractor
from local_recall.capture.extraction.summary_prompt import Summariser
from local_recall.capture.pipeline_plan import (
    Observed,
    PassPlan,
    PlannedChunk,
    WorkItem,
    is_quiet,
    plan_chunks,
    plan_pass,
    retry_delay,
)
from local_recall.capture.pipeline_state import load_state, prefix_fingerprint, save_state
from local_recall.capture.progress import PipelineState, TranscriptState, advanced, failed
from local_recall.capture.provenance import chunk_files
from local_recall.capture.report import PassReport, Tally
from local_recall.capture.summaries import SummaryInputs, SummarySink, write_summaries
from local_recall.capture.transcripts.condense import NEW_TURNS_HEADER
from local_recall.capture.transcripts.discovery import select_transcripts
from local_recall.capture.transcripts.model import TranscriptFile, Turn
from local_recall.capture.transcripts.parse import parse_transcript
from local_recall.capture.writer import MemorySink, MemoryWriter, memory_source, session_of
from local_recall.errors import (
    ExtractionFailed,
    RateLimited,
    RecallError,
    TranscriptUnreadable,
)
from local_recall.memory.model import Provenance
from local_recall.repo.config import ExtractionConfig
from local_recall.repo.locks import LockBusy, held_lock

log = logging.getLogger(__name__)

LOCK_FILENAME = "pipeline.lock"
ALREADY_RUNNING = "a pass is already running"
# How long an API rate limit pauses extraction when the CLI does not say (it never does).
RATE_LIMIT_PAUSE = timedelta(minutes=5)
CONTEXT_TURNS = 2

StopCheck = Callable[[], bool]
# (done, total, label): called before each transcript is worked on and once at the end.
PassProgress = Callable[[int, int, str], None]


@dataclass(frozen=True, slots=True)
class PassInputs:
    """What a pass needs from the repository and the machine (`Recall.sync_transcripts` builds
    it from its config, layout and settings)."""

    root: Path  # the repository: its transcripts are collected, its name goes to the model
    state_dir: Path  # progress, budget and the pass lock
    claude_config_dir: Path  # where Claude Code keeps `projects/<encoded cwd>/*.jsonl`
    memories: MemorySink
    thinking: MemorySink
    sync_index: Callable[[], object]  # re-index after memories were written
    extraction: ExtractionConfig
    thinking_enabled: bool
    ollama_host: str  # `[embedder] ollama_host` (the Ollama extractor shares it)
    clock: Callable[[], datetime]
    environ: Mapping[str, str]
    which: Callable[[str], str | None]
    # Asked once per pass, on the first memory (lifecycle/provenance.py, lifecycle/rejections.py)
    head: Callable[[], Provenance] = Provenance
    rejected_hashes: Callable[[], frozenset[str]] = frozenset
    # session-summaries/ ([summaries] enabled), None: no summaries (summaries.py)
    summaries: SummarySink | None = None
    # (text, n) -> the n existing memories most similar to text, as (id, subject): shown to
    # the extractor, which may say a new memory supersedes one (the facade asks the index)
    similar: Callable[[str, int], Sequence[tuple[str, str]]] | None = None


def run_pass(
    inputs: PassInputs,
    *,
    extractor: Extractor | None = None,
    progress: PassProgress | None = None,
    transcripts: Sequence[TranscriptFile] | None = None,
    only_path: Path | None = None,
    should_stop: StopCheck | None = None,
    lock_timeout: float = 5.0,
    ended: Collection[Path] = (),
    summariser: Summariser | None = None,
) -> PassReport:
    """Bring the memories up to date with the transcripts. Returns what happened; expected
    outcomes (nothing to do, a failed call left for later, rate limited, another pass running)
    are report fields. Raises ExtractorUnavailable when a call is needed and `claude` cannot
    run, StorageError when the state or a memory cannot be written.

    `transcripts`: use these instead of collecting; `only_path`: process just this file (it
    need not belong to the repository); `extractor`: default `build_extractor(...)`, built
    only when a call is needed; `progress`: told before each transcript; `should_stop`: polled
    between chunks, ends the pass early; `ended`: transcripts whose session ended or is about
    to be compacted (their summary is due now, not after `idle_minutes`); `summariser`: what
    writes session summaries (default: `extractor` if it can, else the built extractor)."""
    started = time.monotonic()
    if not inputs.extraction.enabled:
        return PassReport(stopped="disabled", seconds=time.monotonic() - started)
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(held_lock(inputs.state_dir / LOCK_FILENAME, timeout=lock_timeout))
        except LockBusy:
            return PassReport(
                stopped="already_running",
                errors=(ALREADY_RUNNING,),
                seconds=time.monotonic() - started,
            )
        runner = _Pass(inputs, extractor, should_stop or _never, ended, summariser)
        files = select_transcripts(
            inputs.root, inputs.claude_config_dir, given=transcripts, only_path=only_path
        )
        runner.run(files, progress or _silent)
        return runner.tally.report(time.monotonic() - started)


def _never() -> bool:
    return False


def _silent(done: int, total: int, label: str) -> None:
    pass


class _Stop(Exception):
    """Internal: end the pass now (rate limited, budget spent, stop requested)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Pass:
    def __init__(
        self,
        inputs: PassInputs,
        extractor: Extractor | None,
        should_stop: StopCheck,
        ended: Collection[Path] = (),
        summariser: Summariser | None = None,
    ) -> None:
        self.inputs = inputs
        self.ended = frozenset(_key(path) for path in ended)
        self._summariser = summariser
        self.config = inputs.extraction
        self._extractor = extractor
        self.should_stop = should_stop
        self.now = inputs.clock()
        self.today: date = self.now.date()
        self.state_dir = inputs.state_dir
        loaded = load_state(self.state_dir)
        self.state: PipelineState = loaded.state
        self.tally = Tally()
        if loaded.problem:
            self.tally.notes.append(loaded.problem)
        self.budget_path = self.state_dir / BUDGET_FILENAME
        self.spend: DailySpend = load_daily_spend(self.budget_path, self.today)
        self.limits = BudgetLimits(
            max_calls=self.config.daily_max_calls, max_tokens=self.config.daily_max_tokens
        )
        self.idle_after = timedelta(minutes=self.config.idle_minutes)
        self.writer = MemoryWriter(
            inputs.memories,
            inputs.thinking,
            self.tally,
            near_duplicate_threshold=self.config.near_duplicate_threshold,
            thinking_enabled=inputs.thinking_enabled,
            head=inputs.head,
            rejected_hashes=inputs.rejected_hashes,
        )

    # --- the pass -----------------------------------------------------------------------------

    def run(self, files: Sequence[TranscriptFile], progress: PassProgress) -> None:
        by_path = {_key(f.path): f for f in files}
        observed = [self._observe(f) for f in files]
        plan: PassPlan = plan_pass(
            observed,
            self.state,
            self.now,
            calls_left=calls_left(self.spend, self.limits, self.today),
            idle_after=self.idle_after,
        )
        self.tally.seen = len(files)
        self.tally.skipped = len(plan.unchanged) + len(plan.waiting) + len(plan.deferred)
        if plan.deferred:
            paused = self.state.paused_until is not None and self.now < self.state.paused_until
            self.tally.stopped = "rate_limited" if paused else "budget"
        total = len(plan.work)
        progress(0, total, "")
        try:
            for done, item in enumerate(plan.work):
                if self.should_stop():
                    raise _Stop("stop_requested")
                progress(done, total, by_path[item.path].session_id)
                self._process(item, by_path[item.path])
            self._write_summaries(files)
            progress(total, total, "")
        except _Stop as stop:
            self.tally.stopped = stop.reason
        if self.tally.created or self.tally.thinking:
            self._sync_index()

    def _observe(self, transcript: TranscriptFile) -> Observed:
        path = _key(transcript.path)
        entry = self.state.get(path)
        prefix = None
        if entry is not None and (transcript.size, transcript.mtime_ns) != (
            entry.size,
            entry.mtime_ns,
        ):
            prefix = prefix_fingerprint(transcript.path, entry.offset)
        return Observed(path, transcript.session_id, transcript.size, transcript.mtime_ns, prefix)

    def _process(self, item: WorkItem, transcript: TranscriptFile) -> None:
        entry = self.state.get(item.path) or TranscriptState(item.path, transcript.session_id)
        if item.reason == "rewritten":
            if entry.offset:
                log.info("%s was rewritten or truncated: reading it again from 0", item.path)
            # Its memories stay (and are listed); progress starts over.
            entry = replace(entry, offset=0, read_from=0, prefix_hash="", pending_turns=0)
        try:
            parsed = parse_transcript(transcript.path, start_offset=item.read_from)
        except TranscriptUnreadable as exc:
            self._failed(entry, str(exc))
            return
        quiet = is_quiet(transcript.mtime_ns, self.now, self.idle_after)
        plan = plan_chunks(
            parsed.turns,
            offset=item.offset,
            end_offset=parsed.end_offset,
            min_turns=self.config.min_turns,
            session_over=item.reason == "idle" or quiet,
            max_chars=self.config.chunk_chars,
            context_turns=CONTEXT_TURNS,
        )
        if plan.action == "wait":
            self.tally.skipped += 1
            self._store(replace(entry, pending_turns=plan.new_turns), seen=transcript)
            return
        self.tally.processed += 1
        if plan.action == "advance":
            thinking = self.writer.write_thinking(
                parsed.turns, item.offset, plan.end_offset, memory_source(transcript)
            )
            self._store(
                self._advanced(entry, plan.end_offset, plan.read_from, thinking_ids=thinking),
                seen=transcript,
            )
            return
        offset = item.offset
        for index, planned in enumerate(plan.chunks):
            if self.should_stop():
                raise _Stop("stop_requested")
            if not budget_allows(self.spend, self.limits, self.today):
                raise _Stop("budget")
            memory_ids = self._extract_chunk(planned, transcript, entry, parsed.turns)
            if memory_ids is None:
                return  # failed: the state stays where it was for this chunk
            thinking = self.writer.write_thinking(
                parsed.turns, offset, planned.end_offset, memory_source(transcript)
            )
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
            self._store(entry, seen=transcript if last else None)
            offset = planned.end_offset

    def _extract_chunk(
        self,
        planned: PlannedChunk,
        transcript: TranscriptFile,
        entry: TranscriptState,
        turns: Sequence[Turn],
    ) -> list[str] | None:
        """Send one chunk and write its memories. None when the call failed (recorded)."""
        # The chunk's text was cleaned when its turns were parsed: nothing to redact again.
        extractor = self._extractor_or_build()
        self.tally.chunks += 1
        try:
            existing = self._similar(planned.chunk.text)
            name = self.inputs.root.name
            result = (  # without similar memories, an extractor written before them works
                extractor.extract(planned.chunk.text, repo_name=name, existing=existing)
                if existing
                else extractor.extract(planned.chunk.text, repo_name=name)
            )
        except RateLimited as exc:
            pause = timedelta(seconds=exc.retry_after_seconds or 0) or RATE_LIMIT_PAUSE
            self.state = replace(self.state, paused_until=self.now + pause)
            self._save()
            self.tally.errors.append(f"{transcript.path}: {exc}")
            self._spend(0, 0)
            raise _Stop("rate_limited") from None
        except ExtractionFailed as exc:
            self._spend(0, 0)
            self._failed(entry, str(exc))
            return None
        self.tally.answered(result.input_tokens, result.output_tokens, result.cost_usd)
        self.tally.dropped += len(result.dropped)
        self._spend(result.input_tokens, result.output_tokens)
        source = memory_source(transcript)
        files = chunk_files(turns, planned.chunk.turn_uuids, str(self.inputs.root))
        ids: list[str] = []
        for candidate in result.memories:
            at, session = planned.chunk.last_timestamp, session_of(transcript)
            memory_id = self.writer.write_candidate(candidate, at, source, session, files)
            if memory_id is not None:
                ids.append(memory_id)
        return ids

    def _similar(self, text: str) -> list[ExistingMemory]:
        """The existing memories most like the chunk's new turns (never fatal: none)."""
        if self.inputs.similar is None:
            return []
        query = text.partition(NEW_TURNS_HEADER)[2] or text
        try:
            found = self.inputs.similar(query, MAX_EXISTING)
        except RecallError as exc:
            log.info("similar memories not looked up: %s", exc)
            return []
        return [ExistingMemory(memory_id, subject) for memory_id, subject in found]

    # --- state --------------------------------------------------------------------------------

    def _advanced(
        self,
        entry: TranscriptState,
        offset: int,
        read_from: int,
        *,
        memory_ids: Sequence[str] = (),
        thinking_ids: Sequence[str] = (),
    ) -> TranscriptState:
        prefix = prefix_fingerprint(Path(entry.path), offset) or ""
        return advanced(entry, offset, read_from, prefix, self.now, memory_ids, thinking_ids)

    def _failed(self, entry: TranscriptState, reason: str) -> None:
        attempts = entry.attempts + 1
        self.tally.errors.append(f"{entry.path}: {reason}")
        log.warning("extraction of %s failed (attempt %d): %s", entry.path, attempts, reason)
        self._store(failed(entry, reason, retry_at=self.now + retry_delay(attempts)))

    def _store(self, entry: TranscriptState, *, seen: TranscriptFile | None = None) -> None:
        """Save `entry`; `seen`: also record the file's size and mtime as handled."""
        if seen is not None:
            entry = replace(entry, size=seen.size, mtime_ns=seen.mtime_ns)
        if not entry.prefix_hash:
            entry = replace(
                entry, prefix_hash=prefix_fingerprint(Path(entry.path), entry.offset) or ""
            )
        self.state = self.state.with_transcript(entry)
        self._save()

    def _save(self) -> None:
        save_state(self.state_dir, self.state)

    def _spend(self, input_tokens: int, output_tokens: int) -> None:
        self.spend = record_spend(
            self.spend, self.today, input_tokens=input_tokens, output_tokens=output_tokens
        )
        save_daily_spend(self.budget_path, self.spend)

    def _extractor_or_build(self) -> Extractor:
        if self._extractor is None:
            inputs = self.inputs
            self._extractor = build_extractor(
                inputs.extraction,
                ollama_host=inputs.ollama_host,
                environ=inputs.environ,
                which=inputs.which,
            )
        return self._extractor

    def _write_summaries(self, files: Sequence[TranscriptFile]) -> None:
        """Session summaries (summaries.py), in the same budget as the memories."""
        summariser = self._summariser_or_build()
        if self.inputs.summaries is None or summariser is None:
            return
        summary_inputs = SummaryInputs(
            root=self.inputs.root,
            state_dir=self.state_dir,
            store=self.inputs.summaries,
            chunk_chars=self.config.chunk_chars,
            ended=self.ended,
            is_quiet=lambda t: is_quiet(t.mtime_ns, self.now, self.idle_after),
            budget_ok=lambda: budget_allows(self.spend, self.limits, self.today),
            spend=self._spend,
            should_stop=self.should_stop,
            now=self.now,
        )
        write_summaries(summary_inputs, files, summariser, self.tally)

    def _summariser_or_build(self) -> Summariser | None:
        """The given summariser, else the extractor if it can summarise (a test's scripted one
        may not: then no summaries), else the one built from the config."""
        chosen = self._summariser or self._extractor or self._extractor_or_build()
        return chosen if isinstance(chosen, Summariser) else None

    def _sync_index(self) -> None:
        try:
            self.inputs.sync_index()
            self.tally.index_synced = True
        except RecallError as exc:  # the files are written; search catches up on its own
            self.tally.errors.append(f"index not updated: {exc}")
            log.warning("index sync after the pass failed: %s", exc)


def _key(path: Path) -> str:
    return os.path.abspath(path)
