"""`Recall`: the library facade. The CLI, MCP server, hooks and daemon are thin adapters over it.

from local_recall import Recall
recall = Recall.open("/path/to/repo")
memory = recall.add("Use filelock for cross-process dedup", "Because ...", scope="global")
"""

from __future__ import annotations

__all__ = ["InitReport", "Recall", "SearchQuery", "SearchResult", "Settings"]

import builtins
import functools
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypedDict, Unpack

from local_recall.errors import InvalidMemoryFile, StorageError
from local_recall.lifecycle import review
from local_recall.lifecycle.consolidation import Proposal
from local_recall.lifecycle.provenance import current_head
from local_recall.lifecycle.rejections import FILENAME as REJECTED_FILENAME
from local_recall.lifecycle.service import Applied, Lifecycle
from local_recall.lifecycle.setup import InitReport, init_repository
from local_recall.lifecycle.snapshot import Snapshot
from local_recall.lifecycle.staleness import Stale
from local_recall.memory.drafts import edit, make_draft
from local_recall.memory.id_prefix import resolve_id
from local_recall.memory.model import Memory, parse_scope
from local_recall.memory.select import MemoryFilters, select_memories
from local_recall.memory.store import Created, Deleted, MemoryStore, Scan
from local_recall.repo.config import Config, load_config
from local_recall.repo.git_added import file_time
from local_recall.repo.layout import claude_config_dir, ensure_gitignore, recall_dir_problem
from local_recall.search import paraphrases
from local_recall.search.index.sync import IndexReport, ProgressCallback
from local_recall.search.paraphrases import nearest_memories
from local_recall.search.query import SearchHit, SearchQuery, SearchResult
from local_recall.search.searcher import Searcher
from local_recall.search.status import SearchStatus
from local_recall.settings import Settings

if TYPE_CHECKING:
    from collections.abc import Callable

    from local_recall.capture.extraction.prompt import Extractor
    from local_recall.capture.pipeline import PassInputs, PassProgress
    from local_recall.capture.report import PassReport
    from local_recall.capture.sources import SessionSource
    from local_recall.capture.transcripts.model import TranscriptFile
    from local_recall.org.service import OrgService


class SaveOptions(TypedDict, total=False):
    """The keyword arguments of `Recall.save` (`Recall.add` passes them through)."""

    keywords: Sequence[str] | None
    scope: str
    occurred_at: datetime | None
    source: str | None
    reviewed: bool
    unless_paraphrase: bool


class PassOptions(TypedDict, total=False):
    """The keyword arguments of `Recall.sync_transcripts` (`capture.pipeline.run_pass`'s)."""

    extractor: Extractor | None
    progress: PassProgress | None
    transcripts: Sequence[TranscriptFile] | None
    only_path: Path | None
    should_stop: Callable[[], bool] | None
    lock_timeout: float
    ended: Sequence[Path]
    source: SessionSource | None


