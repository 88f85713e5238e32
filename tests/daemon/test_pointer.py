"""`local-recall/state/daemon.socket` is a file in the checkout: a clone may have committed one
naming another repository's daemon of the same user. Clients ask `ping` first and talk only to
a daemon serving their own root."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local_recall.daemon.query_client import POINTER_NAME, ask, daemon_sockets, socket_paths
from local_recall.daemon.query_server import QueryServer
from local_recall.recall import Recall
from local_recall.settings import Settings
from tests.conftest import clean_env, git_init
from tests.daemon_runs import daemon_env, lr, status_json, stop_and_reap, wait_for
from tests.hook_runs import prompt_input, run_hook


@pytest.fixture
def runtime_dir() -> Iterator[Path]:
    """A short XDG_RUNTIME_DIR (tmp_path is too long for sun_path on some machines)."""
    base = Path(tempfile.mkdtemp(prefix="lrp", dir="/tmp"))
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


class Daemonish:
    """Answers like a daemon serving `root`, and records what it was asked."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.requests: list[dict[str, Any]] = []

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(request)
        if request.get("op") == "ping":
            return {"ok": True, "pid": 1, "root": str(self.root)}
        return {"ok": True, "served_by": str(self.root)}


def test_a_pointer_to_another_roots_daemon_is_passed_over_for_this_roots_own(
    tmp_path: Path, runtime_dir: Path
) -> None:
    mine, other = (tmp_path / "mine").resolve(), (tmp_path / "other").resolve()
    env = {"XDG_RUNTIME_DIR": str(runtime_dir)}
    ours, theirs = Daemonish(mine), Daemonish(other)
    servers = [
        QueryServer(socket_paths(mine, env), ours.handle),
        QueryServer(socket_paths(other, env), theirs.handle),
    ]
    for server in servers:
        server.start()
    try:
        state = tmp_path / "state"
        state.mkdir()
        (state / POINTER_NAME).write_text(f"{servers[1].path}\n")  # committed by the clone
        request = {
            "op": "answer",
            "kind": "prompt",
            "prompt": "deploys",
            "env": {"ANTHROPIC_API_KEY": "sk-x"},
        }
        reply = ask(daemon_sockets(mine, state, env), request, 5.0, root=mine)
        assert reply == {"ok": True, "served_by": str(mine)}
        assert theirs.requests == [{"op": "ping"}]  # the query and its environment stayed here
        assert ours.requests == [{"op": "ping"}, request]
        ping = ask(daemon_sockets(mine, state, env), {"op": "ping"}, 5.0, root=mine)
        assert ping is not None and ping["root"] == str(mine)
        servers[0].close()  # no daemon of our own: nobody answers, the other is never asked
        assert ask(daemon_sockets(mine, state, env), request, 5.0, root=mine) is None
        assert request not in theirs.requests
    finally:
        for server in servers:
            server.close()


def _repo(path: Path, subject: str) -> Path:
    root = git_init(path)
    Recall.open(settings=Settings(root=root, environ=clean_env())).init()
    added = lr(root, "add", "-s", subject, "-b", f"{subject}. Checked in the runbook.")
    assert added.returncode == 0, added.stderr
    return root


def _queries(root: Path, env: dict[str, str]) -> int:
    reply = ask(socket_paths(root.resolve(), env), {"op": "ping"}, 5.0)
    assert reply is not None, "the other repository's daemon stopped answering"
    return int(reply["counts"]["queries"])


@pytest.mark.slow
def test_a_committed_pointer_to_another_repositorys_daemon_is_never_believed(
    tmp_path: Path,
) -> None:
    other = _repo(tmp_path / "other", "Deploys go through the purple falcon gateway")
    clone = _repo(tmp_path / "clone", "Deploys go through the blue green switch")
    env = daemon_env(other)
    try:
        started = lr(other, "daemon", "start", env=env)
        assert started.returncode == 0, started.stderr
        wait_for(lambda: status_json(other).get("state") == "running", 90)
        pointer = clone / "local-recall" / "state" / POINTER_NAME
        pointer.parent.mkdir(parents=True, exist_ok=True)
        pointer.write_text(status_json(other)["socket"] + "\n")
        git = ["git", "-C", str(clone)]
        subprocess.run([*git, "add", "-f", str(pointer)], check=True)
        subprocess.run([*git, "commit", "-qm", "a pointer"], check=True)
        before = _queries(other, env)

        found = lr(clone, "search", "how do deploys work", env=daemon_env(clone))
        assert found.returncode == 0, found.stderr
        assert "blue green" in found.stdout and "purple falcon" not in found.stdout
        ran = run_hook("user-prompt-submit", prompt_input("How do deploys work?", clone), clone)
        assert ran.returncode == 0 and "purple falcon" not in ran.stdout
        started_session = run_hook("session-start", b'{"source": "startup"}', clone)
        assert "purple falcon" not in started_session.stdout
        assert _queries(other, env) == before  # none of the clone's requests reached it
    finally:
        stop_and_reap(other)
