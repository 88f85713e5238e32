"""The MCP server's Recall, opened on first use, the index warm-up after the handshake, and
the full sync that settles the background once saves have gone quiet."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Final

from local_recall.errors import StorageError

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
        self._stamp: tuple[object, ...] | None = None  # what the files looked like then

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
        the save nor a search right after it waits ~1 s for ~100 probe searches."""
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
            self._sync("settle")

    def warm_notes(self, ask: PromptAsk) -> list[Note] | None:
        """A prompt's notes from this process's warm Recall, as the daemon would answer them
        (the same ContextService over the same files and state); None while there is no warm
        Recall (the warm-up has not finished), while a sync holds it, or once config.toml has
        changed (the daemon, which reloads it, answers then)."""
        context = self._context
        if context is None or not self.index_lock.acquire(timeout=PROMPT_LOCK_WAIT_SECONDS):
            return None
        try:
            stamp = _files_stamp(context.recall)
            if self._stamp is None or stamp[0] != self._stamp[0]:
                return None
            if stamp != self._stamp:
                # saved, forgotten, pulled or synced since: read the catalog again (stat-keyed:
                # the changed files only); the vector cache is re-read by its own stamp
                context.recall.searcher.load_memories()
                self._stamp = stamp
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

                stamp = _files_stamp(recall)  # before the search: a change during it is seen
                recall.query(SearchQuery("warm up the model"), sync=False)
                self._stamp, self._context = stamp, ContextService(recall)
        except Exception:  # an optimisation: a failure shows again at the next call
            log.warning("MCP warm-up failed", exc_info=True)

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


def _files_stamp(recall: Recall) -> tuple[object, ...]:
    """What changes when the memories or the derived state do: config.toml first (a change
    there is left to the daemon), the memory folders (every write is a rename into them: their
    mtime moves), the stores' catalogs (any process's scan that saw a hand edit appends to
    them: the daemon's watcher does) and the vector cache (every sync that embedded something
    appends to it). A few `stat`s: cheap on every prompt."""
    from local_recall.search.vector_log import cache_stamp

    layout, state = recall.layout, recall.layout.state_dir
    catalogs = [state / f"catalog-{kind}.{ext}" for kind in KINDS for ext in ("json", "log")]
    return (
        _stat(layout.config_path),
        _stat(layout.episodic_dir),
        _stat(layout.thinking_dir),
        *map(_stat, catalogs),
        cache_stamp(state),
    )


def _stat(path: Path) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns
