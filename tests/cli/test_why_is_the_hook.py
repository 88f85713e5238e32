"""`local-recall why` shows exactly what the prompt hook injects: on one store, the block `why
--json` reports (`context`) is the block the real hook process prints, memory for memory and
line for line, with the daemon (warm `why`, the hook's `answer` op) and without it (both in
their own processes). Real store, real index, real daemon, subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from local_recall.context.prompt_lines import (
    POINTER_HEADER,
    POINTER_HEADER_NO_TOOLS,
    POINTERS_ONLY_NO_TOOLS,
    POINTERS_ONLY_NOTICE,
)
from local_recall.recall import Recall
from local_recall.settings import Settings
from tests.conftest import git_init
from tests.daemon_runs import daemon_env, lr, status_json, stop_and_reap, wait_for
from tests.hook_runs import assert_clean, hook_env, prompt_input, run_hook

pytestmark = pytest.mark.slow  # a daemon, and each cold process loads the model

MEMORIES = [
    ("Use filelock for dedup", "Two sessions race on one file: filelock serialises saves."),
    ("Parser drops BOMs", "The parser strips a UTF-8 BOM before reading the header."),
    ("Release checklist", "Bump the version, tag, push the tag, then publish to PyPI."),
    ("Tests run through tox", "tox -e py312 runs the suite; pass pytest options after --."),
    ("CI caches the uv lock", "The CI cache key is the hash of uv.lock per Python version."),
    ("Secrets are redacted before a write", "Every memory body goes through the redactor."),
    ("Store lock", "Writers take state/store.lock " + "so that two saves never interleave. " * 30),
]
PROMPTS = [
    "why do we use filelock?",
    "how do I ship a new version",
    "What do you know about the tests?",
    "how are secrets redacted before a memory is written?",
    "a UTF-8 file with a BOM loses its first header field",
    "add a docstring to this function",
    "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    repo = git_init(tmp_path_factory.mktemp("why-hook") / "repo")
    env = daemon_env(repo)
    assert lr(repo, "init", "--no-claude", env=env).returncode == 0
    recall = Recall.open(settings=Settings(root=repo, environ=env))
    for subject, body in MEMORIES:
        recall.add(subject, body, source="cli")
    recall.sync_index()
    yield repo
    stop_and_reap(repo)


def why(repo: Path, prompt: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", "local_recall", "why", prompt, "--json"],
        capture_output=True,
        text=True,
        env=daemon_env(repo),
        cwd=repo,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert isinstance(data, dict)
    return data


def hook(repo: Path, prompt: str) -> str:
    ran = run_hook("user-prompt-submit", prompt_input(prompt, repo), repo, env=hook_env(repo))
    assert_clean(ran)
    # the command answers only before the MCP server does: its block names the CLI
    if not ran.stdout:
        return ""
    text = ran.context().replace(POINTERS_ONLY_NO_TOOLS, POINTERS_ONLY_NOTICE)
    return text.replace(POINTER_HEADER_NO_TOOLS, POINTER_HEADER)


def compare(repo: Path) -> int:
    """Every prompt's hook block against `why`'s; how many prompts got a pointer."""
    pointed = 0
    for prompt in PROMPTS:
        explained = why(repo, prompt)
        printed = hook(repo, prompt)
        assert printed == explained["context"], prompt
        for candidate in explained["candidates"]:  # type: ignore[attr-defined]
            assert candidate["tier_reason"], (prompt, candidate)
        pointed += bool(explained["pointers"])
    return pointed


def test_why_shows_the_hooks_block_warm_and_cold(store: Path) -> None:
    cold = compare(store)
    assert lr(store, "daemon", "start").returncode == 0
    wait_for(lambda: status_json(store).get("state") == "running")
    warm = compare(store)
    assert cold == warm and warm >= 2  # pointers by rank were part of what was compared
