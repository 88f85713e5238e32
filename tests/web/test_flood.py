"""The daemon under a local flood: any local user can open connections to the
viewer's loopback port. ~1,100 requests whose headers never finish used to stay open until the
daemon ran out of file descriptors; then the query socket failed every accept (~7,700 warnings
in seconds) and the prompt hook fell back to searching in-process. Now the viewer keeps at most
a bounded number of connections, closes those that do not send a request in time, and the
query socket is untouched: the hook still gets the daemon's answer, `local-recall ui` still
gets a page, and the log holds a handful of lines.

The daemon runs with RLIMIT_NOFILE = 512 (set in the `local-recall ui` process it inherits
from), so 1,100 connections are well past its limit."""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from local_recall.daemon.control import lock_holder, stop_daemon
from local_recall.daemon.query_client import ask, daemon_sockets
from local_recall.recall import Recall
from local_recall.repo.layout import Layout
from local_recall.settings import Settings
from tests.browser import daemon_env
from tests.conftest import git_init
from tests.waiting import Ceiling

pytestmark = pytest.mark.slow

DAEMON_FILES = 512
FLOOD = 1100


def limited_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (DAEMON_FILES, DAEMON_FILES))


def run(
    root: Path, *args: str, stdin: str = "", timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    root_option = [] if args[0] == "hook" else ["--root", str(root)]  # hooks take no options
    return subprocess.run(
        [sys.executable, "-m", "local_recall", *root_option, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=daemon_env(root),
        cwd=root,
        timeout=timeout,
        preexec_fn=limited_files,
    )


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    root = git_init(tmp_path / "repo")
    recall = Recall.open(settings=Settings(root=root, environ=daemon_env(root)))
    recall.init()
    recall.add("Deploy with make ship", "We deploy by running make ship from the release branch.")
    recall.add("Hooks fail open", "A hook never breaks a session: exit 0 and log.")
    try:
        started = run(root, "ui", "--no-browser", "--wait", "90")
        assert started.returncode == 0, started.stderr
        yield root, started.stdout.strip().splitlines()[-1]
    finally:
        stopped = stop_daemon(Layout(root), wait_seconds=30)
        if not stopped.stopped and stopped.pid:
            os.kill(stopped.pid, 9)


class Flood:
    """`count` connections that send half a request and then nothing, held open; with
    `persistent`, every one the server closes is opened again (an attacker who keeps at it)."""

    def __init__(self, port: int, count: int) -> None:
        self.port, self.count = port, count
        self.socks: list[socket.socket] = []
        self.opened = self.refused = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _open_one(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.settimeout(5)
        try:
            sock.connect(("127.0.0.1", self.port))
            sock.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nX-Slow: ".encode())
            self.socks.append(sock)
            self.opened += 1
        except OSError:
            sock.close()
            self.refused += 1

    def open(self) -> None:
        for _ in range(self.count):
            self._open_one()

    def keep_up(self) -> None:
        """Reopen what the server closed, until stopped."""

        def loop() -> None:
            while not self._stop.is_set():
                alive = []
                for sock in self.socks:
                    try:
                        sock.setblocking(False)
                        closed = sock.recv(1, socket.MSG_PEEK) == b""
                    except BlockingIOError:
                        closed = False
                    except OSError:
                        closed = True
                    if closed:
                        sock.close()
                    else:
                        alive.append(sock)
                self.socks = alive
                for _ in range(self.count - len(alive)):
                    if self._stop.is_set():
                        break
                    self._open_one()
                self._stop.wait(0.2)

        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        for sock in self.socks:
            sock.close()


def daemon_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def get(url: str, token: str, timeout: float = 10) -> int:
    request = urllib.request.Request(url, headers={"X-Recall-Token": token})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read()
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_a_local_flood_cannot_starve_the_daemon(daemon: tuple[Path, str]) -> None:
    root, url = daemon
    parts = urlsplit(url)
    port, token = int(parts.port or 0), parts.query.removeprefix("token=")
    base = f"http://127.0.0.1:{port}"
    assert get(f"{base}/api/memories", token) == 200
    pid = lock_holder(Layout(root))
    assert pid
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4 * FLOOD)), hard))
    layout = Layout(root)
    sockets = list(daemon_sockets(root, layout.state_dir, daemon_env(root)))
    before = ask(sockets, {"op": "ping"}, 5)
    assert before is not None

    flood = Flood(port, FLOOD)
    try:
        flood.open()
        time.sleep(2)
        held = daemon_files(pid)
        flood.keep_up()  # the attacker reopens whatever is closed

        payload = {"prompt": "how do we deploy a release?", "cwd": str(root), "session_id": "s"}
        started = time.monotonic()
        hooked = run(root, "hook", "user-prompt-submit", stdin=json.dumps(payload))
        hook_seconds = time.monotonic() - started
        assert hooked.returncode == 0
        assert "Deploy with make ship" in hooked.stdout, hooked.stdout
        after = ask(sockets, {"op": "ping"}, 5)
        assert after is not None, "the daemon's query socket stopped answering"
        assert after["counts"]["queries"] > before["counts"]["queries"]  # the daemon answered

        again = run(root, "ui", "--no-browser")
        assert again.returncode == 0, again.stderr
        page = 0
        ceiling = Ceiling()
        while page != 200 and not ceiling.passed():
            try:
                page = get(f"{base}/api/memories", token)
            except OSError:
                time.sleep(0.2)
        assert page == 200, "the viewer never answered during the flood"
        peak = max(held, daemon_files(pid))
    finally:
        flood.close()
    log = (root / "local-recall" / "recall.log").read_text(encoding="utf-8")
    lines = log.splitlines()
    print(
        f"\nflood: {flood.opened} connections opened ({flood.refused} refused), daemon holds "
        f"{held} files after 2 s (limit {DAEMON_FILES}), peak {peak}; prompt hook "
        f"{hook_seconds:.2f} s; recall.log {len(lines)} lines, {len(log)} bytes"
    )
    assert peak < DAEMON_FILES // 2
    assert "no daemon answered" not in log
    assert sum("accept" in line for line in lines) <= 10
    assert len(lines) < 200
