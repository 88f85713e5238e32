"""Shared fixtures: a real git repository in tmp_path and a runner for the real CLI process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.hook_runs import StandIn

REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str


# The product's own waits, lengthened into hang guards for every test:
# `daemon start` waits 20 s by default and a loaded machine took longer to import and answer;
# likewise the hooks' own 8 s (1 s at session end): a test about what a hook answers waits for
# the answer; `search --org` answers with local hits alone after 5 s, and a loaded machine's
# org search took longer. A test about the give-up or the deadline sets a short one of its own.
HANG_GUARDS = {
    "LOCAL_RECALL_DAEMON_START_WAIT_SECONDS": "300",
    "LOCAL_RECALL_HOOK_DEADLINE_SECONDS": "120",
    "LOCAL_RECALL_ORG_TIMEOUT_SECONDS": "120",
}


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The parent's environment without anything that would point local-recall elsewhere."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOCAL_RECALL_")}
    env.pop("CLAUDE_PROJECT_DIR", None)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(HANG_GUARDS)
    if extra:
        env.update(extra)
    return env


def git_init(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "config", "user.email", "t@example.com"], check=True)
    subprocess.run(["git", "-C", str(path), "config", "user.name", "Test"], check=True)
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with `local-recall init` already run (through the library)."""
    from local_recall.recall import Recall
    from local_recall.settings import Settings

    root = git_init(tmp_path / "repo")
    Recall.open(settings=Settings(root=root, environ=clean_env())).init()
    return root


CliRunner = Callable[..., Result]


@pytest.fixture
def cli(repo: Path) -> CliRunner:
    # Claude Code's config folder is the test's own: the user's real ~/.claude (or their
    # $CLAUDE_CONFIG_DIR) may run our hooks at user scope, and `uninstall` rightly keeps
    # .mcp.json for them (a test once failed on such a machine).
    isolated = {"CLAUDE_CONFIG_DIR": str(repo.parent / "claude-config")}

    def run(
        *args: str,
        input: str | None = None,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 300,  # a hang guard: three `add`s at once passed 60 s under load
    ) -> Result:
        proc = subprocess.run(
            [sys.executable, "-m", "local_recall", *args],
            input=input,
            capture_output=True,
            text=True,
            cwd=cwd or repo,
            env=clean_env({**isolated, **(env or {})}),
            timeout=timeout,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    return run


@pytest.fixture
def stand_in(repo: Path) -> Iterator[StandIn]:
    """A stand-in daemon serving `repo`'s socket from literals (tests/hook_runs.py)."""
    from tests.hook_runs import StandIn, served_as_daemon  # it imports this module

    fake = StandIn(repo)
    with served_as_daemon(repo, fake.handle):
        yield fake
