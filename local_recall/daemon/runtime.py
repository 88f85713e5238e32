"""The per-repository daemon: `local-recall daemon start | stop | status | run`.

One long-lived process per repository keeps a `Recall` warm (embedder loaded, index open) and
answers the hooks over a unix socket (query_server.py); watches the memory folders (hand edits
are re-indexed within seconds) and this repo's Claude Code transcript folders (a quiet period
after a change triggers a pipeline pass); and runs a full pass periodically, because watchers
miss events (network filesystems, editors that replace folders, a daemon that was down).

Module-level imports stay light (the SessionStart hook imports `ensure_daemon` from here);
watchdog, the library and the query server are imported when the daemon runs. This is the only
module that imports watchdog. Details: docs/daemon.md.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from local_recall import __version__
from local_recall.daemon.query_client import POINTER_NAME
from local_recall.repo.files import write_text_atomic
from local_recall.repo.layout import Layout

if TYPE_CHECKING:
    from local_recall.daemon.query_server import QueryServer, QueryService
    from local_recall.recall import Recall

log = logging.getLogger(__name__)

LOCK_NAME = "daemon.lock"
STATUS_NAME = "daemon.json"
OUTPUT_NAME = "daemon.out"  # stdout/stderr of a detached daemon: only crashes land here
MEMORY_DEBOUNCE_SECONDS = 0.5  # an editor's save, a `git pull` of many files: one re-index
TICK_SECONDS = 5.0  # new transcript folders, the socket pointer, the status heartbeat
MAX_LAST_ERRORS = 10
MAX_OUTPUT_BYTES = 1_000_000
# Variables tied to the one session that happened to start the daemon; it outlives it.
SESSION_ONLY_ENV = ("CLAUDE_CODE_SESSION_ID", "CLAUDE_PROJECT_DIR")


def _lock_path(layout: Layout) -> Path:
    return layout.state_dir / LOCK_NAME


def status_path(layout: Layout) -> Path:
    return layout.state_dir / STATUS_NAME


# --- the lock: one daemon per repository ----------------------------------------------------


class DaemonLock:
    """An exclusive flock on state/daemon.lock, holding the owner's pid as text.

    The kernel drops a flock when its process dies, so a daemon killed with SIGKILL leaves
    no stale lock: the next start acquires it and overwrites the dead pid."""

    def __init__(self, layout: Layout) -> None:
        self.path = _lock_path(layout)
        self._fd: int | None = None

    def acquire(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                return False
            raise
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)  # closing drops the flock
            self._fd = None


def lock_holder(layout: Layout) -> int | None:
    """The pid of the daemon holding this repo's lock, or None when none runs.
    (0 when the lock is held but the pid is not written yet: a daemon is starting.)"""
    path = _lock_path(layout)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            text = os.read(fd, 64).decode("ascii", "ignore").strip()
            return int(text) if text.isdigit() else 0
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


# --- starting and stopping ------------------------------------------------------------------


def daemon_environment(environ: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in environ.items() if k not in SESSION_ONLY_ENV}


def spawn_detached(root: Path, environ: Mapping[str, str], args: Sequence[str]) -> int:
    """Start `local-recall --root ROOT ARGS...` in its own session and return its pid without
    waiting: it survives the hook (and Claude Code) that started it."""
    layout = Layout(root)
    layout.state_dir.mkdir(parents=True, exist_ok=True)
    output = layout.state_dir / OUTPUT_NAME
    with contextlib.suppress(OSError):
        if output.stat().st_size > MAX_OUTPUT_BYTES:
            output.unlink()
    with open(output, "ab") as sink:
        process = subprocess.Popen(
            # -P: `-m` would put the cwd (the user's repository) first on sys.path, where a
            # `json.py` or `logging.py` of theirs would shadow the standard library
            [sys.executable, "-P", "-m", "local_recall", "--root", str(root), *args],
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=sink,
            cwd=root,
            env=daemon_environment(environ),
            start_new_session=True,
            close_fds=True,
        )
    return process.pid


def ensure_daemon(root: Path, environ: Mapping[str, str]) -> int | None:
    """Start the daemon unless one holds the lock; never waits for it. Returns the new pid.
    Two hooks racing both spawn; the second daemon finds the lock taken and exits."""
    if lock_holder(Layout(root)) is not None:
        return None
    return spawn_detached(root, environ, ["daemon", "run"])


@dataclass(frozen=True, slots=True)
class StartResult:
    pid: int | None
    already_running: bool
    ready: bool  # answering on the socket
    detail: str = ""


def start_daemon(
    root: Path, environ: Mapping[str, str], *, wait_seconds: float = 20.0
) -> StartResult:
    """Start a detached daemon and wait until it answers a ping (or gives up)."""
    from local_recall.daemon.query_client import ask, daemon_sockets

    layout = Layout(root)
    holder = lock_holder(layout)
    if holder is not None:
        return StartResult(holder, already_running=True, ready=True)
    pid = spawn_detached(root, environ, ["daemon", "run"])
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline:
        reply = ask(daemon_sockets(root, layout.state_dir, environ), {"op": "ping"}, 0.5)
        if reply is not None and reply.get("ok") is True:
            return StartResult(int(reply.get("pid") or pid), already_running=False, ready=True)
        if not _alive(pid):
            holder = lock_holder(layout)
            if holder:  # lost a race to another start: that one is the daemon
                return StartResult(holder, already_running=True, ready=True)
            return StartResult(pid, False, False, _tail(layout.state_dir / OUTPUT_NAME))
        time.sleep(0.1)
    return StartResult(pid, False, False, "did not answer in time; see local-recall/recall.log")


def _alive(pid: int) -> bool:
    try:
        finished, _ = os.waitpid(pid, os.WNOHANG)  # reap it if it is our child and has exited
        if finished == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return " | ".join(text.strip().splitlines()[-lines:])


@dataclass(frozen=True, slots=True)
class StopResult:
    pid: int | None
    was_running: bool
    stopped: bool


def stop_daemon(layout: Layout, *, wait_seconds: float = 30.0) -> StopResult:
    """SIGTERM the daemon; it finishes its current item, then exits. Waits for the lock."""
    pid = lock_holder(layout)
    if pid is None:
        return StopResult(None, was_running=False, stopped=True)
    if pid > 0:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline:
        if lock_holder(layout) is None:
            return StopResult(pid, was_running=True, stopped=True)
        time.sleep(0.05)
    return StopResult(pid, was_running=True, stopped=False)


@dataclass(frozen=True, slots=True)
class DaemonStatus:
    running: bool
    pid: int | None
    status: Mapping[str, Any] | None  # the last state/daemon.json, if any

    def to_json(self) -> dict[str, Any]:
        return {"running": self.running, "pid": self.pid, "status": self.status}


def read_status(layout: Layout) -> DaemonStatus:
    pid = lock_holder(layout)
    try:
        data = json.loads(status_path(layout).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    return DaemonStatus(pid is not None, pid, data if isinstance(data, dict) else None)


# --- decisions (pure) -----------------------------------------------------------------------


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
        return Decision("pass", reason="periodic full pass")
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
    from local_recall.capture.transcripts import encode_project_dir

    exact = set()
    prefixes = []
    for root in roots:
        encoded = encode_project_dir(root)
        exact.add(encoded)
        prefixes.append(encoded[:200] + "-")
    return sorted(n for n in names if n in exact or n.startswith(tuple(prefixes)))


def is_memory_file_event(path: str) -> bool:
    name = os.path.basename(path)
    return name.endswith(".md") and not name.startswith(".")


def is_transcript_event(path: str) -> bool:
    return path.endswith(".jsonl")


# Events that mean content changed; watchdog also reports opens and read-only closes, and the
# daemon reads memory files itself (it would wake itself up forever).
CHANGE_EVENTS = frozenset({"created", "modified", "deleted", "moved", "closed"})


# --- the running daemon ---------------------------------------------------------------------


class Inbox:
    """What watchers and the socket report, waiting for the main loop (thread-safe)."""

    def __init__(self, now: float, *, last_pass: float) -> None:
        self._cond = threading.Condition()  # RLock: the signal handler may notify from main
        self._memory_at: float | None = None
        self._transcript_at: float | None = None
        self._done = False
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

    def transcript_done(self) -> None:
        with self._cond:
            self._done = True
            self._cond.notify_all()

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


def _utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _jsonable(value: Any) -> Any:
    """A report (dataclass, Path, datetime, ...) as JSON-safe values."""
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


class StatusFile:
    """state/daemon.json: written atomically after each piece of work and on a heartbeat."""

    def __init__(self, layout: Layout) -> None:
        self._path = status_path(layout)
        self._lock = threading.Lock()
        self._data: dict[str, Any] = {
            "pid": os.getpid(),
            "version": __version__,
            "root": str(layout.root),
            "socket": None,
            "state": "starting",
            "started": _utc_now(),
            "updated": _utc_now(),
            "last_pass": None,
            "last_sync": None,
            "counts": {"passes": 0, "syncs": 0, "queries": 0, "errors": 0},
            "last_errors": [],
        }
        self._written_queries = 0

    def set(self, **fields: Any) -> None:
        with self._lock:
            self._data.update(fields)
        self.write()

    def count_query(self) -> None:
        with self._lock:
            self._data["counts"]["queries"] += 1

    def record(self, kind: Literal["pass", "sync"], started: float, report: Any) -> None:
        with self._lock:
            self._data[f"last_{kind}"] = {
                "at": _utc_now(),
                "seconds": round(time.monotonic() - started, 3),
                "report": _jsonable(report),
            }
            self._data["counts"][kind + "es" if kind == "pass" else kind + "s"] += 1
        self.write()

    def error(self, where: str, exc: BaseException) -> None:
        with self._lock:
            self._data["counts"]["errors"] += 1
            errors = [
                *self._data["last_errors"],
                {"at": _utc_now(), "where": where, "error": f"{type(exc).__name__}: {exc}"},
            ]
            self._data["last_errors"] = errors[-MAX_LAST_ERRORS:]
        self.write()

    def heartbeat(self) -> None:
        with self._lock:
            if self._data["counts"]["queries"] == self._written_queries:
                return
        self.write()

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return json.loads(json.dumps(self._data))  # type: ignore[no-any-return]

    def write(self) -> None:
        with self._lock:
            self._data["updated"] = _utc_now()
            self._written_queries = self._data["counts"]["queries"]
            text = json.dumps(self._data, indent=2, ensure_ascii=False) + "\n"
            try:
                write_text_atomic(self._path, text)
            except Exception as exc:  # StorageError: the status file is informational
                log.warning("cannot write %s: %s", self._path, exc)


class _Watches:
    """watchdog observers for folders that come and go (created after the daemon started)."""

    def __init__(self) -> None:
        from watchdog.observers import Observer

        self._observer = Observer()
        self._watched: dict[str, Any] = {}

    def start(self) -> None:
        self._observer.start()

    def refresh(self, targets: Sequence[tuple[Path, Callable[[str], None]]]) -> list[str]:
        """Watch the target folders that exist, drop the ones that went; return those added."""
        from watchdog.events import FileSystemEvent, FileSystemEventHandler

        class _Handler(FileSystemEventHandler):
            def __init__(self, notify: Callable[[str], None]) -> None:
                self._notify = notify

            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.event_type not in CHANGE_EVENTS or event.is_directory:
                    return
                for path in (event.src_path, getattr(event, "dest_path", "")):
                    if path:
                        self._notify(os.fsdecode(path))

        wanted = {str(path): notify for path, notify in targets if path.is_dir()}
        for key in list(self._watched):
            if key not in wanted:
                with contextlib.suppress(Exception):
                    self._observer.unschedule(self._watched.pop(key))
        added = []
        for key, notify in wanted.items():
            if key in self._watched:
                continue
            try:
                self._watched[key] = self._observer.schedule(_Handler(notify), key, recursive=True)
                added.append(key)
            except OSError as exc:  # inotify limits, a folder removed meanwhile
                log.warning("cannot watch %s: %s", key, exc)
        return added

    @property
    def folders(self) -> list[str]:
        return sorted(self._watched)

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._observer.stop()
            self._observer.join(timeout=2.0)


class Daemon:
    """Two `Recall`s on one repository, sharing the embedder. One answers queries (owned by the
    QueryService, used under its lock); the `worker` does the slow work in the main thread —
    index builds, re-indexing, pipeline passes — so a query never waits for it. After each piece
    of work the worker, now holding the fresh memory catalog, is warmed up with one search and
    swapped in for queries (O(1) under the lock); the old query side becomes the next worker,
    whose next sync re-reads everything. Re-reading the catalog under the lock instead would
    block queries for ~1 s at 10k memories."""

    def __init__(self, recall: Recall, lock: DaemonLock) -> None:
        from dataclasses import replace

        from local_recall.recall import Recall

        self.recall = recall  # the repository (paths, settings); first to serve queries
        self.layout = recall.layout
        self.lock = lock
        self.service: QueryService | None = None
        shared = replace(recall.settings, embedder_factory=lambda _config: recall.searcher.embedder)
        self.worker = Recall(shared, recall.config)
        config = recall.config
        self.timers = Timers(
            debounce_seconds=config.get("daemon", "debounce_seconds"),
            full_pass_seconds=config.get("daemon", "full_pass_seconds"),
            idle_exit_seconds=config.get("daemon", "idle_exit_minutes") * 60.0,
        )
        now = time.monotonic()
        # A daemon that was down missed everything: the first full pass is due at once.
        self.inbox = Inbox(now, last_pass=now - self.timers.full_pass_seconds)
        self.stopping = threading.Event()
        self.status = StatusFile(self.layout)
        self._roots: list[str] = []

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
        from local_recall.capture.transcripts import git_worktrees

        roots = [self.recall.root, *git_worktrees(self.recall.root)]
        forms: list[str] = []
        for root in roots:
            for form in (os.path.abspath(root), str(Path(root).resolve())):
                if form not in forms:
                    forms.append(form)
        self._roots = forms

    def _watch_targets(self) -> list[tuple[Path, Callable[[str], None]]]:
        targets: list[tuple[Path, Callable[[str], None]]] = [
            (self.layout.episodic_dir, self._on_memory_event),
            (self.layout.thinking_dir, self._on_memory_event),
        ]
        projects = self.recall.settings.claude_config_dir / "projects"
        try:
            names = [entry.name for entry in os.scandir(projects) if entry.is_dir()]
        except OSError:
            names = []
        for name in repo_transcript_dirs(names, self._roots):
            targets.append((projects / name, self._on_transcript_event))
        return targets

    # -- work --

    def _publish(self) -> None:
        """Hand the freshly synced worker to the query side (see the class docstring)."""
        _warm_up(self.worker)
        if self.service is not None:
            self.worker = self.service.swap(self.worker)

    def _sync(self, reason: str) -> None:
        started = time.monotonic()
        self.inbox.synced(started)
        try:
            report = self.worker.sync_index()
            self._publish()
        except Exception as exc:
            log.exception("re-index failed (%s)", reason)
            self.status.error("sync", exc)
            return
        log.info("re-indexed (%s): %s", reason, report)
        self.status.record("sync", started, report)

    def _pass(self, reason: str) -> None:
        started = time.monotonic()
        self.inbox.passed(started)
        report: dict[str, Any] = {"reason": reason}
        try:
            run_pass = _pipeline_run_pass()
            if run_pass is not None:
                # should_stop is polled between chunks: SIGTERM ends a long pass early
                report["pipeline"] = run_pass(self.worker, should_stop=self.stopping.is_set)
            report["index"] = self.worker.sync_index()
            self._publish()
        except Exception as exc:
            log.exception("pass failed (%s)", reason)
            self.status.error("pass", exc)
            return
        log.info("pass done (%s) in %.1f s", reason, time.monotonic() - started)
        self.status.record("pass", started, report)

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

    def _on_transcript_done(self, path: str) -> None:
        log.info("session ended: %s", path)
        self.inbox.transcript_done()

    # -- lifecycle --

    def request_stop(self, *_: object) -> None:
        self.stopping.set()
        self.inbox.wake()

    def run(self) -> int:
        from local_recall.daemon.query_server import QueryServer, QueryService

        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                signal.signal(sig, self.request_stop)
        _warm_up(self.recall)
        service = self.service = QueryService(
            self.recall,
            on_transcript_done=self._on_transcript_done,
            describe=self.describe,
            on_query=self._on_query,
        )
        server = QueryServer.for_root(
            self.recall.root,
            self.recall.settings.environ,
            service.handle,
            pointer=self.layout.state_dir / POINTER_NAME,
        )
        watches: _Watches | None = None
        try:
            socket_path = server.start()
            self.status.set(state="indexing", socket=str(socket_path))
            log.info("daemon %d serving %s on %s", os.getpid(), self.recall.root, socket_path)
            self._refresh_roots()
            watches = _Watches()
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
            self.status.set(state="stopped", stopped=_utc_now())
            log.info("daemon %d stopped", os.getpid())
        return 0

    def _loop(self, watches: _Watches, server: QueryServer) -> None:
        last_tick = time.monotonic()
        last_roots = last_tick
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
            decision = decide(now, self.inbox.snapshot(), self.timers)
            if decision.action == "wait":
                self.inbox.wait(min(decision.wait_seconds, TICK_SECONDS))
            elif decision.action == "sync":
                self._sync(decision.reason)
            elif decision.action == "pass":
                self._pass(decision.reason)
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


def _pipeline_run_pass() -> Callable[..., Any] | None:
    """`local_recall.capture.pipeline.run_pass`, or None where the pipeline is not installed."""
    import importlib

    try:
        module = importlib.import_module("local_recall.capture.pipeline")
    except ModuleNotFoundError as exc:
        if exc.name == "local_recall.capture.pipeline":
            return None
        raise
    run_pass: Callable[..., Any] = module.run_pass
    return run_pass


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
