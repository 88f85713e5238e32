"""One extraction pass: Claude Code transcripts in, deduplicated memory files out.

    report = run_pass(Recall.open())

collect (`transcripts.find_transcripts`: the repo, its subdirectories, its git worktrees and
subagents) -> plan (`pipeline_plan.plan_pass` over `state/pipeline.json`) -> per transcript:
parse from the stored offset -> `plan_chunks` (only new turns, after a little context) ->
redact -> extract (`claude -p`) -> write memories (`Recall.save`: validated, redacted, exact
duplicates returned instead of written; near-duplicates skipped) -> advance the state. The
state moves only after a chunk's memories are on disk, so a crash or a failed call at any point
costs at most a repeated call, never a lost or duplicated memory. docs/pipeline.md.

Safe in a long-lived process (the daemon): no module state, one pass at a time per repo (a file
lock in `state/`), and `should_stop` is polled between items so SIGTERM can end a pass cleanly.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from filelock import FileLock
from filelock import Timeout as LockTimeout

from local_recall.capture.extraction import (
    BudgetLimits,
    ClaudeCliExtractor,
    DailySpend,
    ExtractionResult,
    OllamaChatExtractor,
    budget_allows,
    calls_left,
    load_daily_spend,
    record_spend,
    save_daily_spend,
)
from local_recall.capture.pipeline_plan import (
    Observed,
    PassPlan,
    PlannedChunk,
    WorkItem,
    is_near_duplicate,
    memory_text,
    plan_chunks,
    plan_pass,
    retry_delay,
    thinking_entries,
)
from local_recall.capture.pipeline_state import (
    PipelineState,
    TranscriptState,
    load_state,
    prefix_fingerprint,
    save_state,
)
from local_recall.capture.transcripts import (
    TranscriptFile,
    Turn,
    find_transcripts,
    git_worktrees,
    parse_transcript,
)
from local_recall.errors import (
    ExtractionFailed,
    InvalidInput,
    RateLimited,
    RecallError,
    TranscriptUnreadable,
)
from local_recall.memory.drafts import make_draft
from local_recall.memory.model import content_hash
from local_recall.recall import Recall
from local_recall.redaction.secrets import redact, redact_for_storage

log = logging.getLogger(__name__)

LOCK_FILENAME = "pipeline.lock"
BUDGET_FILENAME = "budget.json"
ALREADY_RUNNING = "a pass is already running"
# How long an API rate limit pauses extraction when the CLI does not say (it never does).
RATE_LIMIT_PAUSE = timedelta(minutes=5)
CONTEXT_TURNS = 2

StopCheck = Callable[[], bool]


class Extractor(Protocol):
    """What a pass needs from an extractor (`ClaudeCliExtractor` is the real one)."""

    def extract(
        self, condensed: str, *, context: str = "", repo_name: str = ""
    ) -> ExtractionResult: ...


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
    thinking_created: int = 0
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
            "thinking_created": self.thinking_created,
            "created_ids": list(self.created_ids),
            "errors": list(self.errors),
            "notes": list(self.notes),
            "stopped": self.stopped,
            "index_synced": self.index_synced,
            "seconds": round(self.seconds, 3),
        }


def build_extractor(recall: Recall) -> Extractor:
    """The extractor `[extraction]` names. claude: `claude -p` (claude_path, else
    `$LOCAL_RECALL_CLAUDE_BIN`, else `claude` on PATH) run with the environment of
    `recall.settings` (the isolation seam); ollama: a chat model on `[embedder] ollama_host` or
    `$OLLAMA_HOST`. Both take model, timeout_seconds and max_attempts from `[extraction]`."""
    config = recall.config
    environ = recall.settings.environ
    model = config.get("extraction", "model")
    timeout = config.get("extraction", "timeout_seconds")
    attempts = config.get("extraction", "max_attempts")
    if config.get("extraction", "extractor") == "ollama":
        host = config.get("embedder", "ollama_host") or environ.get("OLLAMA_HOST") or None
        return OllamaChatExtractor(model, host, timeout_seconds=timeout, max_attempts=attempts)
    path = config.get("extraction", "claude_path") or environ.get("LOCAL_RECALL_CLAUDE_BIN")
    return ClaudeCliExtractor(
        path or None,
        model=model,
        timeout_seconds=timeout,
        max_attempts=attempts,
        extra_env=environ,
    )


def collect_transcripts(recall: Recall) -> list[TranscriptFile]:
    """This repository's transcripts: sessions started in it, below it or in one of its git
    worktrees, and their subagents (see `transcripts.find_transcripts`)."""
    return find_transcripts(
        recall.root, recall.settings.claude_config_dir, git_worktrees(recall.root)
    )


def run_pass(
    recall: Recall,
    *,
    extractor: Extractor | None = None,
    progress: bool = False,
    transcripts: Sequence[TranscriptFile] | None = None,
    only_path: Path | None = None,
    should_stop: StopCheck | None = None,
    lock_timeout: float = 5.0,
) -> PassReport:
    """Bring the memories up to date with the transcripts. Returns what happened; expected
    outcomes (nothing to do, a failed call left for later, rate limited, another pass running)
    are report fields. Raises ExtractorUnavailable when a call is needed and `claude` cannot
    run, StorageError when the state or a memory cannot be written.

    `transcripts`: use these instead of collecting; `only_path`: process just this file (it
    need not belong to the repository); `extractor`: default `build_extractor(recall)`, built
    only when a call is needed; `should_stop`: polled between chunks, ends the pass early."""
    started = time.monotonic()
    if not recall.config.get("extraction", "enabled"):
        return PassReport(stopped="disabled", seconds=time.monotonic() - started)
    state_dir = recall.layout.state_dir
    state_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(state_dir / LOCK_FILENAME))
    try:
        lock.acquire(timeout=lock_timeout)
    except LockTimeout:
        return PassReport(
            stopped="already_running",
            errors=(ALREADY_RUNNING,),
            seconds=time.monotonic() - started,
        )
    try:
        runner = _Pass(recall, extractor, should_stop or _never)
        files = _select(recall, transcripts, only_path)
        with _progress_bar(progress) as bar:
            runner.run(files, bar)
        return runner.report(time.monotonic() - started)
    finally:
        lock.release()


def _never() -> bool:
    return False


def _select(
    recall: Recall, given: Sequence[TranscriptFile] | None, only_path: Path | None
) -> list[TranscriptFile]:
    files = list(given) if given is not None else None
    if only_path is None:
        return files if files is not None else collect_transcripts(recall)
    wanted = os.path.abspath(only_path)
    pool = files if files is not None else collect_transcripts(recall)
    chosen = [f for f in pool if os.path.abspath(f.path) == wanted]
    if chosen:
        return chosen
    try:
        stat = Path(wanted).stat()
    except OSError as exc:
        raise InvalidInput(f"--transcript: cannot read {only_path}: {exc.strerror}") from None
    is_subagent = Path(wanted).parent.name == "subagents"
    return [
        TranscriptFile(
            path=Path(wanted),
            session_id=Path(wanted).stem,
            is_subagent=is_subagent,
            parent_session_id=Path(wanted).parent.parent.name if is_subagent else None,
            size=stat.st_size,
            mtime_ns=stat.st_mtime_ns,
        )
    ]


def memory_source(transcript: TranscriptFile) -> str:
    """`transcript:<session id>`, or `transcript:<session id>/agent-<id>` for a subagent."""
    if transcript.is_subagent and transcript.parent_session_id:
        return f"transcript:{transcript.parent_session_id}/{transcript.session_id}"
    return f"transcript:{transcript.session_id}"


# --------------------------------------------------------------------------------------------
# Carrying out a plan


class _Stop(Exception):
    """Internal: end the pass now (rate limited, budget spent, stop requested)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(slots=True)
