"""Decisions of the extraction pipeline, as pure functions over values (tested with literals).

* `plan_pass`: which transcripts need work this pass, in which order, and which wait.
* `plan_chunks`: for one transcript, which turns are new, whether to extract now, and the
  chunks to send with the offset to store after each.
* `is_near_duplicate`: whether a candidate memory says what an existing one already says.
* `thinking_entries`: the thinking memories (thinking + the answer it led to) of new turns.
* `retry_delay`: backoff after failed attempts.

`local_recall.capture.pipeline` reads files, calls the extractor and writes memories; it only
carries these plans out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from rapidfuzz import fuzz, process
from rapidfuzz.utils import default_process

from local_recall.capture.progress import PipelineState
from local_recall.capture.transcripts.condense import condense, render_turn
from local_recall.capture.transcripts.model import (
    Chunk,
    Turn,
    resume_offset,
    split_turns_at,
)
from local_recall.text import one_line

# --------------------------------------------------------------------------------------------
# Which transcripts


@dataclass(frozen=True, slots=True)
class Observed:
    """A transcript file as seen now. `prefix_hash` is `prefix_fingerprint(path, offset)` at the
    offset the state stored for it (None when there is no state, or the file is shorter)."""

    path: str
    session_id: str
    size: int
    mtime_ns: int
    prefix_hash: str | None = None


WorkReason = Literal["new", "appended", "rewritten", "idle"]


@dataclass(frozen=True, slots=True)
class WorkItem:
    path: str
    session_id: str
    reason: WorkReason
    read_from: int  # where to start parsing (earlier than `offset` to re-read context turns)
    offset: int  # turns ending at or before this were handled by an earlier pass


@dataclass(frozen=True, slots=True)
class PassPlan:
    work: tuple[WorkItem, ...]  # oldest file first
    unchanged: tuple[str, ...]
    waiting: tuple[str, ...]  # in backoff after failures
    deferred: tuple[str, ...]  # daily budget spent, or the API asked us to pause
    vanished: tuple[str, ...]  # in the state, no longer on disk: their memories stay


def plan_pass(
    on_disk: Sequence[Observed],
    state: PipelineState,
    now: datetime,
    *,
    calls_left: int | None = None,
    idle_after: timedelta = timedelta(minutes=10),
) -> PassPlan:
    """Compare the transcripts on disk with what the state says was processed.

    new: never seen. appended: grew since the last pass (same prefix). rewritten: shorter than
    what was processed, or its processed prefix changed: read again from 0 (existing memories
    stay; creation is idempotent). idle: unchanged, but holds turns that waited for
    `extraction.min_turns` and the session has been quiet for `idle_after`. Files in backoff
    wait; with no calls left in the daily budget (`calls_left` 0) or while the API has asked
    us to pause, all work is deferred."""
    work: list[tuple[int, str, WorkItem]] = []
    unchanged: list[str] = []
    waiting: list[str] = []
    for seen in on_disk:
        entry = state.get(seen.path)
        item: WorkItem | None
        if entry is None:
            item = WorkItem(seen.path, seen.session_id, "new", 0, 0)
        elif seen.size == entry.size and seen.mtime_ns == entry.mtime_ns:
            quiet = is_quiet(seen.mtime_ns, now, idle_after)
            item = None
            if entry.pending_turns > 0 and quiet:
                item = WorkItem(seen.path, seen.session_id, "idle", entry.read_from, entry.offset)
            elif entry.attempts > 0:  # failed last time: try again (after the backoff)
                item = WorkItem(
                    seen.path, seen.session_id, "appended", entry.read_from, entry.offset
                )
        elif seen.size < entry.offset or seen.prefix_hash != entry.prefix_hash:
            item = WorkItem(seen.path, seen.session_id, "rewritten", 0, 0)
        else:
            item = WorkItem(seen.path, seen.session_id, "appended", entry.read_from, entry.offset)
        if item is None:
            unchanged.append(seen.path)
        elif entry is not None and entry.next_retry_at is not None and now < entry.next_retry_at:
            waiting.append(seen.path)
        else:
            work.append((seen.mtime_ns, seen.path, item))
    work.sort(key=lambda row: (row[0], row[1]))
    ordered = tuple(item for _, _, item in work)
    paused = state.paused_until is not None and now < state.paused_until
    no_budget = calls_left is not None and calls_left <= 0
    on_disk_paths = {seen.path for seen in on_disk}
    vanished = tuple(sorted(p for p in state.transcripts if p not in on_disk_paths))
    if paused or no_budget:
        return PassPlan(
            (), tuple(unchanged), tuple(waiting), tuple(i.path for i in ordered), vanished
        )
    return PassPlan(ordered, tuple(unchanged), tuple(waiting), (), vanished)


def is_quiet(mtime_ns: int, now: datetime, idle_after: timedelta) -> bool:
    """Whether a file last written at `mtime_ns` has been quiet for `idle_after` at `now`."""
    return now - datetime.fromtimestamp(mtime_ns / 1e9, UTC) >= idle_after


def retry_delay(
    attempts: int, *, base: timedelta = timedelta(minutes=5), cap: timedelta = timedelta(hours=6)
) -> timedelta:
    """Backoff after `attempts` consecutive failed passes on one transcript: 5 min, 10, 20, ...
    up to 6 h. A transcript is never given up: a fixed bug or a new model may succeed later."""
    if attempts <= 0:
        return timedelta(0)
    delay: timedelta = base * (2 ** min(attempts - 1, 20))
    return min(cap, delay)


# --------------------------------------------------------------------------------------------
# Which turns, which chunks


@dataclass(frozen=True, slots=True)
class PlannedChunk:
    chunk: Chunk
    end_offset: int  # the transcript's processed offset once this chunk's memories are written
    read_from: int  # where the next pass starts parsing, to get context turns back


ChunkAction = Literal["extract", "wait", "advance"]


@dataclass(frozen=True, slots=True)
class ChunkPlan:
    """extract: send `chunks`, in order. wait: too few new turns and the session is live:
    store nothing, look again later. advance: nothing worth sending (tool traffic, bookkeeping
    lines): store `end_offset` without a call."""

    action: ChunkAction
    chunks: tuple[PlannedChunk, ...]
    new_turns: int  # new turns with words in them (what `min_turns` counts)
    end_offset: int
    read_from: int


def plan_chunks(
    turns: Sequence[Turn],
    *,
    offset: int,
    end_offset: int,
    min_turns: int,
    session_over: bool,
    max_chars: int,
    context_turns: int = 2,
) -> ChunkPlan:
    """`turns` were parsed from a `read_from` at or before `offset`; `end_offset` is where that
    parse stopped. Turns ending at or before `offset` are context only (already extracted);
    the rest are new and are the only ones sent, after at most `context_turns` context turns.

    `min_turns`: while fewer new turns than this have words in them (a prompt still waiting for
    its answer, say), the session is left alone unless it is over (idle or ended) — a later
    pass sends the turns together, which costs one call instead of several."""
    context, new = split_turns_at(turns, offset)
    worded = sum(1 for turn in new if turn.text.strip())
    read_from = resume_offset(turns, end_offset, keep=context_turns)
    rendered = [turn for turn in new if render_turn(turn)]
    if not rendered:
        return ChunkPlan("advance", (), worded, end_offset, read_from)
    if worded < min_turns and not session_over:
        return ChunkPlan("wait", (), worded, offset, read_from)
    chunks = condense(new, max_chars=max_chars, context=context, context_turns=context_turns)
    planned: list[PlannedChunk] = []
    position = 0
    for index, chunk in enumerate(chunks):
        members = rendered[position : position + len(chunk.turn_uuids)]
        position += len(members)
        # The last chunk also covers trailing bookkeeping lines after its last turn.
        chunk_end = end_offset if index == len(chunks) - 1 else members[-1].end_offset
        done = [t for t in turns if t.end_offset <= chunk_end]
        planned.append(
            PlannedChunk(chunk, chunk_end, resume_offset(done, chunk_end, keep=context_turns))
        )
    return ChunkPlan("extract", tuple(planned), worded, end_offset, read_from)


# --------------------------------------------------------------------------------------------
# Near-duplicates

# Two measures that both penalise content one text has and the other lacks: `ratio` (edit
# distance) and `token_sort_ratio` (the same, after sorting words: reordered sentences). Not
# token_set_ratio: it scores ~95 for two memories that merely share a template or a long list
# of words, and 100 for a short memory whose words all appear in a long one.
_SCORERS = (fuzz.ratio, fuzz.token_sort_ratio)


def memory_text(subject: str, body: str) -> str:
    return f"{subject}\n{body}"


def similarity(a: str, b: str) -> float:
    """0..1: how much two memory texts say the same thing, case, punctuation and word order
    aside."""
    left, right = default_process(a), default_process(b)
    if not left or not right:
        return 0.0
    return max(float(scorer(left, right)) for scorer in _SCORERS) / 100.0


def is_near_duplicate(candidate: str, existing: Mapping[str, str], threshold: float) -> str | None:
    """The id of the existing memory (id -> `memory_text`) most similar to `candidate`, if at
    least `threshold` similar; else None. threshold 1.0 turns the check off (exact copies are
    caught by the content hash anyway). Each measure is one pass in C over all memories."""
    if threshold >= 1.0 or not existing or not default_process(candidate):
        return None
    best: tuple[float, str] | None = None
    for scorer in _SCORERS:
        found = process.extractOne(
            candidate,
            existing,
            scorer=scorer,
            processor=default_process,
            score_cutoff=threshold * 100.0,
        )
        if found is not None and (best is None or found[1] > best[0]):
            best = (float(found[1]), str(found[2]))
    return None if best is None else best[1]


# --------------------------------------------------------------------------------------------
# Thinking memories

_SUBJECT_CHARS = 120
_PROMPT_CHARS = 500


@dataclass(frozen=True, slots=True)
class ThinkingEntry:
    subject: str
    body: str
    occurred_at: datetime


def thinking_entries(turns: Sequence[Turn], offset: int) -> list[ThinkingEntry]:
    """One entry per new assistant turn (ending after `offset`) with thinking: its thinking
    verbatim and
    the answer it led to — the turn's text, or its tool calls when it only acted. The prompt
    it answered (the latest user words before it in `turns`) is quoted for context."""
    entries: list[ThinkingEntry] = []
    prompt = ""
    for turn in turns:
        if turn.role == "user" and turn.text.strip():
            prompt = turn.text.strip()
        if turn.end_offset <= offset or turn.role != "assistant" or not turn.thinking.strip():
            continue
        answer = turn.text.strip() or "\n".join(
            f"[tool] {c.name}: {c.key_argument}".rstrip(": ") for c in turn.tool_calls
        )
        parts = []
        if prompt:
            parts.append(f"## Prompt\n\n{one_line(prompt, _PROMPT_CHARS)}")
        parts.append(f"## Thinking\n\n{turn.thinking.strip()}")
        if answer:
            parts.append(f"## Answer\n\n{answer}")
        first_line = turn.thinking.strip().splitlines()[0]
        entries.append(
            ThinkingEntry(
                subject=one_line(f"Thinking: {first_line}", _SUBJECT_CHARS),
                body="\n\n".join(parts),
                occurred_at=turn.timestamp,
            )
        )
    return entries