class Recall:
    def __init__(self, settings: Settings, config: Config) -> None:
        self.settings = settings
        self.config = config
        self.layout = settings.layout  # derived files in a user cache if read-only here
        state, new_id = self.layout.state_dir, settings.new_id
        at = functools.partial(file_time, environ=settings.environ)  # no occurred_at: git's time
        self.memories = MemoryStore(self.layout.episodic_dir, state, new_id=new_id, written_at=at)
        self.thinking = MemoryStore(
            self.layout.thinking_dir, state, kind="thinking", new_id=new_id, written_at=at
        )
        # One file per agent session, named by its id (capture/summaries.py)
        self.summaries = MemoryStore(
            self.layout.summaries_dir, state, kind="session", new_id=new_id
        )
        self.lifecycle = Lifecycle(
            self.layout, self.memories, config.lifecycle, settings.environ, settings.clock
        )

    @classmethod
    def open(cls, root: str | Path | None = None, *, settings: Settings | None = None) -> Recall:
        """Open the repo at `root` (default: discovered from the cwd). Raises ConfigError."""
        settings = settings or Settings.discover(root)
        layout = settings.layout
        problem = recall_dir_problem(layout)
        if problem is not None:
            raise StorageError(problem)
        config = load_config(
            layout.config_path, settings.environ, user_path=settings.user_config_path
        )
        return cls(settings, config)

    @property
    def root(self) -> Path:
        return self.settings.root

    # --- setup --------------------------------------------------------------------------------

    def init(self) -> InitReport:
        """Create local-recall/ with its config, .gitignore and .gitattributes (the union merge
        of rejected-hashes.txt). Idempotent; never overwrites."""
        return init_repository(self.layout, self.config)

    # --- memories -----------------------------------------------------------------------------

    def save(
        self,
        subject: str,
        body: str,
        *,
        keywords: Sequence[str] | None = None,
        scope: str = "global",
        occurred_at: datetime | None = None,
        source: str | None = "api",
        reviewed: bool = True,
        unless_paraphrase: bool = False,
    ) -> Created:
        """Validate, redact and write a memory; the same body again returns the existing one,
        and so does the same fact in other words if `unless_paraphrase` (`paraphrase=True`).
        It records the commit and branch checked out (one `git` call). `reviewed=False` (an
        agent's save through MCP) writes it `review: unreviewed`."""
        head = current_head(self.root, self.settings.environ)
        draft = make_draft(
            subject=subject,
            body=body,
            keywords=keywords,
            applies_to=scope,
            occurred_at=occurred_at or self.settings.clock(),
            source=source,
            provenance=replace(head, unreviewed=not reviewed),
        )

        def paraphrase(scanned: Sequence[Memory]) -> Memory | None:  # judged on the redacted text
            return paraphrases.paraphrase_in(self.searcher, self.memories, draft, scanned)

        # decided outside the store's lock, on the memories `create` scans
        return self.memories.create(draft, paraphrase_of=paraphrase if unless_paraphrase else None)

    def add(self, subject: str, body: str, **options: Unpack[SaveOptions]) -> Memory:
        """`save`, returning only the memory (new or the existing one)."""
        return self.save(subject, body, **options).memory

    def get(self, memory_id: str) -> Memory:
        return self.memories.get(_resolve(self.memories, memory_id))

    def list(self, **filters: Unpack[MemoryFilters]) -> list[Memory]:
        """`select_memories` over the store; a given `scope` is checked first (InvalidInput)."""
        scope = filters.get("scope")
        if scope is not None:
            filters["scope"] = parse_scope(scope)
            filters.setdefault("moved", self.lifecycle.moves())  # scopes follow renames
        return select_memories(self.memories.scan().memories, **filters)

    def update(
        self,
        memory_id: str,
        *,
        subject: str | None = None,
        body: str | None = None,
        keywords: Sequence[str] | None = None,
        scope: str | None = None,
    ) -> Memory:
        memory_id = _resolve(self.memories, memory_id)
        return self.memories.update(memory_id, edit(subject, body, keywords, scope))

    def delete(self, memory_id: str) -> Memory:
        """Delete one memory and return what it was (`forget` also says which files went)."""
        return self.forget(memory_id).memory

    def forget(self, memory_id: str) -> Deleted:
        """Delete every file claiming the id: `<id>.md` and the id spelled otherwise (never read,
        but left behind they stay in the tree). An unparsable file too: the person asked."""
        memory_id = _resolve(self.memories, memory_id)
        try:
            memory: Memory | None = self.memories.get(memory_id)
        except InvalidMemoryFile:
            memory = None
        paths = self.memories.delete(memory_id)
        return Deleted(memory or _unparsable(memory_id, self.settings.clock(), paths[0]), paths)

    def duplicates(self, memory_id: str) -> tuple[Path, ...]:
        """Files claiming this id besides `<id>.md` (not read; `update` refuses while any do)."""
        canonical = self.memories.path_of(memory_id)
        return tuple(p for p in self.memories.claimants(memory_id) if p != canonical)

    def scan(self) -> Scan:
        return self.memories.scan()

    # --- review (lifecycle/review.py, docs/team.md#review) ------------------------------------

    @property
    def rejected_path(self) -> Path:
        return self.layout.recall_dir / REJECTED_FILENAME

    def unreviewed(self) -> builtins.list[Memory]:
        """Memories no person has reviewed yet (`review: unreviewed`), oldest first."""
        return review.unreviewed(self.memories.scan().memories)

    def accept(self, ids: Sequence[str]) -> builtins.list[Memory]:
        """Mark memories reviewed (the `review` line is removed from each file)."""
        return review.accept(self.memories, [_resolve(self.memories, i) for i in ids])

    def reject(self, ids: Sequence[str]) -> builtins.list[Memory]:
        """Delete memories (any, reviewed or not) and remember their content hashes in
        rejected-hashes.txt, so no pipeline writes them again."""
        ids = [_resolve(self.memories, i) for i in ids]
        return review.reject(self.memories, ids, self.rejected_path, self.settings.clock().date())

    def problems(self) -> tuple[InvalidMemoryFile, ...]:
        stores = (self.memories, self.thinking, self.summaries)  # every file hooks may read
        return tuple(problem for store in stores for problem in store.scan().problems)

    # --- search (local_recall/search/, docs/search.md) ------------------------------------------

    @functools.cached_property
    def searcher(self) -> Searcher:
        stores, settings = (self.memories, self.thinking), self.settings
        embedder, clock = settings.make_embedder, settings.clock
        searcher = Searcher(self.layout, self.config, stores, embedder, clock)
        searcher.lifecycle, searcher.moves = self.lifecycle.life_of, self.lifecycle.moves
        return searcher

    def query(
        self,
        query: SearchQuery,
        *,
        sync: bool = True,
        use_index: bool = True,
        org: bool | Literal["live", "mirror"] = False,  # True: "auto" (docs/org.md)
    ) -> SearchResult:
        """The hits that answer `query`, best first (score 0..1), and why the search ran degraded.
        `sync`: update the index first; `use_index=False`: the files alone (no LanceDB, no
        model); `org`: the org index too (True: its local copy if pulled; docs/org.md)."""
        if not org:
            return self.searcher.run(query, sync=sync, use_index=use_index)
        local = lambda: self.searcher.run(query, sync=sync, use_index=use_index)  # noqa: E731
        limit = query.limit or self.config.search.default_limit
        return self.org.search(query, local, limit=limit, source="auto" if org is True else org)

    @functools.cached_property
    def org(self) -> OrgService:
        return org_service(self)

    def search(
        self,
        query: str | SearchQuery,
        *,
        limit: int | None = None,
        sync: bool = True,
        use_index: bool = True,
    ) -> builtins.list[SearchHit]:
        """`query`'s hits only: a SearchQuery, or just its text; `limit` replaces the query's."""
        wanted = SearchQuery(query) if isinstance(query, str) else query
        if limit is not None:
            wanted = replace(wanted, limit=limit)
        return builtins.list(self.query(wanted, sync=sync, use_index=use_index).hits)

    def sync_index(
        self, *, rebuild: bool = False, progress: ProgressCallback | None = None
    ) -> IndexReport:
        """Embed new or changed memories, drop deleted ones; `rebuild` starts from scratch.
        `progress(done, total)` is called as memories are embedded (the CLI draws a bar)."""
        return self.searcher.sync(rebuild=rebuild, progress=progress)

    def search_status(self) -> SearchStatus:
        """Why the last search or sync ran degraded (None: it did not), as recorded for doctor."""
        return self.searcher.status()

    # --- capture (local_recall/capture/pipeline.py, docs/pipeline.md) -------------------------

    def sync_transcripts(
        self, *, environ: Mapping[str, str] | None = None, **options: Unpack[PassOptions]
    ) -> PassReport:
        """One extraction pass (`capture.pipeline.run_pass` documents the options): new turns
        of this repo's agent sessions become memories, then the index is synced. Raises
        ExtractorUnavailable when the extractor cannot run, StorageError on a failed write."""
        return _run_passes(self, environ, options)

    def session_summaries(
        self, *, branch: str | None = None, limit: int | None = None
    ) -> builtins.list[Memory]:
        """Session summaries (one per Claude Code session), newest first; `branch`: only
        those written on that branch."""
        found = [m for m in self.summaries.scan().memories if branch in (None, m.branch)]
        return select_memories(found, newest_first=True, limit=limit)

    # --- lifecycle (local_recall/lifecycle/service.py, docs/team.md) ---------------------------

    def lifecycle_snapshot(self, refresh: bool = False) -> Snapshot:
        """Stale and unmerged facts at HEAD: the saved snapshot if current, else computed."""
        return self.lifecycle.snapshot(refresh=refresh)

    def stale_memories(self, refresh: bool = False) -> builtins.list[tuple[Memory, Stale]]:
        return self.lifecycle.stale(refresh=refresh)

    def mark_still_true(self, memory_id: str) -> Memory:
        """A stale memory still holds: re-anchored at HEAD (its `commit` rewritten)."""
        return self.lifecycle.mark_still_true(_resolve(self.memories, memory_id))

    def consolidation_plan(self) -> builtins.list[Proposal]:
        """Groups of near-duplicates (embedding neighbours + rapidfuzz), each with its proposal."""
        self.sync_index()
        return self.lifecycle.plan(*self.searcher.index.vectors("episodic"))

    def apply_consolidation(self, proposals: Sequence[Proposal]) -> Applied:
        """Merge each group into its kept memory, delete the rest, remember their hashes."""
        return self.lifecycle.apply(proposals)


