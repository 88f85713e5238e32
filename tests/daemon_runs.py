"""Running the real daemon in a test: its environment, `local-recall` as a subprocess, waiting
for a condition, its status file, stopping it for sure."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from local_recall.daemon.control import stop_daemon
from local_recall.repo.layout import Layout
from tests.conftest import clean_env


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


def wait_for(condition: Callable[[], Any], timeout: float = 120.0, step: float = 0.1) -> Any:
    """`condition`'s first true value, polled; `timeout` is a hang guard, not a speed limit."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"condition not met within {timeout} s")


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
