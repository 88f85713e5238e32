"""Writing what a pass produces: extracted memories (validated, redacted, deduplicated) and
thinking memories. Each text is redacted once, by `make_draft`, and the near-duplicate check
compares the draft that will be stored: what the model wrote may quote a secret.

A draft is dropped as a near-duplicate when its text is nearly an existing memory's (edit
distance, `near_duplicate_threshold`) or when it paraphrases one: nearest in meaning among the
index's vectors and sharing most words (memory/likeness.py; benchmarks/write_dedup.py)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Protocol

from local_recall.capture.extraction.prompt import CandidateMemory, Supersedes
from local_recall.capture.pipeline_plan import is_near_duplicate, memory_text, thinking_entries
from local_recall.capture.provenance import memory_files
from local_recall.capture.report import Tally
from local_recall.capture.transcripts.model import TranscriptFile, Turn
from local_recall.errors import InvalidInput, InvalidMemoryFile, MemoryNotFound, RecallError
from local_recall.memory.drafts import make_draft
from local_recall.memory.likeness import paraphrase_of
from local_recall.memory.model import (
    MAX_PROVENANCE_CHARS,
    Draft,
    Memory,
    Provenance,
    content_hash,
)
from local_recall.memory.store import Created, Scan
from local_recall.redaction.secrets import redact_for_storage

log = logging.getLogger(__name__)

# text -> (id, cosine) of the existing memories nearest in meaning, nearest first
Neighbours = Callable[[str], Sequence[tuple[str, float]]]


def session_of(transcript: TranscriptFile) -> str:
    """The Claude Code session a transcript belongs to (a subagent's: its parent's)."""
    if transcript.is_subagent and transcript.parent_session_id:
        return transcript.parent_session_id
    return transcript.session_id


def memory_source(transcript: TranscriptFile) -> str:
    """`transcript:<session id>`, or `transcript:<session id>/agent-<id>` for a subagent."""
    if transcript.is_subagent and transcript.parent_session_id:
        return f"transcript:{transcript.parent_session_id}/{transcript.session_id}"
    return f"transcript:{transcript.session_id}"


# --------------------------------------------------------------------------------------------
# Carrying out a plan


class MemorySink(Protocol):
    """Where a pass writes memories (a `MemoryStore`): idempotent by content hash."""

    def scan(self) -> Scan: ...

    def create(self, draft: Draft) -> Created: ...

    def update(self, memory_id: str, apply: Callable[[Memory], Memory]) -> Memory: ...


class MemoryWriter:
    def __init__(
        self,
        memories: MemorySink,
        thinking: MemorySink,
        tally: Tally,
        *,
        near_duplicate_threshold: float,
        thinking_enabled: bool,
        head: Callable[[], Provenance] = Provenance,
        rejected_hashes: Callable[[], frozenset[str]] = frozenset,
        neighbours: Neighbours | None = None,
    ) -> None:
        self.memories = memories
        self.thinking = thinking
        self.tally = tally
        self.threshold = near_duplicate_threshold
        self.thinking_enabled = thinking_enabled
        # Loaded on the first candidate: (content hashes, id -> text) of episodic memories.
        self._known: tuple[set[str], dict[str, str]] | None = None
        # Asked on the first candidate, once per pass: never a git call per memory.
        self._head_of, self._rejected_of = head, rejected_hashes
        self._head: Provenance | None = None
        self._rejected: frozenset[str] | None = None
        self._neighbours = neighbours

    def write_candidate(
        self,
        candidate: CandidateMemory,
        occurred_at: datetime,
        source: str,
        session: str | None = None,
        chunk_files: Sequence[str] = (),
    ) -> str | None:
        """Write one extracted memory, unreviewed, with its provenance; returns its id, the id
        of the memory it duplicates, or None when it was dropped or a person rejected it."""
        if self._head is None:
            self._head, self._rejected = self._head_of(), self._rejected_of()
        provenance = Provenance(
            commit=self._head.commit,
            branch=self._head.branch,
            session=session,
            files=memory_files(chunk_files, f"{candidate.subject}\n{candidate.body}"),
            unreviewed=True,
        )
        try:
            draft = make_draft(
                subject=candidate.subject,
                body=candidate.body,
                keywords=list(candidate.keywords) or None,
                applies_to=candidate.applies_to,
                occurred_at=occurred_at,
                source=source,
                provenance=provenance,
            )
        except InvalidInput as exc:
            self.tally.dropped += 1
            log.info("extracted memory dropped: %s", exc)
            return None
        digest = content_hash(draft.body)
        if digest in (self._rejected or ()):
            self.tally.rejected += 1
            log.info("previously rejected memory not written again: %s", draft.subject)
            return None
        hashes, texts = self._known_memories()
        if digest not in hashes:
            text = memory_text(draft.subject, draft.body)
            match = is_near_duplicate(text, texts, self.threshold) or self._paraphrase(text, texts)
            if candidate.supersedes is not None and match == candidate.supersedes.id:
                match = None  # a correction of that memory, in its words: written, and marks it
            if match is not None:
                self.tally.near_duplicates += 1
                log.info("near-duplicate of %s skipped: %s", match, draft.subject)
                return match
        created = self.memories.create(draft)
        memory = created.memory
        if created.created:
            self.tally.created_ids.append(memory.id)
            hashes.add(memory.content_hash)
            texts[memory.id] = memory_text(memory.subject, memory.body)
        else:
            self.tally.duplicates += 1
        if candidate.supersedes is not None:  # also for an exact duplicate: a rerun after a crash
            self.supersede(candidate.supersedes, memory.id)
        return memory.id

    def supersede(self, replaced: Supersedes, by: str) -> None:
        """Mark the memory the extractor said `by` replaces (never deleted: a person decides in
        `review`). One already superseded, gone or unparsable is left as it is."""
        if replaced.id == by:
            return
        reason = " ".join(redact_for_storage(replaced.reason).text.split())
        reason = reason[:MAX_PROVENANCE_CHARS] or "superseded by a newer memory"

        def mark(current: Memory) -> Memory:
            if current.superseded_by:
                return current
            return replace(current, superseded_by=by, superseded_reason=reason)

        try:
            marked = self.memories.update(replaced.id, mark)
        except (MemoryNotFound, InvalidMemoryFile, InvalidInput) as exc:
            log.info("superseded memory %s not marked: %s", replaced.id, exc)
            return
        if marked.superseded_by == by:
            self.tally.superseded += 1

    def _paraphrase(self, text: str, texts: dict[str, str]) -> str | None:
        if self._neighbours is None or self.threshold >= 1.0:  # 1.0 turns the checks off
            return None
        try:
            nearest = self._neighbours(text)
        except RecallError as exc:  # no embedder, no index yet: the text check alone
            log.info("paraphrase check skipped: %s", exc)
            return None
        return paraphrase_of(text, nearest, texts)

    def _known_memories(self) -> tuple[set[str], dict[str, str]]:
        if self._known is None:
            memories = self.memories.scan().memories
            self._known = (
                {m.content_hash for m in memories},
                {m.id: memory_text(m.subject, m.body) for m in memories},
            )
        return self._known

    def write_thinking(
        self, turns: Sequence[Turn], after: int, upto: int, source: str
    ) -> list[str]:
        """Thinking memories of the assistant turns ending in (after, upto]; no LLM call."""
        if not self.thinking_enabled:
            return []
        ids: list[str] = []
        # A turn's text comes cleaned from the parser; its thinking is cleaned here, before
        # thinking_entries folds and clips it: a secret cut at a length limit is no longer
        # recognisable when the memory is written.
        shown = [
            replace(t, thinking=redact_for_storage(t.thinking).text)
            if t.thinking and t.end_offset > after
            else t
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
                    source=source,
                )
            except InvalidInput as exc:  # e.g. a body over the 1 MB limit
                self.tally.dropped += 1
                log.info("thinking memory dropped: %s", exc)
                continue
            created = self.thinking.create(draft)
            if created.created:
                self.tally.thinking_created += 1
            ids.append(created.memory.id)
        return ids
