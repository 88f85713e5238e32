"""The running daemon: `local-recall daemon run` (started by `daemon start` or a hook).

One long-lived process per repository keeps a `Recall` warm (embedder loaded, index open) and
answers the hooks over a unix socket (query_server.py); watches the memory folders (hand edits
are re-indexed within seconds) and this repo's Claude Code transcript folders (a quiet period
after a change triggers a pipeline pass: `Recall.sync_transcripts`); and runs a full pass
periodically, because watchers miss events (network filesystems, editors that replace folders,
a daemon that was down). What to do next is decided in `schedule.py`; starting and stopping is
`control.py`; folders are watched in `watches.py`. Details: docs/daemon.md.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from local_recall import __version__
from local_recall.capture.pipeline import retry_failed_now
from local_recall.capture.report import PassReport
from local_recall.capture.transcripts.discovery import git_worktrees, root_forms
from local_recall.daemon.control import DaemonLock, lock_holder
from local_recall.daemon.query_client import POINTER_NAME
from local_recall.daemon.query_server import QueryServer
from local_recall.daemon.query_service import QueryService
from local_recall.daemon.schedule import (
    Pending,
    Timers,
    after_pass,
    decide,
    is_memory_file_event,
    is_transcript_event,
)
from local_recall.daemon.session_env import LatestSession
from local_recall.daemon.status import StatusFile, format_utc
from local_recall.daemon.ui import DaemonUi
from local_recall.daemon.watches import Watches, transcript_dirs
from local_recall.errors import ExtractorUnavailable
from local_recall.recall import Recall
from local_recall.repo.layout import claude_config_dir

log = logging.getLogger(__name__)

TICK_SECONDS = 5.0  # new transcript folders, the socket pointer, the status heartbeat
LIFECYCLE_SECONDS = 15.0  # how often HEAD and the working tree are checked for the lifecycle


class Inbox:
    """What watchers and the socket report, waiting for the main loop (thread-safe)."""

    def __init__(self, now: float, *, last_pass: float) -> None:
        self._cond = threading.Condition()  # RLock: the signal handler may notify from main
        self._memory_at: float | None = None
        self._transcript_at: float | None = None
        self._done = False
        self._ended: set[str] = set()
        self._last_pass = last_pass
        self._activity = now

    def memory_changed(self) -> None:
        with self._cond:
            self._memory_at = time.monotonic()
            self._cond.notify_all()

    def transcript_changed(self) -> None:
        with self._cond:
            self._transcript_at = time.monotonic()
            self._cond.notify_all()

    def transcript_done(self, path: str = "") -> None:
        """A session ended or is compacting: a pass now, summarising `path` (absolute)."""
        with self._cond:
            self._done = True
            if path and os.path.isabs(path):
                self._ended.add(path)
            self._cond.notify_all()

    def take_ended(self) -> list[Path]:
        """The transcripts whose session ended since last asked (their summary is due)."""
        with self._cond:
            ended, self._ended = [Path(path) for path in self._ended], set()
            return ended

    def activity(self) -> None:
        with self._cond:
            self._activity = time.monotonic()

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def wait(self, seconds: float) -> None:
        with self._cond:
            self._cond.wait(seconds)

    def snapshot(self) -> Pending:
        with self._cond:
            return Pending(
                self._memory_at, self._transcript_at, self._done, self._last_pass, self._activity
            )

    def synced(self, started: float) -> None:
        """A re-index that started at `started` covers the changes seen before it."""
        with self._cond:
            if self._memory_at is not None and self._memory_at <= started:
                self._memory_at = None
            self._activity = time.monotonic()

    def passed(self, started: float) -> None:
        with self._cond:
            if self._transcript_at is not None and self._transcript_at <= started:
                self._transcript_at = None
            self._done = False
            self._last_pass = time.monotonic()
            self._activity = self._last_pass


class Daemon:
    """Two `Recall`s on one repository, sharing the embedder. One answers queries (owned by the
    QueryService, used under its lock); the `worker` does the slow work in the main thread —
    index builds, re-indexing, pipeline passes — so a query never waits for it. After each piece
    of work the worker, now holding the fresh memory catalog, is warmed up with one search and
    swapped in for queries (O(1) under the lock); the old query side becomes the next worker,
    whose next sync re-reads everything. Re-reading the catalog under the lock instead would
    block queries for ~1 s at 10k memories."""

    def __init__(self, recall: Recall, lock: DaemonLock) -> None:
        self.recall = recall  # the repository (paths, settings); first to serve queries
        self.layout = recall.layout
        self.lock = lock
        self.service: QueryService | None = None
        self.ui: DaemonUi | None = None  # the browser viewer (daemon/ui.py), once asked for
        shared = replace(recall.settings, embedder_factory=lambda _config: recall.searcher.embedder)
        self.worker = Recall(shared, recall.config)
        config = recall.config.daemon
        self.timers = Timers(
            debounce_seconds=config.debounce_seconds,
            full_pass_seconds=config.full_pass_seconds,
            idle_exit_seconds=config.idle_exit_minutes * 60.0,
        )
        now = time.monotonic()
        # A daemon that was down missed everything: the first full pass is due at once.
        self.inbox = Inbox(now, last_pass=now - self.timers.full_pass_seconds)
        self.stopping = threading.Event()
        self.status = StatusFile(self.layout, recall.settings.clock)
        self._roots: list[str] = []
        self._extractor_down: str | None = None  # why extraction cannot run, while it cannot
        # The Claude Code variables of the latest session (its hooks send them): extraction
        # runs with them, not with the first session's (session_env.py).
        self.session = LatestSession(recall.settings.environ)

    # -- watchers --

    def _on_memory_event(self, path: str) -> None:
        if is_memory_file_event(path):
            self.inbox.memory_changed()

    def _on_transcript_event(self, path: str) -> None:
        if is_transcript_event(path):
            self.inbox.transcript_changed()

    def _on_new_folder(self, folder: Path) -> None:
        # A folder created while we run (the first memory, a new session's project folder) got
        # its first files before it was watched: treat it as changed instead of waiting for the
        # periodic full pass.
        if folder in (self.layout.episodic_dir, self.layout.thinking_dir):
            self.inbox.memory_changed()
        else:
            self.inbox.transcript_changed()

    def _refresh_roots(self) -> None:
        self._roots = root_forms([self.recall.root, *git_worktrees(self.recall.root)])

    def _watch_targets(self) -> list[tuple[Path, Callable[[str], None]]]:
        targets: list[tuple[Path, Callable[[str], None]]] = [
            (self.layout.episodic_dir, self._on_memory_event),
            (self.layout.thinking_dir, self._on_memory_event),
        ]
        # the daemon's own Claude config folder and the latest session's, when it names another
        latest = claude_config_dir(self.session.environ())
        found = transcript_dirs((self.recall.settings.claude_config_dir, latest), self._roots)
        return targets + [(folder, self._on_transcript_event) for folder in found]

    # -- work --

    def _refresh_lifecycle(self) -> None:
        """Recompute the stale/branch snapshot the queries read when HEAD, the working tree or
        the memories moved (docs/team.md). Here, in the main loop: never on the query path."""
        try:
            self.worker.lifecycle_snapshot()
        except Exception:
            log.exception("lifecycle snapshot failed")

    def _swap_in_fresh_recall(self) -> None:
        """Hand the freshly synced worker to the query side (see the class docstring)."""
        self._refresh_lifecycle()
        _warm_up(self.worker)
        if self.service is not None:
            self.worker = self.service.swap(self.worker)
        if self.ui is not None:
            self.ui.changed()

    def _sync(self, reason: str) -> None:
        started = time.monotonic()
        self.inbox.synced(started)
        try:
            report = self.worker.sync_index()
            self._swap_in_fresh_recall()
        except Exception as exc:
            log.exception("re-index failed (%s)", reason)
            self.status.error("sync", exc)
            return
        log.info("re-indexed (%s): %s", reason, report)
        self.status.record("sync", started, report)

    def _scheduled_pass(self, reason: str) -> None:
        started = time.monotonic()
        self.inbox.passed(started)
        report: dict[str, Any] = {"reason": reason}
        try:
            result = report["pipeline"] = self._run_pass()
            wrote = isinstance(result, PassReport) and (result.changed or result.summaries_written)
            then = after_pass(reason, bool(wrote))
            if then == "sync":
                report["index"] = self.worker.sync_index()
            if then != "nothing":
                self._swap_in_fresh_recall()
        except Exception as exc:
            log.exception("pass failed (%s)", reason)
            self.status.error("pass", exc)
            return
        log.info("pass done (%s) in %.1f s", reason, time.monotonic() - started)
        failed = result.errors if isinstance(result, PassReport) else ()
        self.status.record("pass", started, report, failed=failed)

    def _run_pass(self) -> object:
        """The pass itself (`_scheduled_pass`: it, then the re-index and swap `after_pass` asks
        for). An extractor that cannot run (no `claude` on the daemon's PATH, bad credentials)
        is a lasting condition, not a crash: a warning when it starts and when it ends."""
        if self.layout.read_only:  # memories cannot be written into this checkout
            return {"read_only": "extraction is off: the checkout is not writable here"}
        try:
            # should_stop is polled between chunks: SIGTERM ends a long pass early
            ended = self.inbox.take_ended()
            if self.session.take_change():  # failures under the old variables: retried now
                retry_failed_now(self.layout.state_dir)
            result = self.worker.sync_transcripts(
                should_stop=self.stopping.is_set, ended=ended, environ=self.session.environ()
            )
        except ExtractorUnavailable as exc:
            if self._extractor_down is None:
                log.warning("extraction paused until the extractor can run: %s", exc)
                self.status.error("pass", exc)
            self._extractor_down = str(exc)
            return {"extractor_unavailable": str(exc)}
        if self._extractor_down is not None and result.chunks_sent:
            log.warning("extraction resumed: the extractor runs again")
            self._extractor_down = None
        return result

    def describe(self) -> dict[str, Any]:
        status = self.status.snapshot()
        return {
            "pid": os.getpid(),
            "version": __version__,
            "root": str(self.recall.root),
            "state": status["state"],
            "counts": status["counts"],
        }

    def _on_query(self) -> None:
        self.status.count_query()
        self.inbox.activity()

    def _on_session_env(self, env: dict[str, str], session: str) -> None:
        described = self.session.receive(env, session, format_utc(self.recall.settings.clock()))
        if described is not None:  # names and digests, never values
            self.status.set(environment=described)

    def _on_transcript_done(self, path: str) -> None:
        log.info("session ended or compacting: %s", path)
        self.inbox.transcript_done(path)

    # -- lifecycle --

    def request_stop(self, *_: object) -> None:
        self.stopping.set()
        self.inbox.wake()

    def run(self) -> int:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                signal.signal(sig, self.request_stop)
        _warm_up(self.recall)
        service = self.service = QueryService(
            self.recall,
            on_transcript_done=self._on_transcript_done,
            describe=self.describe,
            on_query=self._on_query,
            on_session_env=self._on_session_env,
        )
        self.ui = DaemonUi(self.recall, service, self.inbox.activity)
        server = QueryServer.for_root(
            self.recall.root,
            self.recall.settings.environ,
            self.ui.wrap(service.handle),
            pointer=self.layout.state_dir / POINTER_NAME,
        )
        watches: Watches | None = None
        try:
            socket_path = server.start()
            self.status.set(state="indexing", socket=str(socket_path))
            log.info("daemon %d serving %s on %s", os.getpid(), self.recall.root, socket_path)
            if self.layout.read_only:
                log.info(
                    "the checkout is not writable here: index, state and log in %s; "
                    "memories are searched and watched, extraction is off",
                    self.layout.derived,
                )
            self._refresh_roots()
            watches = Watches()
            watches.refresh(self._watch_targets())
            watches.start()
            self._sync("start")
            self.status.set(state="running", watching=watches.folders)
            self._loop(watches, server)
        except Exception as exc:
            log.exception("daemon failed")
            self.status.error("daemon", exc)
            return 1
        finally:
            if watches is not None:
                watches.stop()
            server.close()
            self.ui.close()
            self.status.set(state="stopped", stopped=format_utc(self.recall.settings.clock()))
            log.info("daemon %d stopped", os.getpid())
        return 0

    def _loop(self, watches: Watches, server: QueryServer) -> None:
        last_tick = time.monotonic()
        last_roots = last_lifecycle = last_tick
        while not self.stopping.is_set():
            now = time.monotonic()
            if now - last_tick >= TICK_SECONDS:
                last_tick = now
                if now - last_roots >= self.timers.full_pass_seconds:
                    last_roots = now
                    self._refresh_roots()
                for folder in watches.refresh(self._watch_targets()):
                    self._on_new_folder(Path(folder))
                server.write_pointer()  # in case state/ was cleaned while we run
                self.status.heartbeat()
                if now - last_lifecycle >= LIFECYCLE_SECONDS:
                    last_lifecycle = now
                    self._refresh_lifecycle()
            decision = decide(now, self.inbox.snapshot(), self.timers)
            if decision.action == "wait":
                self.inbox.wait(min(decision.wait_seconds, TICK_SECONDS))
            elif decision.action == "sync":
                self._sync(decision.reason)
            elif decision.action == "pass":
                self._scheduled_pass(decision.reason)
            else:
                log.info("exiting: %s", decision.reason)
                return


def _warm_up(recall: Recall) -> None:
    """Load the embedder, open the index, build the fuzzy vocabulary: the first real query
    after this pays none of it."""
    try:
        recall.search("warm up", limit=1, sync=False)
    except Exception as exc:
        log.warning("warm-up search failed: %s", exc)


@dataclass(frozen=True, slots=True)
class RunOutcome:
    exit_code: int
    already_running: int | None = None  # pid of the daemon that holds the lock


def run_daemon(recall: Recall) -> RunOutcome:
    """`daemon run`: serve in the foreground until SIGTERM (or idle exit). When another
    daemon already holds this repo's lock, return at once: it is doing the job."""
    lock = DaemonLock(recall.layout)
    if not lock.acquire():
        return RunOutcome(0, already_running=lock_holder(recall.layout) or 0)
    try:
        return RunOutcome(Daemon(recall, lock).run())
    finally:
        lock.release()
