"""What the daemon does next, decided purely over values (tested with literals): `decide`
over `Pending` work and `Timers`; which file events count (`is_memory_file_event`,
`is_transcript_event`, `CHANGE_EVENTS`); which project folders may hold this repo's
transcripts (`repo_transcript_dirs`)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from local_recall.capture.transcripts.project_dirs import may_hold_sessions

MEMORY_DEBOUNCE_SECONDS = 0.5  # an editor's save, a `git pull` of many files: one re-index


PERIODIC_REASON = "periodic full pass"


@dataclass(frozen=True, slots=True)
class Timers:
    debounce_seconds: float  # transcripts: quiet time before a pass
    full_pass_seconds: float
    idle_exit_seconds: float = 0.0  # 0 = never
    memory_debounce_seconds: float = MEMORY_DEBOUNCE_SECONDS


@dataclass(frozen=True, slots=True)
class Pending:
    """What happened since the last work, as monotonic times (None = nothing)."""

    memory_changed_at: float | None
    transcript_changed_at: float | None
    transcript_done: bool
    last_pass_at: float
    last_activity_at: float


Action = Literal["sync", "pass", "exit", "wait"]


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    wait_seconds: float = 0.0
    reason: str = ""


def decide(now: float, pending: Pending, timers: Timers) -> Decision:
    """The next thing the daemon does. Re-indexing hand edits comes first (it takes
    milliseconds; a pass can take minutes of model calls)."""
    waits: list[float] = []
    if pending.memory_changed_at is not None:
        due = pending.memory_changed_at + timers.memory_debounce_seconds
        if now >= due:
            return Decision("sync", reason="memory files changed")
        waits.append(due - now)
    if pending.transcript_done:
        return Decision("pass", reason="a session ended")
    if pending.transcript_changed_at is not None:
        due = pending.transcript_changed_at + timers.debounce_seconds
        if now >= due:
            return Decision("pass", reason="a transcript changed")
        waits.append(due - now)
    busy = bool(waits)
    due = pending.last_pass_at + timers.full_pass_seconds
    if now >= due:
        return Decision("pass", reason=PERIODIC_REASON)
    waits.append(due - now)
    if timers.idle_exit_seconds > 0 and not busy:
        due = pending.last_activity_at + timers.idle_exit_seconds
        if now >= due:
            return Decision("exit", reason="idle")
        waits.append(due - now)
    return Decision("wait", wait_seconds=max(0.0, min(waits)))


def repo_transcript_dirs(names: Iterable[str], roots: Iterable[str]) -> list[str]:
    """Folders of `<claude config>/projects/` that may hold this repo's sessions: a root's
    encoding, or a subdirectory's (that encoding + "-"). Look-alikes only cost a pass."""
    wanted = list(roots)
    return sorted(name for name in names if may_hold_sessions(name, wanted))


def is_memory_file_event(path: str) -> bool:
    name = os.path.basename(path)
    return name.endswith(".md") and not name.startswith(".")


def is_transcript_event(path: str) -> bool:
    return path.endswith(".jsonl")


# Events that mean content changed; watchdog also reports opens and read-only closes, and the
# daemon reads memory files itself (it would wake itself up forever).
CHANGE_EVENTS = frozenset({"created", "modified", "deleted", "moved", "closed"})


def after_pass(reason: str, wrote: bool) -> Literal["sync", "publish", "nothing"]:
    """What the daemon does once a pipeline pass is over.

    The pipeline re-indexes what it writes itself; a pass that a transcript triggered and that
    wrote nothing changed nothing the index holds, and re-reading every memory file (~0.2 s of
    CPU at 5k memories) would only compete with the next prompt's query for the 2 cores. The
    periodic pass re-indexes regardless, for whatever the file watchers missed.
    """
    if reason == PERIODIC_REASON:
        return "sync"
    return "publish" if wrote else "nothing"
