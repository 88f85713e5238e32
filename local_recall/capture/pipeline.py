"""One extraction pass: an agent's session transcripts in, deduplicated memory files out.

    report = Recall.open().sync_transcripts()      # the facade builds the `PassInputs`

`run_pass` reads top to bottom:

1. observe -- the source finds the repository's transcripts (sources.py: Claude Code's, or
   another agent's); the ledger loads the progress and the day's spend together (ledger.py);
   each transcript becomes one `Observation`, its processed prefix fingerprinted once.
2. plan -- `plan_pass` (pipeline_plan.py, pure) decides which transcripts need work, in which
   order, and which wait (unchanged, in backoff, over budget, paused by a rate limit).
3. carry out -- the `Executor` (executor.py) works through the plan's items: read the new turns
   (cleaned once: `<private>` spans removed, secrets redacted), `plan_chunks`, extract
   (`claude -p`), write memories (writer.py: validated, redacted, exact duplicates returned
   instead of written, near-duplicates skipped), record the progress; then the session
   summaries that are due (summaries.py), in the same budget.
4. report -- the index is synced if anything was written, and the one `Tally` everything
   counted into becomes the `PassReport` (report.py).

The progress moves only after a chunk's memories are on disk, so a crash or a failed call at any
point costs at most a repeated call, never a lost or duplicated memory. docs/pipeline.md.

Safe in a long-lived process (the daemon): no module state, one pass at a time per repo (a file
lock in `state/`), and `should_stop` is polled between items so SIGTERM can end a pass cleanly.
The pipeline sits below the facade: it takes plain values and stores, never `Recall`.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from local_recall.capture.budget import BudgetLimits
from local_recall.capture.executor import Executor, Models, PassStopped, SimilarMemories
from local_recall.capture.extraction.backends import build_extractor
from local_recall.capture.extraction.prompt import Extractor
from local_recall.capture.extraction.summary_prompt import Summariser
from local_recall.capture.ledger import Ledger
from local_recall.capture.pipeline_plan import plan_pass
from local_recall.capture.progress_file import load_state, save_state
from local_recall.capture.report import PassReport, Tally
from local_recall.capture.session_signals import SessionSignals
from local_recall.capture.sources import (
    ClaudeCodeSessions,
    Observation,
    SessionSource,
    observe,
    transcript_key,
)
from local_recall.capture.summaries import SummaryInputs, SummarySink, write_summaries
from local_recall.capture.transcripts.model import TranscriptFile
from local_recall.capture.writer import MemorySink, MemoryWriter, Neighbours
from local_recall.errors import ExtractorUnavailable, RecallError
from local_recall.memory.model import Provenance
from local_recall.repo.config import ExtractionConfig
from local_recall.repo.locks import LockBusy, held_lock

log = logging.getLogger(__name__)

LOCK_FILENAME = "pipeline.lock"
ALREADY_RUNNING = "a pass is already running"

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
    # the n existing memories most similar to a text, as (id, subject): shown to the extractor,
    # which may say a new memory supersedes one (the facade asks the index)
    similar: SimilarMemories | None = None
    # (id, cosine) of the memories nearest a text in meaning: the paraphrase check (writer.py)
    neighbours: Neighbours | None = None
    # [learning] signals: what each session did with the memories it was shown (session_signals.py)
    signals: SessionSignals | None = None


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
    source: SessionSource | None = None,
) -> PassReport:
    """Bring the memories up to date with the transcripts. Returns what happened; expected
    outcomes (nothing to do, a failed call left for later, rate limited, another pass running)
    are report fields. Raises ExtractorUnavailable when a call is needed and `claude` cannot
    run, StorageError when the state or a memory cannot be written.

    `source`: whose sessions (default: Claude Code's, found from `inputs`); `transcripts`: use
    these instead of looking; `only_path`: process just this file (it need not belong to the
    repository); `extractor`: default `build_extractor(...)`, built only when a call is needed;
    `progress`: told before each transcript; `should_stop`: polled between chunks, ends the
    pass early; `ended`: transcripts whose session ended or is about to be compacted (their
    summary is due now, not after `idle_minutes`); `summariser`: what writes session
    summaries (default: `extractor` if it can, else the built extractor)."""
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
        tally = Tally()
        config = inputs.extraction

        # 1. observe: the progress and the spend, then what the transcripts look like now
        limits = BudgetLimits(config.daily_max_calls, config.daily_max_tokens)
        ledger, problem = Ledger.load(inputs.state_dir, limits, inputs.clock())
        if problem:
            tally.notes.append(problem)
        source = source or ClaudeCodeSessions(
            inputs.root, inputs.claude_config_dir, transcripts, only_path
        )
        observations = observe(source.find(), ledger.state)

        # 2. plan (pure)
        executor = _executor(inputs, source, ledger, tally, extractor, summariser, should_stop)
        plan = plan_pass(
            [o.seen for o in observations],
            ledger.state,
            ledger.now,
            calls_left=ledger.calls_left(),
            idle_after=executor.idle_after,
        )
        tally.planned(plan, len(observations), paused=ledger.paused)

        # 3. carry out: the work items, then the summaries that are due
        found = {o.key: o.transcript for o in observations}
        total = len(plan.work)
        report_progress = progress or _silent
        report_progress(0, total, "")
        try:
            for done, item in enumerate(plan.work):
                if executor.should_stop():
                    raise PassStopped("stop_requested")
                report_progress(done, total, found[item.path].session_id)
                executor.carry_out(item, found[item.path])
            _write_summaries(inputs, executor, observations, ended)
            report_progress(total, total, "")
        except PassStopped as stop:
            tally.stopped = stop.reason
        except ExtractorUnavailable as exc:  # remembered for `doctor` and the hooks, then raised
            ledger.unavailable(str(exc))
            raise
        if tally.api_calls:
            ledger.available()

        # 4. report
        if tally.changed:
            _sync_index(inputs, tally)
        return tally.report(time.monotonic() - started)


def retry_failed_now(state_dir: Path, lock_timeout: float = 1.0) -> int:
    """Make every transcript waiting out a failure's backoff due now (the daemon does this when
    a session brings another environment: the failures were most likely the old one's).
    Returns how many; 0 when a pass holds the lock (it will record its own outcome)."""
    try:
        with held_lock(state_dir / LOCK_FILENAME, timeout=lock_timeout):
            loaded = load_state(state_dir)
            waiting = [t for t in loaded.state.transcripts.values() if t.next_retry_at]
            state = loaded.state
            for entry in waiting:
                state = state.with_transcript(replace(entry, next_retry_at=None))
            if waiting:
                save_state(state_dir, state)
            return len(waiting)
    except (LockBusy, RecallError) as exc:
        log.info("failed transcripts not retried now: %s", exc)
        return 0


def _executor(
    inputs: PassInputs,
    source: SessionSource,
    ledger: Ledger,
    tally: Tally,
    extractor: Extractor | None,
    summariser: Summariser | None,
    should_stop: StopCheck | None,
) -> Executor:
    config = inputs.extraction
    writer = MemoryWriter(
        inputs.memories,
        inputs.thinking,
        tally,
        near_duplicate_threshold=config.near_duplicate_threshold,
        thinking_enabled=inputs.thinking_enabled,
        head=inputs.head,
        rejected_hashes=inputs.rejected_hashes,
        neighbours=inputs.neighbours,
    )

    def build() -> Extractor:
        return build_extractor(
            config, ollama_host=inputs.ollama_host, environ=inputs.environ, which=inputs.which
        )

    return Executor(
        root=inputs.root,
        config=config,
        source=source,
        ledger=ledger,
        writer=writer,
        models=Models(build, extractor, summariser),
        tally=tally,
        should_stop=should_stop or _never,
        similar=inputs.similar,
        signals=inputs.signals,
    )


def _write_summaries(
    inputs: PassInputs,
    executor: Executor,
    observations: Sequence[Observation],
    ended: Collection[Path],
) -> None:
    """Session summaries (summaries.py), in the same budget as the memories."""
    summariser = executor.models.summariser()
    if inputs.summaries is None or summariser is None:
        return
    ledger = executor.ledger
    summary_inputs = SummaryInputs(
        root=inputs.root,
        state_dir=inputs.state_dir,
        store=inputs.summaries,
        chunk_chars=inputs.extraction.chunk_chars,
        ended=frozenset(transcript_key(path) for path in ended),
        is_quiet=executor.is_quiet,
        budget_ok=ledger.allows_call,
        spend=ledger.spend,
        should_stop=executor.should_stop,
        now=ledger.now,
        read=executor.source.read,
    )
    files = [o.transcript for o in observations]
    write_summaries(summary_inputs, files, summariser, executor.tally)


def _sync_index(inputs: PassInputs, tally: Tally) -> None:
    try:
        inputs.sync_index()
        tally.index_synced = True
    except RecallError as exc:  # the files are written; search catches up on its own
        tally.errors.append(f"index not updated: {exc}")
        log.warning("index sync after the pass failed: %s", exc)


def _never() -> bool:
    return False


def _silent(done: int, total: int, label: str) -> None:
    pass