def _unparsable(memory_id: str, now: datetime, path: Path) -> Memory:
    """What `forget` reports for a file it deleted without being able to read it."""
    return Memory(
        id=memory_id,
        subject="(unparsable file)",
        body="",
        keywords=(),
        applies_to="global",
        occurred_at=now,
        content_hash="",
        path=path,
    )


def org_service(recall: Recall) -> OrgService:
    """The org index as seen from `recall` (imported on first use: the hooks never pay)."""
    from local_recall.org.service import OrgService

    return OrgService(
        recall.root,
        recall.config,
        recall.settings.environ,
        memories=lambda: recall.memories.scan().memories,
        embedder=lambda: recall.searcher.embedder,
        state_dir=recall.layout.state_dir,
        clock=recall.settings.clock,
    )


def _run_passes(
    recall: Recall, environ: Mapping[str, str] | None, options: PassOptions
) -> PassReport:
    """`run_pass` over Claude Code's sessions, then each opted-in agent's: one report."""
    from local_recall.capture.pipeline import run_pass  # here: the hooks never run a pass
    from local_recall.capture.sessions.agent_sessions import with_agent_passes

    if not recall.config.summaries.committed:
        ensure_gitignore(recall.layout, summaries_committed=False)
    inputs = pass_inputs(recall, environ)  # environ: the extractor's (default: settings')
    if any(options.get(key) is not None for key in ("source", "transcripts", "only_path")):
        return run_pass(inputs, **options)
    run_one = functools.partial(run_pass, inputs, **options)
    # Claude Code's sessions, then those of the agents opted in to (`init --agent`)
    return with_agent_passes(
        run_one(), run_one, recall.root, recall.layout.state_dir, recall.settings.environ
    )


