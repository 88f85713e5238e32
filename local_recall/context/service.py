"""`ContextService`: what a coding agent is shown from its memory, computed from one `Recall`.

    context = ContextService(recall)                     # the daemon: warm, with the index
    context.prompt_notes(PromptAsk("why fcntl?", limit=5, min_score=0.5))
    context.session_notes(SessionAsk("startup", summaries=3, branch="main"))

The daemon serves it over its socket (daemon/query_service.py); an agent's hook with no daemon
builds one on a `Recall` of its own with `use_index=False` (hooks/flow.py): the files and the
vector cache only, never LanceDB, and hits become notes directly, with no JSON in between.
Either way the same code picks, so both paths show the same memories.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from local_recall.capture.health import read_health, warning_line
from local_recall.context.notes import Note, SummaryNote, finite
from local_recall.context.prompt import PromptAsk
from local_recall.context.session import SessionAsk, SessionNotes, pick_summaries, session_order
from local_recall.lifecycle.staleness import anchors_of
from local_recall.memory.id_prefix import PrefixLengths
from local_recall.memory.life import Life
from local_recall.memory.model import Memory
from local_recall.memory.timestamps import format_timestamp
from local_recall.search.query import SearchHit, SearchQuery, SearchResult

if TYPE_CHECKING:
    from local_recall.recall import Recall


class ContextService:
    """Session-start context, prompt context and session summaries from one Recall. Not for
    concurrent searches: the daemon serialises them (one Searcher is not thread-safe)."""

    def __init__(self, recall: Recall, *, use_index: bool = True) -> None:
        self.recall = recall
        # False: a hook's own process answers from the files and the vector cache (importing
        # lancedb would cost ~2 s of the prompt's time). It never re-indexes either way: the
        # daemon's watchers keep the index current, and a query never waits for them.
        self.use_index = use_index
        self._prefixes = PrefixLengths()

    def search(self, query: SearchQuery) -> SearchResult:
        return self.recall.query(query, sync=False, use_index=self.use_index)

    def prompt_search(self, query: SearchQuery) -> SearchResult:
        """A prompt's search: with `[org] hook = true`, the org index's local copy (`org pull`)
        too (docs/org.md). Only where the index is open (the daemon): the org copy is a
        LanceDB dataset, which a hook's own process must not import."""
        if self.use_index and self.recall.config.org.hook:
            result = self.recall.query(query, sync=False, org="mirror")
        else:
            result = self.search(query)
        return replace(
            result, hits=tuple(checked_hit(hit, self.recall.root) for hit in result.hits)
        )

    def prompt_notes(self, ask: PromptAsk) -> list[Note]:
        """The memories that may answer a prompt, best first, with their whole bodies."""
        query = SearchQuery(
            ask.query,
            limit=ask.limit,
            min_score=ask.min_score,
            prompt=True,
            at_least=min(ask.at_least, ask.limit),
        )
        notes = [hit_note(hit) for hit in self.prompt_search(query).hits]
        return self.with_id_chars(notes)

    def with_id_chars(self, notes: list[Note]) -> list[Note]:
        """Each note with its id's shortest unique prefix in this store (a pointer prints it)."""
        memories = self.recall.searcher.loaded_memories()
        chars = self._prefixes.of([n.id for n in notes if not n.repo], memories)
        return [note._replace(id_chars=chars.get(note.id, note.id_chars)) for note in notes]

    def checked(self, notes: list[Note], memories: Sequence[Memory]) -> list[Note]:
        """Each note's anchors looked at now, just before it is shown (as GitHub's Copilot
        Memory checks its citations): one `lstat` per anchor of the few notes shown, no git.
        The lifecycle snapshot knows renames and large changes but is as old as its HEAD; a
        file deleted since, or never there (a hand-written memory has no commit to judge
        from), is caught here and the note labelled stale (so it also ranks lower)."""
        root = self.recall.root
        return [
            note if note.stale else note._replace(stale=missing_anchor(memory, root))
            for note, memory in zip(notes, memories, strict=True)
        ]

    def session_notes(self, ask: SessionAsk) -> SessionNotes:
        """The index's candidates (ranked for `ask.source`) and the summaries to show first."""
        total, notes = self.index_notes(ask.source, ask.limit)
        return SessionNotes(total, notes, self.summaries(ask), self.health_warning())

    def health_warning(self) -> str:
        """One line when extraction has been failing a while (capture/health.py), else ""."""
        now = self.recall.settings.clock()
        health = read_health(self.recall.layout.state_dir, now)
        return warning_line(health, now) if health is not None else ""

    def index_notes(self, source: str, limit: int) -> tuple[int, list[Note]]:
        memories = self.recall.list()  # the store only: no index, no model
        # ranked first: only the few listed become notes with a life (~40% of a session
        # start's CPU at 5,000 memories went to notes and lives never shown)
        ranked = session_order(memories, source, newest_first)[:limit]
        lives = self.recall.lifecycle.life_of(ranked)  # the cached snapshot: no git
        shown = [memory_note(m, life) for m, life in zip(ranked, lives, strict=True)]
        return len(memories), self.checked(shown, ranked)

    def summaries(self, ask: SessionAsk) -> list[SummaryNote]:
        if ask.summaries <= 0:
            return []
        return pick_summaries(
            [summary_note(m) for m in self.recall.session_summaries()],
            source=ask.source,
            session_id=ask.session_id,
            branch=ask.branch,
            count=ask.summaries,
        )


