"""Running the real daemon in a test: its environment, `local-recall` as a subprocess, waiting
for a condition, its status file, stopping it for sure."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from local_recall.daemon.control import stop_daemon
from local_recall.repo.layout import Layout
from tests.conftest import clean_env
from tests.waiting import wait_for

__all__ = ["wait_for"]  # the tests that run a daemon take their polling from here


def daemon_env(repo: Path, **extra: str) -> dict[str, str]:
    env = clean_env(
        {
            "CLAUDE_CONFIG_DIR": str(repo.parent / "claude-config"),
            "LOCAL_RECALL_EXTRACTION_ENABLED": "false",
        }
    )
    env.update(extra)
    return env


def lr(
    repo: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "local_recall", "--root", str(repo), *args],
        capture_output=True,
        text=True,
        env=env or daemon_env(repo),
        timeout=timeout,
        cwd=repo,
    )


def status_json(repo: Path) -> dict[str, Any]:
    try:
        data = json.loads((repo / "local-recall" / "state" / "daemon.json").read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def stop_and_reap(repo: Path) -> None:
    layout = Layout(repo)
    result = stop_daemon(layout, wait_seconds=20)
    if not result.stopped and result.pid:
        os.kill(result.pid, signal.SIGKILL)


@contextlib.contextmanager
def running_daemon(repo: Path, env: dict[str, str]) -> Iterator[dict[str, str]]:
    """A daemon started with `local-recall daemon start` and running; stopped (or killed)
    afterwards. Yields its environment."""
    started = lr(repo, "daemon", "start", env=env)
    assert started.returncode == 0, started.stderr
    wait_for(lambda: status_json(repo).get("state") == "running", 60)
    try:
        yield env
    finally:
        stop_and_reap(repo)
