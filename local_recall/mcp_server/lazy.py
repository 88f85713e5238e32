"""The MCP server's Recall, opened on first use, the index warm-up after the handshake, and
the full sync that settles the background once saves have gone quiet."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from typing import TYPE_CHECKING, Final, NamedTuple

from local_recall.errors import StorageError
from local_recall.mcp_server.folder_events import FolderEvents
from local_recall.memory.store_files import list_memory_files, settled_stamp
from local_recall.repo.files import StatKey, stat_key

if TYPE_CHECKING:
    from local_recall.context.notes import Note
    from local_recall.context.prompt import PromptAsk
    from local_recall.context.service import ContextService
    from local_recall.recall import Recall
    from local_recall.settings import Settings

log = logging.getLogger(__name__)
WARM_UP_NICENESS: Final = 10
# An agent often saves a few memories in a row: the full sync waits until they stop.
SETTLE_AFTER_SECONDS: Final = 3.0
# A prompt does not wait for a sync holding the index: the daemon answers it instead.
PROMPT_LOCK_WAIT_SECONDS: Final = 0.05
KINDS: Final = ("episodic", "thinking")  # the stores: memory/store.py names their catalogs


class LazyRecall:
    """Opens `Recall` on first use and warms the index in a background thread, so neither
    delays the MCP handshake. Tool calls run in worker threads: the open is guarded by a lock,
    and index work (search, sync) is serialised by another."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._recall: Recall | None = None
        self._open_lock = threading.Lock()
        self.index_lock = threading.Lock()
        self._warm_up: threading.Thread | None = None
        self._settler: threading.Thread | None = None
        self._settle_due = 0.0  # monotonic time of the next full sync; 0: none asked
        # Answering prompts here (warm_notes): set once the warm-up has synced and searched.
        self._context: ContextService | None = None
        self._view: FilesView | None = None  # what the files looked like then
        self._events: FolderEvents | None = None  # inotify on the memory folders, where it is
        self._watched: tuple[StatKey | None, ...] = ()  # those folders' keys when watched

    def get(self) -> Recall:
        """The repository's Recall; StorageError while it has no local-recall/ folder."""
        if not self.initialised():
            raise StorageError(
                f"{self.settings.root} has no local-recall/ folder: run `local-recall init` "
                "there to give it a memory (nothing is written until then)"
            )
        with self._open_lock:
            if self._recall is None:
                from local_recall.logs import log_to_repo
                from local_recall.recall import Recall

                self._recall = Recall.open(settings=self.settings)
                if self._recall.config.hooks.mcp_answers:  # prompts answered here: many
                    self._recall.searcher.keep_keywords()  # searches, no LanceDB query each
                log_to_repo(self._recall)
            return self._recall

    def initialised(self) -> bool:
        """Whether the repository has local-recall/. A server started where there is none (a
        plugin's, in every session) writes nothing there: no index, no log, no daemon."""
        return self.settings.layout.recall_dir.is_dir()

    def start_warm_up(self) -> None:
        with self._open_lock:
            if self._warm_up is not None:
                return
            self._warm_up = threading.Thread(
                target=self._warm, name="local-recall-warm-up", daemon=True
            )
        self._warm_up.start()

    def settle_soon(self) -> None:
        """After a save: a full sync (the background recomputed exactly, search/background.py)
        in a low-priority thread, SETTLE_AFTER_SECONDS after the last save, so that neither
        the save nor a search right after it waits ~1 s for ~100 probe searches. Not where a
        daemon runs then: its watcher makes that sync."""
        with self._open_lock:
            self._settle_due = time.monotonic() + SETTLE_AFTER_SECONDS
            if self._settler is not None:
                return  # the running settler sees the new due time
            self._settler = threading.Thread(
                target=self._settle, name="local-recall-settle", daemon=True
            )
            settler = self._settler
        settler.start()

    def _settle(self) -> None:
        _lower_priority()
        while True:
            with self._open_lock:
                wait = self._settle_due - time.monotonic()
                if self._settle_due == 0.0:
                    self._settler = None  # under the lock: a later save starts a new one
                    return
                if wait <= 0:
                    self._settle_due = 0.0
            if wait > 0:
                time.sleep(wait)
                continue
            daemon = self._watching_daemon()
            if daemon is None:
                self._sync("settle")
            else:
                log.info("MCP settle: left to the daemon (pid %s), whose watcher syncs", daemon)

    def _watching_daemon(self) -> int | None:
        """The pid of the daemon running on this repository, if one is (0: it is starting).
        Its watcher syncs the index after every change to the memory files, a save's
        included: a settle here would be a second full sync of the same change, the two
        serialised by the index's lock."""
        from local_recall.daemon.control import lock_holder

        return lock_holder(self.settings.layout)

    def warm_notes(self, ask: PromptAsk) -> list[Note] | None:
        """A prompt's notes from this process's warm Recall, as the daemon would answer them
        (the same ContextService over the same files and state); None while there is no warm
        Recall (the warm-up has not finished), while a sync holds it, or once config.toml has
        changed (the daemon, which reloads it, answers then)."""
        context = self._context
        if context is None or not self.index_lock.acquire(timeout=PROMPT_LOCK_WAIT_SECONDS):
            return None
        try:
            held, recall = self._view, context.recall
            if held is None or stat_key(recall.layout.config_path) != held.config:
                return None
            if not self._current(recall, held):
                # saved, edited, forgotten, pulled, checked out or synced since: read the
                # catalog again (stat-keyed: the changed files only); the vector cache is
                # re-read by its own stamp
                view = self._look(recall)  # before the read: a change during it is seen
                recall.searcher.load_memories()
                self._view = view
            return context.prompt_notes(ask)
        finally:
            self.index_lock.release()

    def _warm(self) -> None:
        """Sync the index, then (with `[hooks] mcp_answers`) search once — which loads the
        embedder — and answer prompts here from then on (`warm_notes`)."""
        _lower_priority()
        if not self.initialised():
            return
        try:
            recall = self.get()
            with self.index_lock:
                log.info("MCP warm-up: index ready (%s)", recall.sync_index())
                if not recall.config.hooks.mcp_answers:
                    return
                from local_recall.context.service import ContextService
                from local_recall.search.query import SearchQuery

                view = self._look(recall)  # before the search: a change during it is seen
                recall.query(SearchQuery("warm up the model"), sync=False)
                self._view, self._context = view, ContextService(recall)
            log.info("MCP warm-up: prompts answered here from now on")
        except Exception:  # an optimisation: a failure shows again at the next call
            log.warning("MCP warm-up failed", exc_info=True)

    def _current(self, recall: Recall, held: FilesView) -> bool:
        """Whether the files are as `held` saw them: with inotify, no event since and the
        same catalogs and vector cache (a few stats); else a stat of every memory file."""
        events = self._events
        if events is None:
            return held.current(recall)
        return not events.changed() and _head(recall) == held.head

    def _look(self, recall: Recall) -> FilesView:
        """The files as they are now, watched from now on where inotify is (re-watched when a
        memory folder was made or replaced since)."""
        layout = recall.layout
        folders = (stat_key(layout.episodic_dir), stat_key(layout.thinking_dir))
        if self._events is None or folders != self._watched:
            if self._events is not None:
                self._events.close()
            self._events = FolderEvents.open([layout.episodic_dir, layout.thinking_dir])
            self._watched = folders
        return files_view(recall, each_file=self._events is None)

    def _sync(self, why: str) -> None:
        if not self.initialised():
            return
        try:
            recall = self.get()
            with self.index_lock:
                report = recall.sync_index()
            log.info("MCP %s: index ready (%s)", why, report)
        except Exception:  # an optimisation: a failure shows again at the next call
            log.warning("MCP %s failed", why, exc_info=True)


