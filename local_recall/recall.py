"""`Recall`: the library facade. The CLI, MCP server, hooks and daemon are thin adapters over it.

from local_recall import Recall
recall = Recall.open("/path/to/repo")
memory = recall.add("Use filelock for cross-process dedup", "Because ...", scope="global")
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from local_recall.errors import InvalidMemoryFile
from local_recall.logs import configure_logging
from local_recall.memory.drafts import make_draft, redact_edit, redacted_subject, stored_scope
from local_recall.memory.model import (
    Memory,
    new_memory_id,
    parse_memory_id,
    parse_scope,
    validate_body,
    validate_keywords,
)
from local_recall.memory.store import Created, MemoryStore, Scan, select_memories, utc_now
from local_recall.repo.config import Config, load_config, render_default_config
from local_recall.repo.files import write_text_atomic
from local_recall.repo.layout import Layout, claude_config_dir, discover_root, ensure_gitignore
from local_recall.search.index import IndexReport
from local_recall.search.searcher import (
    EmbedderFactory,
    Searcher,
    SearchHit,
    SearchStatus,
    configured_embedder,
)


@dataclass(frozen=True, slots=True)
class Settings:
    """The one seam for isolation: everything that touches the user's machine comes from here,
    so a test builds one Settings instead of patching globals."""

    root: Path
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    clock: Callable[[], datetime] = utc_now
    new_id: Callable[[], str] = new_memory_id
    # Makes the embedder from the config; tests pass one that returns a shared instance.
    embedder_factory: EmbedderFactory = configured_embedder

    @property
    def claude_config_dir(self) -> Path:
        return claude_config_dir(self.environ)

    @classmethod
    def discover(
        cls,
        root: str | Path | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> Settings:
        env = dict(os.environ) if environ is None else dict(environ)
        found = discover_root(None if root is None else str(root), env, cwd or Path.cwd())
        return cls(root=found, environ=env)


@dataclass(frozen=True, slots=True)
class InitReport:
    root: Path
    created_dirs: tuple[Path, ...]
    wrote_config: bool
    gitignore_added: tuple[str, ...]


class Recall:
    def __init__(self, settings: Settings, config: Config) -> None:
        self.settings = settings
        self.config = config
        self.layout = Layout(settings.root)
        self.memories = MemoryStore(
            self.layout.episodic_dir, self.layout.state_dir, kind="episodic", new_id=settings.new_id
        )
        self.thinking = MemoryStore(
            self.layout.thinking_dir, self.layout.state_dir, kind="thinking", new_id=settings.new_id
        )
        self._searcher: Searcher | None = None

    @classmethod
    def open(cls, root: str | Path | None = None, *, settings: Settings | None = None) -> Recall:
        """Open the repo at `root` (default: discovered from the cwd). Raises ConfigError."""
        settings = settings or Settings.discover(root)
        layout = Layout(settings.root)
        config = load_config(layout.config_path, settings.environ)
        configure_logging(layout, config.get("log", "level"))
        return cls(settings, config)

    @property
    def root(self) -> Path:
        return self.settings.root

    # --- setup --------------------------------------------------------------------------------

    def init(self) -> InitReport:
        """Create local-recall/ with its config and .gitignore. Idempotent; never overwrites."""
        created = []
        for folder in (self.layout.recall_dir, self.layout.episodic_dir):
            if not folder.is_dir():
                folder.mkdir(parents=True, exist_ok=True)
                created.append(folder)
        wrote_config = False
        if not self.layout.config_path.exists():
            write_text_atomic(self.layout.config_path, render_default_config())
            wrote_config = True
        added = ensure_gitignore(self.layout)
        configure_logging(self.layout, self.config.get("log", "level"))
        return InitReport(self.root, tuple(created), wrote_config, tuple(added))

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
    ) -> Created:
        """Validate, redact and write a memory; the same body again returns the existing one."""
        draft = make_draft(
            subject=subject,
            body=body,
            keywords=keywords,
            applies_to=scope,
            occurred_at=occurred_at or self.settings.clock(),
            source=source,
        )
        return self.memories.create(draft)

    def add(
        self,
        subject: str,
        body: str,
        *,
        keywords: Sequence[str] | None = None,
        scope: str = "global",
        occurred_at: datetime | None = None,
        source: str | None = "api",
    ) -> Memory:
        return self.save(
            subject, body, keywords=keywords, scope=scope, occurred_at=occurred_at, source=source
        ).memory

    def get(self, memory_id: str) -> Memory:
        memory_id = parse_memory_id(memory_id)
        return self.memories.get(memory_id)

    def list(
        self,
        *,
        scope: str | None = None,
        include_global: bool = True,
        keyword: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        newest_first: bool = False,
        limit: int | None = None,
    ) -> list[Memory]:
        return select_memories(
            self.memories.scan().memories,
            scope=None if scope is None else parse_scope(scope),
            include_global=include_global,
            keyword=keyword,
            since=since,
            until=until,
            newest_first=newest_first,
            limit=limit,
        )

    def update(
        self,
        memory_id: str,
        *,
        subject: str | None = None,
        body: str | None = None,
        keywords: Sequence[str] | None = None,
        scope: str | None = None,
    ) -> Memory:
        memory_id = parse_memory_id(memory_id)
        changes: dict[str, object] = {}
        if subject is not None:
            changes["subject"] = redacted_subject(subject)
        if body is not None:
            changes["body"] = validate_body(redact_edit(validate_body(body)))
        if keywords is not None:
            changes["keywords"] = validate_keywords([redact_edit(k) for k in keywords])
        if scope is not None:
            changes["applies_to"] = stored_scope(scope)

        def apply(current: Memory) -> Memory:
            return replace(current, **changes)  # type: ignore[arg-type]

        return self.memories.update(memory_id, apply)

    def delete(self, memory_id: str) -> Memory:
        """Delete one memory and return what it was. An unparsable file can still be deleted
        by its id: the person asked for it explicitly."""
        memory_id = parse_memory_id(memory_id)
        try:
            memory: Memory | None = self.memories.get(memory_id)
        except InvalidMemoryFile:
            memory = None
        path = self.memories.delete(memory_id)
        return memory or Memory(
            id=memory_id,
            subject="(unparsable file)",
            body="",
            keywords=(),
            applies_to="global",
            occurred_at=self.settings.clock(),
            content_hash="",
            path=path,
        )

    def scan(self) -> Scan:
        return self.memories.scan()

    def problems(self) -> tuple[InvalidMemoryFile, ...]:
        return self.memories.scan().problems + self.thinking.scan().problems

    # --- search (local_recall/search.py, docs/search.md) ----------------------------------------

    @property
    def searcher(self) -> Searcher:
        if self._searcher is None:
            self._searcher = Searcher(
                self.layout,
                self.config,
                (self.memories, self.thinking),
                self.settings.embedder_factory,
                self.settings.clock,
            )
        return self._searcher

    def search(
        self,
        query: str,
        *,
        limit: int | None = None,
        scope: str | None = None,
        mode: str = "hybrid",
        min_score: float | None = None,
        include_global: bool = True,
        since: datetime | None = None,
        until: datetime | None = None,
        kind: str = "episodic",
        sync: bool = True,
        use_index: bool = True,
    ) -> builtins.list[SearchHit]:
        """Memories that answer `query`, best first (score 0..1). `sync=True` first brings the
        index up to date with the files (cheap when nothing changed). `use_index=False` answers
        from the files alone (word match + fuzzy; no LanceDB, no model: fast in a new process)."""
        return self.searcher.search(
            query,
            limit=limit,
            scope=scope,
            mode=mode,
            min_score=min_score,
            include_global=include_global,
            since=since,
            until=until,
            kind=kind,
            sync=sync,
            use_index=use_index,
        )

    def sync_index(self, *, rebuild: bool = False, progress: bool = False) -> IndexReport:
        """Embed new or changed memories, drop deleted ones; `rebuild` starts from scratch."""
        return self.searcher.sync(rebuild=rebuild, progress=progress)

    def search_status(self) -> SearchStatus:
        """Why the last search or sync ran degraded (fallback None: it did not)."""
        return self.searcher.status()