def shown_subject(hit: SearchHit) -> str:
    """The subject a hook shows: an org hit's names its repository, so a memory of another
    repository never reads as one of this one's."""
    return hit.subject if hit.repo is None else f"[{hit.repo}] {hit.subject}"


def checked_hit(hit: SearchHit, root: Path) -> SearchHit:
    """`hit`, labelled stale when one of its anchors is missing now (`ContextService.checked`);
    an org hit's anchors are another repository's, never looked for here."""
    if hit.stale or hit.repo is not None:
        return hit
    reason = missing_anchor(hit.memory, root)
    return replace(hit, life=replace(hit.life or Life(), stale=reason)) if reason else hit


def missing_anchor(memory: Memory, root: Path) -> str:
    """Why the memory is stale now: the first of its anchors missing from the working tree
    (`lstat` only: a symlink counts as there, nothing is followed), else ""."""
    for anchor in anchors_of(memory.applies_to, memory.files):
        if not os.path.lexists(root / anchor):
            return f"{anchor} does not exist (checked now)"
    return ""


def hit_note(hit: SearchHit) -> Note:
    """A search hit as a Note: what a prompt's selection reads of it (its subject as shown,
    its score to 4 places, its life and dispute)."""
    memory = hit.memory
    return Note(
        id=memory.id,
        subject=shown_subject(hit),
        occurred_at=format_timestamp(memory.occurred_at),
        applies_to=memory.applies_to or "global",
        score=finite(round(hit.score, 4)),
        body=memory.body,
        stale=hit.stale or "",
        branch=hit.branch or "",
        unreviewed=memory.unreviewed,
        superseded_by=memory.superseded_by or "",
        repo=hit.repo or "",
        disputed=memory.disputed.reason if memory.disputed else "",
    )


def newest_first(memory: Memory) -> tuple[int, str]:
    """A memory's place in rank_for_session's order, as its note's (`format_timestamp` of its
    time, then its id) without formatting: the whole second of its instant, which orders as
    that text does (a naive time is local time to both)."""
    return math.floor(memory.occurred_at.timestamp()), memory.id


def memory_note(memory: Memory, life: Life | None = None) -> Note:
    """A listed Memory as a Note (no body: the index shows subjects only), flagged stale or
    unmerged from the lifecycle cache."""
    return Note(
        id=memory.id,
        subject=memory.subject,
        occurred_at=format_timestamp(memory.occurred_at),
        applies_to=memory.applies_to,
        stale=(life.stale or "") if life else "",
        branch=(life.branch or "") if life else "",
        unreviewed=memory.unreviewed,
        superseded_by=memory.superseded_by or "",
        disputed=memory.disputed.reason if memory.disputed else "",
    )


def summary_note(memory: Memory) -> SummaryNote:
    """A session summary as the SessionStart hook shows it."""
    return SummaryNote(
        id=memory.id,
        subject=memory.subject,
        occurred_at=format_timestamp(memory.occurred_at),
        body=memory.body,
        branch=memory.branch or "",
        commit=memory.commit or "",
    )
