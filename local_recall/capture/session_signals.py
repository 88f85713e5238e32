"""The pass's note of what each session did with the memories it was shown
(docs/hooks.md#what-is-learned): read the session's record (state/sessions/), decide with
learning/signals.py, append to this user's record in state/ (learning/usage_log.py), and write
a memory a session newly found wrong its `disputed:` key (the one change a team sees, in the
memory's own file: redacted, one line).

Never fatal: a record or outcome file that cannot be read or written costs what is learned from
that session (logged), never the memories the pass extracts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from local_recall.capture.extraction.prompt import ExistingMemory
from local_recall.capture.transcripts.model import TranscriptFile, Turn
from local_recall.capture.writer import MemorySink
from local_recall.errors import RecallError
from local_recall.learning.outcomes import MAX_REASON_CHARS
from local_recall.learning.shown import FirstShown, first_shown, session_key
from local_recall.learning.shown_log import read_shown
from local_recall.learning.signals import Verdicts, followed, session_outcomes
from local_recall.learning.usage_log import append_outcomes
from local_recall.memory.dispute import Dispute
from local_recall.redaction.secrets import redact_for_storage
from local_recall.repo.config import LearningConfig
from local_recall.repo.layout import Layout
from local_recall.text import one_line

log = logging.getLogger(__name__)

# id -> subject, for the ids that name a memory in the store
Subjects = Callable[[Sequence[str]], Mapping[str, str]]
# (memory id, the dispute to write in its frontmatter)
HoldDisputed = Callable[[str, Dispute], None]
DEFAULT_REASON = "found wrong by a session"


@dataclass(frozen=True, slots=True)
class SessionSignals:
    """`[learning] signals` on: where the pass reads records and writes outcomes."""

    layout: Layout
    subjects: Subjects
    ask_model: bool = True  # [learning] disputed: the extraction call judges what was shown
    # writes a memory a session newly found wrong its `disputed:` key and `review: unreviewed`:
    # until a person accepts, edits or rejects it, hooks show it as [disputed: why], a pointer
    hold_disputed: HoldDisputed | None = None
    today: Callable[[], str] = lambda: datetime.now(UTC).date().isoformat()  # the Settings clock

    def shown(self, transcript: TranscriptFile) -> Mapping[str, FirstShown]:
        """What the session was shown, by memory; {} for a subagent (its prompts are its
        parent's) or a session without a record."""
        if transcript.is_subagent:
            return {}
        return first_shown(read_shown(self.layout.state_dir, transcript.session_id))

    def to_judge(self, shown: Mapping[str, FirstShown]) -> list[ExistingMemory]:
        """The shown memories that still exist, with their subjects, for the extraction call."""
        if not shown or not self.ask_model:
            return []
        subjects = self.subjects(list(shown))
        return [ExistingMemory(i, subjects[i]) for i in shown if i in subjects]

    def record(
        self,
        transcript: TranscriptFile,
        shown: Mapping[str, FirstShown],
        turns: Iterable[Turn],
        verdicts: Iterable[Verdicts],
    ) -> int:
        """Appends the session's outcomes; how many were new (0 on a failure, logged)."""
        if not shown:
            return 0
        calls = [(c.name, c.key_argument) for turn in turns for c in turn.tool_calls]
        merged = merge(verdicts)
        session = session_key(transcript.session_id)
        outcomes = session_outcomes(session, shown, followed(calls, shown), merged)
        try:
            new = append_outcomes(self.layout, outcomes)
        except OSError as exc:
            log.warning(
                "what session %s did with its memories is not recorded: %s",
                transcript.session_id,
                exc,
            )
            return 0
        for outcome in new:
            if outcome.use == "disputed" and self.hold_disputed is not None:
                dispute = Dispute(dispute_reason(outcome.reason), self.today(), session)
                self.hold_disputed(outcome.memory_id, dispute)
        return len(new)


def dispute_reason(text: str) -> str:
    """The model's reason as the memory file keeps it: redacted like any memory text (a model
    may restate a secret it saw in two halves), one printable line, at most MAX_REASON_CHARS."""
    return one_line(redact_for_storage(text).text, MAX_REASON_CHARS, mark="") or DEFAULT_REASON


def session_signals(
    layout: Layout,
    memories: MemorySink,
    learning: LearningConfig,
    clock: Callable[[], datetime] | None = None,
) -> SessionSignals | None:
    """The pass's signals as `[learning]` sets them; None when off, or when the checkout is
    read-only (its memories cannot be written: nothing is learned there)."""
    if not learning.signals or layout.read_only:
        return None

    def subjects(ids: Sequence[str]) -> dict[str, str]:
        wanted = set(ids)
        return {m.id: m.subject for m in memories.scan().memories if m.id in wanted}

    def hold(memory_id: str, dispute: Dispute) -> None:
        try:
            memories.update(memory_id, lambda m: replace(m, unreviewed=True, disputed=dispute))
        except RecallError as exc:  # gone since, or unwritable: the outcome is kept anyway
            log.warning("disputed memory %s not marked for review: %s", memory_id, exc)

    held = hold if learning.disputed else None
    signals = SessionSignals(layout, subjects, ask_model=learning.disputed, hold_disputed=held)
    if clock is not None:
        signals = replace(signals, today=lambda: clock().date().isoformat())
    return signals


def merge(verdicts: Iterable[Verdicts]) -> Verdicts:
    """The verdicts of a transcript's chunks as one (a dispute wins over reliance)."""
    relied: set[str] = set()
    disputed: dict[str, str] = {}
    judged = False
    for verdict in verdicts:
        relied |= verdict.relied
        judged = judged or verdict.judged
        for memory_id, reason in verdict.disputed.items():
            disputed.setdefault(memory_id, reason)
    return Verdicts(frozenset(relied - disputed.keys()), disputed, judged)
