"""Session summaries, carried out: after a pass has extracted memories, each main-session
transcript at a resting point (ended, about to be compacted, or quiet) whose transcript grew
since its last summary gets one summary request (more for a long stretch: one per condensed
chunk, each updating the last) and its `session-summaries/<session id>.md` written or
rewritten. Progress lives in `state/summaries.json`. Decisions: summary_plan.py; the request:
extraction/summary_prompt.py; docs/pipeline.md#session-summaries.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

from local_recall.capture.extraction.summary_prompt import Summariser
from local_recall.capture.report import Tally
from local_recall.capture.summary_plan import (
    SummaryEntry,
    entries_from_json,
    entries_to_json,
    files_changed,
    is_empty_summary,
    merged_files,
    render_summary_body,
    summary_done,
    summary_due,
    summary_failed,
    summary_subject,
)
from local_recall.capture.transcripts.condense import condense
from local_recall.capture.transcripts.model import ParsedTranscript, TranscriptFile
from local_recall.errors import (
    ApiUnreachable,
    ExtractionFailed,
    ExtractorUnavailable,
    InvalidInput,
    InvalidMemoryId,
    MemoryNotFound,
    RateLimited,
    RecallError,
)
from local_recall.memory.drafts import make_draft
from local_recall.memory.model import Draft, Memory, Provenance, parse_memory_id
from local_recall.memory.store import Created
from local_recall.repo.files import write_text_atomic
from local_recall.repo.git_head import read_git_head

log = logging.getLogger(__name__)

STATE_FILENAME = "summaries.json"
KEYWORDS = ("session summary",)
_BRANCH = re.compile(rb'"gitBranch"\s*:\s*"((?:[^"\\]|\\.){1,200})"')
_TAIL_BYTES = 256 * 1024


class SummarySink(Protocol):
    """Where summaries go (the `MemoryStore` of session-summaries/)."""

    def get(self, memory_id: str) -> Memory: ...

    def put(self, memory_id: str, draft: Draft) -> Created: ...


@dataclass(frozen=True, slots=True)
class SummaryInputs:
    root: Path
    state_dir: Path
    store: SummarySink
    chunk_chars: int
    ended: Collection[str]  # absolute transcript paths whose session ended or is compacting
    is_quiet: Callable[[TranscriptFile], bool]
    budget_ok: Callable[[], bool]  # another call fits the daily budget
    spend: Callable[[int, int], None]  # (input, output tokens) of one call, answered or not
    should_stop: Callable[[], bool]
    now: datetime
    # the session source's reader (sources.py): turns from a byte offset, cleaned
    read: Callable[[Path, int], ParsedTranscript]


def write_summaries(
    inputs: SummaryInputs,
    files: Sequence[TranscriptFile],
    summariser: Summariser,
    tally: Tally,
) -> None:
    """Bring the summaries of `files` up to date. Failures are recorded (tally, backoff in the
    state), never raised, except StorageError when a file cannot be written."""
    path = inputs.state_dir / STATE_FILENAME
    entries = _load(path)
    for transcript in files:
        key = os.path.abspath(transcript.path)
        if transcript.is_subagent or not _is_uuid(transcript.session_id):
            continue
        entry = entries.get(key) or SummaryEntry(transcript.session_id)
        ended = key in inputs.ended
        if not summary_due(
            entries.get(key),
            transcript.size,
            ended=ended,
            quiet=ended or inputs.is_quiet(transcript),
            now=inputs.now,
        ):
            continue
        if inputs.should_stop() or not inputs.budget_ok():
            return
        try:
            entry = _summarise(inputs, transcript, entry, summariser, tally)
        except (RateLimited, ExtractorUnavailable) as exc:
            tally.errors.append(f"{transcript.path}: summary: {exc}")
            return  # no call will work now: the next pass tries again
        except ApiUnreachable as exc:  # nor now; and not at every pass while offline
            tally.errors.append(f"{transcript.path}: summary: {exc}")
            entries[key] = summary_failed(entry, inputs.now)
            _save(path, entries)
            return
        except ExtractionFailed as exc:
            tally.errors.append(f"{transcript.path}: summary: {exc}")
            entry = summary_failed(entry, inputs.now)
        entries[key] = entry
        _save(path, entries)


def _summarise(
    inputs: SummaryInputs,
    transcript: TranscriptFile,
    entry: SummaryEntry,
    summariser: Summariser,
    tally: Tally,
) -> SummaryEntry:
    session = transcript.session_id
    try:
        parsed = inputs.read(transcript.path, entry.offset)
    except RecallError as exc:
        log.info("summary of %s skipped: %s", transcript.path, exc)
        return summary_failed(entry, inputs.now)
    turns = [turn for turn in parsed.turns if not turn.is_sidechain]
    previous = _previous(inputs.store, session)
    files = merged_files(
        previous.files if previous is not None else (), files_changed(turns, str(inputs.root))
    )
    branch, commit = _branch_and_commit(inputs.root, transcript.path)
    body = previous.body if previous is not None else ""
    for chunk in condense(turns, max_chars=inputs.chunk_chars):
        if inputs.should_stop() or not inputs.budget_ok():
            return entry  # what was written stays; the rest next pass
        tally.chunks_sent += 1
        try:
            result = summariser.summarise(chunk.text, previous=body, repo_name=inputs.root.name)
        except ExtractionFailed:
            inputs.spend(0, 0)
            raise
        inputs.spend(result.input_tokens, result.output_tokens)
        tally.answered(result.input_tokens, result.output_tokens, result.cost_usd)
        tally.summary_calls += 1
        if is_empty_summary(result.summary, files):  # a one-turn session: no file
            log.info("empty summary of %s not written", transcript.path)
            continue
        try:
            draft = make_draft(
                subject=summary_subject(result.summary),
                body=render_summary_body(result.summary, files),
                keywords=KEYWORDS,
                applies_to="global",
                occurred_at=chunk.last_timestamp,
                source=f"transcript:{session}",
                provenance=Provenance(commit=commit, branch=branch, session=session, files=files),
            )
        except InvalidInput as exc:
            raise ExtractionFailed(f"summary not written: {exc}") from None
        written = inputs.store.put(session, draft)
        body = written.memory.body
        if written.created:
            tally.summaries_written += 1
    return summary_done(entry, parsed.end_offset, inputs.now)


def _previous(store: SummarySink, session: str) -> Memory | None:
    try:
        return store.get(session)
    except MemoryNotFound:
        return None
    except RecallError as exc:  # a hand-broken file: reported by `doctor`, never overwritten
        raise ExtractionFailed(f"existing summary unreadable: {exc}") from None


def _branch_and_commit(root: Path, transcript: Path) -> tuple[str | None, str | None]:
    """The session's branch (the last `gitBranch` its transcript recorded; "HEAD" means
    detached), else the checked-out one; the commit when that branch is checked out now."""
    head = read_git_head(root)
    branch = _transcript_branch(transcript)
    if branch is None:
        return head.branch, head.commit
    return branch, head.commit if branch == head.branch else None


def _transcript_branch(path: Path) -> str | None:
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - _TAIL_BYTES))
            tail = handle.read(_TAIL_BYTES)
    except OSError:
        return None
    found = _BRANCH.findall(tail)
    if not found:
        return None
    try:
        name = json.loads(b'"' + found[-1] + b'"')
    except ValueError:
        return None
    return name if isinstance(name, str) and name != "HEAD" else None


def _is_uuid(value: str) -> bool:
    try:
        parse_memory_id(value)
    except InvalidMemoryId:
        return False
    return True


def _load(path: Path) -> dict[str, SummaryEntry]:
    try:
        return entries_from_json(json.loads(path.read_bytes()))
    except (OSError, ValueError):
        return {}  # lost progress costs a call, never a duplicate: the file is per session


def _save(path: Path, entries: dict[str, SummaryEntry]) -> None:
    with contextlib.suppress(RecallError):  # progress only: the next pass redoes the call
        write_text_atomic(path, json.dumps(entries_to_json(entries)))