def _lower_priority() -> None:
    # Below the prompt hook's calls (claude_code/hooks/mcp_tool.py) and Claude Code itself:
    # a prompt typed while the index syncs must not wait for it. Linux sets a thread's
    # niceness by its id (and the threads it starts inherit it); elsewhere a no-op.
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WARM_UP_NICENESS)


class FilesView(NamedTuple):
    """What the files a prompt's answer depends on looked like when they were last read:
    config.toml (a change there is left to the daemon, which reloads it), the memory folders
    (a file added, removed or renamed in moves their mtime: a save, a `git checkout`), each
    memory file (an editor that writes in place keeps the inode and the folder's mtime), the
    stores' catalogs (any process's scan that saw a hand edit appends to them) and the vector
    cache (every sync that embedded something appends to it). Where inotify is, it tells of a
    change to the memory folders (mcp_server/folder_events.py); elsewhere a stat of each memory
    file does, on every prompt (benchmarks/README.md has the costs of both)."""

    config: StatKey | None
    head: tuple[object, ...]  # the folders, the catalogs, the vector cache
    paths: tuple[str, ...]  # the memory files listed then
    files: tuple[StatKey | None, ...]  # theirs, in that order
    settled: bool  # False: something changed too close to the look to trust an equal stamp

    def current(self, recall: Recall) -> bool:
        """Whether nothing of it has moved since (never while it was not settled)."""
        if not self.settled:
            return False
        now = time.time_ns()
        return _head(recall) == self.head and _file_keys(self.paths, now) == self.files


def files_view(recall: Recall, *, each_file: bool = True) -> FilesView:
    """The files as they are now: the folders' stamps before their listing, as a scan takes
    them (memory/store.py), so a file added meanwhile moves a stamp. `each_file` False: the
    memory files are not listed (inotify watches them)."""
    now = time.time_ns()
    head = _head(recall)
    layout = recall.layout
    paths = tuple(
        os.path.join(folder, name)
        for folder in (layout.episodic_dir, layout.thinking_dir)
        for name, _key, unread in list_memory_files(folder, stat=False).files
        if unread is None and each_file
    )
    files = _file_keys(paths, now)
    folders = (stat_key(layout.episodic_dir), stat_key(layout.thinking_dir))  # as in `head`
    settled = None not in files and all(settled_stamp(key, now) for key in folders if key)
    return FilesView(stat_key(layout.config_path), head, paths, files, settled)


def _head(recall: Recall) -> tuple[object, ...]:
    from local_recall.search.vector_log import cache_stamp

    layout, state = recall.layout, recall.layout.state_dir
    catalogs = [state / f"catalog-{kind}.{ext}" for kind in KINDS for ext in ("json", "log")]
    return (
        stat_key(layout.episodic_dir),
        stat_key(layout.thinking_dir),
        *map(stat_key, catalogs),
        cache_stamp(state),
    )


def _file_keys(paths: tuple[str, ...], now: int) -> tuple[StatKey | None, ...]:
    """Each file's stat key; None for one gone, or changed too close to `now` to trust."""
    return tuple(settled_stamp(key, now) if (key := stat_key(path)) else None for path in paths)
