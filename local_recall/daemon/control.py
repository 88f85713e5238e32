"""Starting, stopping and finding the per-repository daemon: the lock (`DaemonLock`,
`lock_holder`), `spawn_detached` / `ensure_daemon` (used by the hooks, so this module stays
light: no library, no watchdog), `start_daemon`, `stop_daemon` and `read_status` (used by the
CLI). Details: docs/daemon.md."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from local_recall.daemon.query_client import ask, daemon_sockets
from local_recall.daemon.status import status_path
from local_recall.errors import StorageError
from local_recall.repo.files import (
    check_writable_place,
    open_append_nofollow,
    read_bytes_nofollow,
)
from local_recall.repo.layout import (
    Layout,
    derived_writable,
    recall_dir_problem,
    resolve_layout,
)

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
LOCK_NAME = "daemon.lock"
OUTPUT_NAME = "daemon.out"  # stdout/stderr of a detached daemon: only crashes land here
MAX_OUTPUT_BYTES = 1_000_000
# Variables tied to the one session that happened to start the daemon; it outlives it.
SESSION_ONLY_ENV = ("CLAUDE_CODE_SESSION_ID", "CLAUDE_PROJECT_DIR")


class Host(Protocol):
    """Where and with what environment a daemon runs: a `Settings`, or a hook's run (the hooks
    do not build `Settings`: they import nothing heavy)."""

    @property
    def root(self) -> Path: ...

    @property
    def environ(self) -> Mapping[str, str]: ...


def host_layout(host: Host) -> Layout:
    """Where this host's repository keeps its derived files (its user cache when the checkout
    is read-only: repo/layout.py)."""
    return resolve_layout(host.root, host.environ)


def _lock_path(layout: Layout) -> Path:
    return layout.state_dir / LOCK_NAME


# --- the lock: one daemon per repository ----------------------------------------------------


class DaemonLock:
    """An exclusive flock on state/daemon.lock, holding the owner's pid as text.

    The kernel drops a flock when its process dies, so a daemon killed with SIGKILL leaves
    no stale lock: the next start acquires it and overwrites the dead pid."""

    def __init__(self, layout: Layout) -> None:
        self.path = _lock_path(layout)
        self._fd: int | None = None

    def acquire(self) -> bool:
        """Raises StorageError when the lock cannot be made (read-only checkout, a symlink)."""
        check_writable_place(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o600)
        except OSError as exc:
            raise StorageError(f"cannot lock {self.path}: {exc.strerror or exc}") from None
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
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK)
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


def spawn_detached(host: Host, args: Sequence[str]) -> int:
    """Start `local-recall --root ROOT ARGS...` in its own session and return its pid without
    waiting: it survives the hook (and Claude Code) that started it. Raises StorageError when
    state/ cannot be used (a read-only checkout, a symlink): the process could not run."""
    root = host.root
    layout = host_layout(host)
    output = layout.state_dir / OUTPUT_NAME
    check_writable_place(layout.state_dir / LOCK_NAME)  # the daemon could not take its lock
    problem = recall_dir_problem(layout)  # a symlink or a file where local-recall/ should be
    if problem is not None:
        raise StorageError(problem)
    if not derived_writable(layout):
        raise StorageError(
            f"cannot start a daemon: the checkout is read-only here ({layout.state_dir} is "
            "not writable) and no cache folder can be used: set XDG_CACHE_HOME or HOME"
        )
    try:
        layout.state_dir.mkdir(parents=True, exist_ok=True)
        if os.lstat(output).st_size > MAX_OUTPUT_BYTES:
            output.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise StorageError(f"cannot use {layout.state_dir}: {exc.strerror or exc}") from None
    try:
        sink_fd = open_append_nofollow(output)
    except OSError:  # a planted symlink or FIFO: only crash output would have gone there
        sink_fd = os.open(os.devnull, os.O_WRONLY)
    with os.fdopen(sink_fd, "ab") as sink:
        process = subprocess.Popen(
            # -P: `-m` would put the cwd (the user's repository) first on sys.path, where a
            # `json.py` or `logging.py` of theirs would shadow the standard library
            [sys.executable, "-P", "-m", "local_recall", "--root", str(root), *args],
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=sink,
            cwd=root,
            env=daemon_environment(host.environ),
            start_new_session=True,
            close_fds=True,
        )
    return process.pid


def ensure_daemon(host: Host) -> int | None:
    """Start the daemon unless one holds the lock; never waits for it. Returns the new pid.
    Two hooks racing both spawn; the second daemon finds the lock taken and exits."""
    if lock_holder(host_layout(host)) is not None:
        return None
    try:
        return spawn_detached(host, ["daemon", "run"])
    except StorageError:
        return None  # a read-only checkout: the hooks answer from the files


@dataclass(frozen=True, slots=True)
class StartResult:
    pid: int | None
    already_running: bool
    ready: bool  # answering on the socket
    detail: str = ""


def start_daemon(host: Host, *, wait_seconds: float = 20.0) -> StartResult:
    """Start a detached daemon and wait until it answers a ping (or gives up)."""
    layout = host_layout(host)
    holder = lock_holder(layout)
    if holder is not None:
        return StartResult(holder, already_running=True, ready=True)
    pid = spawn_detached(host, ["daemon", "run"])
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline:
        sockets = daemon_sockets(host.root, layout.state_dir, host.environ)
        reply = ask(sockets, {"op": "ping"}, 0.5, root=host.root)
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
        text = read_bytes_nofollow(path, 4 * MAX_OUTPUT_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""
    return " | ".join(text.strip().splitlines()[-lines:])


@dataclass(frozen=True, slots=True)
class StopResult:
    pid: int | None
    was_running: bool
    stopped: bool


def ask_to_stop(layout: Layout) -> int | None:
    """SIGTERM the daemon holding this repository's lock, without waiting; its pid, or None
    when none runs (0: one is starting, not signalled). It finishes its current item, then
    exits. Raises PermissionError for another user's daemon."""
    pid = lock_holder(layout)
    if pid:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    return pid


def stop_daemon(layout: Layout, *, wait_seconds: float = 30.0) -> StopResult:
    """SIGTERM the daemon; it finishes its current item, then exits. Waits for the lock."""
    pid = ask_to_stop(layout)
    if pid is None:
        return StopResult(None, was_running=False, stopped=True)
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
        data = json.loads(read_bytes_nofollow(status_path(layout)))
    except (OSError, ValueError):
        data = None
    return DaemonStatus(pid is not None, pid, data if isinstance(data, dict) else None)