class _Tally:
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
    thinking: int = 0
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stopped: str | None = None
    index_synced: bool = False


class _Pass:
    def __init__(self, recall: Recall, extractor: Extractor | None, should_stop: StopCheck) -> None:
        self.recall = recall
        self.config = recall.config
        self._extractor = extractor
        self.should_stop = should_stop
        self.now = recall.settings.clock()
        self.today: date = self.now.date()
        self.state_dir = recall.layout.state_dir
        loaded = load_state(self.state_dir)
        self.state: PipelineState = loaded.state
        self.tally = _Tally()
        if loaded.problem:
            self.tally.notes.append(loaded.problem)
        self.budget_path = self.state_dir / BUDGET_FILENAME
        self.spend: DailySpend = load_daily_spend(self.budget_path, self.today)
        self.limits = BudgetLimits(
            max_calls=self.config.get("extraction", "daily_max_calls"),
            max_tokens=self.config.get("extraction", "daily_max_tokens"),
        )
        self.thinking_enabled: bool = self.config.get("thinking", "enabled")
        self.threshold: float = self.config.get("extraction", "near_duplicate_threshold")
        self.idle_after = timedelta(minutes=self.config.get("extraction", "idle_minutes"))
        # Loaded on the first candidate: (content hashes, id -> text) of episodic memories.
        self._known: tuple[set[str], dict[str, str]] | None = None

    # --- the pass -----------------------------------------------------------------------------

    def run(self, files: Sequence[TranscriptFile], bar: _Bar) -> None:
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
        bar.start(len(plan.work))
        try:
            for done, item in enumerate(plan.work):
                if self.should_stop():
                    raise _Stop("stop_requested")
                bar.update(done, by_path[item.path].session_id)
                self._process(item, by_path[item.path])
            bar.update(len(plan.work), "")
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
        quiet = self.now - _from_ns(transcript.mtime_ns) >= self.idle_after
        plan = plan_chunks(
            parsed.turns,
            offset=item.offset,
            end_offset=parsed.end_offset,
            min_turns=self.config.get("extraction", "min_turns"),
            session_over=item.reason == "idle" or quiet,
            max_chars=self.config.get("extraction", "chunk_chars"),
            context_turns=CONTEXT_TURNS,
        )
        if plan.action == "wait":
            self.tally.skipped += 1
            self._store(replace(entry, pending_turns=plan.new_turns), seen=transcript)
            return
        self.tally.processed += 1
        if plan.action == "advance":
            thinking = self._write_thinking(parsed.turns, item.offset, plan.end_offset, transcript)
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
            memory_ids = self._extract_chunk(planned, transcript, entry)
            if memory_ids is None:
                return  # failed: the state stays where it was for this chunk
            thinking = self._write_thinking(parsed.turns, offset, planned.end_offset, transcript)
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
        self, planned: PlannedChunk, transcript: TranscriptFile, entry: TranscriptState
    ) -> list[str] | None:
        """Send one chunk and write its memories. None when the call failed (recorded)."""
        # condense() already dropped <private> spans; secrets go now, before anything is sent.
        text = redact(planned.chunk.text).text
        extractor = self._extractor_or_build()
        self.tally.chunks += 1
        try:
            result = extractor.extract(text, repo_name=self.recall.root.name)
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
        self.tally.calls += 1
        self.tally.input_tokens += result.input_tokens
        self.tally.output_tokens += result.output_tokens
        self.tally.cost += result.cost_usd or 0.0
        self.tally.dropped += len(result.dropped)
        self._spend(result.input_tokens, result.output_tokens)
        ids: list[str] = []
        source = memory_source(transcript)
        for candidate in result.memories:
            memory_id = self._write_memory(
                candidate.subject,
                candidate.body,
                list(candidate.keywords) or None,
                candidate.applies_to,
                planned.chunk.last_timestamp,
                source,
            )
            if memory_id is not None:
                ids.append(memory_id)
        return ids

    def _write_memory(
        self,
        subject: str,
        body: str,
        keywords: list[str] | None,
        scope: str,
        occurred_at: datetime,
        source: str,
    ) -> str | None:
        hashes, texts = self._known_memories()
        stored_body = redact_for_storage(body).text
        # What the model wrote may quote a secret: compare and log the redacted subject only.
        shown = redact_for_storage(subject).text
        if content_hash(stored_body) not in hashes:
            match = is_near_duplicate(memory_text(shown, stored_body), texts, self.threshold)
            if match is not None:
                self.tally.near_duplicates += 1
                log.info("near-duplicate of %s skipped: %s", match, shown)
                return match
        try:
            created = self.recall.save(
                subject,
                body,
                keywords=keywords,
                scope=scope,
                occurred_at=occurred_at,
                source=source,
            )
        except InvalidInput as exc:
            self.tally.dropped += 1
            log.info("extracted memory dropped (%s): %s", exc, shown)
            return None
        memory = created.memory
        if created.created:
            self.tally.created.append(memory.id)
            hashes.add(memory.content_hash)
            texts[memory.id] = memory_text(memory.subject, memory.body)
        else:
            self.tally.duplicates += 1
        return memory.id

    def _known_memories(self) -> tuple[set[str], dict[str, str]]:
        if self._known is None:
            memories = self.recall.memories.scan().memories
            self._known = (
                {m.content_hash for m in memories},
                {m.id: memory_text(m.subject, m.body) for m in memories},
            )
        return self._known

    def _write_thinking(
        self, turns: Sequence[Turn], after: int, upto: int, transcript: TranscriptFile
    ) -> list[str]:
        """Thinking memories of the assistant turns ending in (after, upto]; no LLM call."""
        if not self.thinking_enabled:
            return []
        ids: list[str] = []
        # Redacted before thinking_entries folds and clips the prompt and the subject: a secret
        # cut at a length limit is no longer recognisable when the memory is written.
        shown = [
            replace(
                t,
                text=redact_for_storage(t.text).text,
                thinking=redact_for_storage(t.thinking).text,
            )
            for t in turns
            if t.end_offset <= upto
        ]
        for entry in thinking_entries(shown, after):
            try:
                draft = make_draft(
                    subject=entry.subject,
                    body=entry.body,
                    keywords=None,
                    applies_to="global",
                    occurred_at=entry.occurred_at,
                    source=memory_source(transcript),
                )
            except InvalidInput as exc:  # e.g. a body over the 1 MB limit
                self.tally.dropped += 1
                log.info("thinking memory dropped: %s", exc)
                continue
            created = self.recall.thinking.create(draft)
            if created.created:
                self.tally.thinking += 1
            ids.append(created.memory.id)
        return ids

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
        return replace(
            entry,
            offset=offset,
            read_from=min(read_from, offset),
            prefix_hash=prefix_fingerprint(Path(entry.path), offset) or "",
            memory_ids=_merged(entry.memory_ids, memory_ids),
            thinking_ids=_merged(entry.thinking_ids, thinking_ids),
            pending_turns=0,
            attempts=0,
            next_retry_at=None,
            last_error=None,
            processed_at=self.now,
        )

    def _failed(self, entry: TranscriptState, reason: str) -> None:
        attempts = entry.attempts + 1
        self.tally.errors.append(f"{entry.path}: {reason}")
        log.warning("extraction of %s failed (attempt %d): %s", entry.path, attempts, reason)
        self._store(
            replace(
                entry,
                attempts=attempts,
                failures=entry.failures + 1,
                next_retry_at=self.now + retry_delay(attempts),
                last_error=reason[:500],
            )
        )

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
            self._extractor = build_extractor(self.recall)
        return self._extractor

    def _sync_index(self) -> None:
        try:
            self.recall.sync_index()
            self.tally.index_synced = True
        except RecallError as exc:  # the files are written; search catches up on its own
            self.tally.errors.append(f"index not updated: {exc}")
            log.warning("index sync after the pass failed: %s", exc)

    def report(self, seconds: float) -> PassReport:
        t = self.tally
        return PassReport(
            transcripts_seen=t.seen,
            transcripts_processed=t.processed,
            transcripts_skipped=t.skipped,
            chunks_sent=t.chunks,
            api_calls=t.calls,
            input_tokens=t.input_tokens,
            output_tokens=t.output_tokens,
            cost_usd=t.cost,
            memories_created=len(t.created),
            duplicates=t.duplicates,
            near_duplicates=t.near_duplicates,
            dropped=t.dropped,
            thinking_created=t.thinking,
            created_ids=tuple(t.created),
            errors=tuple(t.errors),
            notes=tuple(t.notes),
            stopped=t.stopped,
            index_synced=t.index_synced,
            seconds=seconds,
        )


def _key(path: Path) -> str:
    return os.path.abspath(path)


def _merged(old: Sequence[str], new: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*old, *new]))


def _from_ns(mtime_ns: int) -> datetime:
    return datetime.fromtimestamp(mtime_ns / 1e9, UTC)


# --------------------------------------------------------------------------------------------
# Progress on stderr (rich), only when asked for


class _Bar:
    def start(self, total: int) -> None: ...

    def update(self, done: int, label: str) -> None: ...


class _RichBar(_Bar):
    def __init__(self, progress: Any) -> None:
        self._progress = progress
        self._task: Any = None

    def start(self, total: int) -> None:
        self._task = self._progress.add_task("transcripts", total=max(total, 1))
        if total == 0:
            self._progress.update(self._task, completed=1, description="nothing new")

    def update(self, done: int, label: str) -> None:
        if self._task is not None:
            self._progress.update(self._task, completed=done, description=label[:36] or "done")


@contextlib.contextmanager
def _progress_bar(enabled: bool) -> Iterator[_Bar]:
    if not enabled:
        yield _Bar()
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn("[bold]sync[/bold] {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=False,
    )
    with progress:
        yield _RichBar(progress)