def look_alikes(recall: Recall, ids: Sequence[str]) -> Mapping[str, str]:
    """id -> the memory it paraphrases, for `review`'s "looks like"; {} when the index fails."""
    return paraphrases.look_alikes_in(recall.searcher, recall.memories, ids)


def _resolve(store: MemoryStore, memory_id: str) -> str:
    """A full id, or a unique prefix of one of `store`'s (memory/id_prefix.py: as git)."""
    return resolve_id(memory_id, lambda: store.scan().memories)


def pass_inputs(recall: Recall, environ: Mapping[str, str] | None = None) -> PassInputs:
    """What a capture pass needs from this repository: its paths, stores and config, the
    settings' clock, environment and PATH, and three services of the facade the pass may not
    import (it sits below): the commit checked out, the rejected hashes and similar memories."""
    # Imported here: the hooks open a Recall on their cold path and never run a pass.
    from local_recall.capture import pipeline, session_signals

    def neighbours(text: str) -> builtins.list[tuple[str, float]]:
        return nearest_memories(recall.searcher.index, recall.searcher.embedder, text)

    settings, config = recall.settings, recall.config
    return pipeline.PassInputs(
        root=recall.root,
        state_dir=recall.layout.state_dir,
        claude_config_dir=claude_config_dir(environ) if environ else settings.claude_config_dir,
        memories=recall.memories,
        thinking=recall.thinking,
        sync_index=recall.sync_index,
        extraction=config.extraction,
        thinking_enabled=config.thinking.enabled,
        ollama_host=config.embedder.ollama_host,
        clock=settings.clock,
        environ=settings.environ if environ is None else environ,
        which=settings.which,
        head=lambda: current_head(recall.root, settings.environ),
        rejected_hashes=lambda: review.rejected_hashes(recall.rejected_path),
        summaries=recall.summaries if config.summaries.enabled else None,
        similar=lambda text, count: paraphrases.similar_memories(recall.searcher, text, count),
        neighbours=neighbours,
        signals=session_signals.session_signals(
            recall.layout, recall.memories, config.learning, settings.clock
        ),
    )
