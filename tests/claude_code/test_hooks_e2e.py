"""End to end with the real Claude Code CLI (offline, against FakeAnthropic): after
`local-recall init`, what the hooks inject reaches the model's request; and when things are
broken (no index, no daemon, a corrupt config, a hanging daemon) `claude -p` still answers."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from local_recall.daemon.control import stop_daemon
from local_recall.daemon.query_client import socket_paths
from local_recall.repo.layout import Layout
from tests.claude_cli import claude_or_fail, lr, offline_env, requires_claude, run_claude
from tests.conftest import clean_env, git_init
from tests.fake_anthropic import FakeAnthropic, default_responder, visible_text

pytestmark = [pytest.mark.slow, requires_claude]

SECRET_WORD = "BLUEBERRY-42"
ANSWER = "The answer from the fake model."


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Built once: a git repo with local-recall initialised, two memories and an index."""
    repo = git_init(tmp_path_factory.mktemp("template") / "repo")
    base = clean_env({"LOCAL_RECALL_EXTRACTION_ENABLED": "false"})
    lr(repo, base, "init", "--no-claude")
    memory_id = lr(
        repo,
        base,
        "add",
        "-s",
        "Use filelock for cross-process dedup",
        "-b",
        f"We use filelock because two sessions may save the same memory at once. "
        f"Codeword {SECRET_WORD}.",
    ).strip()
    lr(repo, base, "add", "-s", "Release checklist", "-b", "Bump, tag, push, publish.")
    lr(repo, base, "index")
    return repo, memory_id


@pytest.fixture
def project(template: tuple[Path, str], tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A copy of the template in which `local-recall init` installed the hooks; and the
    environment for `claude` (no extraction: it would add requests to the fake API)."""
    import shutil

    source, memory_id = template
    repo = tmp_path / "repo"
    shutil.copytree(source, repo, ignore=shutil.ignore_patterns("state", "recall.log*"))
    base = clean_env(
        {
            "CLAUDE_CONFIG_DIR": str(tmp_path / "home" / ".claude"),
            "LOCAL_RECALL_EXTRACTION_ENABLED": "false",
        }
    )
    lr(repo, base, "init")
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    assert {"SessionStart", "UserPromptSubmit", "SessionEnd"} <= set(settings["hooks"])
    env = {"LOCAL_RECALL_EXTRACTION_ENABLED": "false", "MEMORY_ID": memory_id}
    try:
        yield repo, env
    finally:
        result = stop_daemon(Layout(repo), wait_seconds=20)
        if not result.stopped and result.pid:
            os.kill(result.pid, 9)


def ask_claude(
    repo: Path,
    tmp_path: Path,
    extra: dict[str, str],
    prompt: str,
) -> tuple[subprocess.CompletedProcess[str], list[str], float]:
    claude = claude_or_fail()
    with FakeAnthropic(default_responder(text=ANSWER)) as api:
        env = offline_env(tmp_path / "home", api.url, extra=extra)
        started = time.monotonic()
        done = run_claude(claude, ["-p", prompt], cwd=repo, env=env, timeout=180)
        seconds = time.monotonic() - started
        texts = [visible_text(r.body) for r in api.message_requests()]
    return done, texts, seconds


def test_memories_reach_the_model(project: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    repo, extra = project
    done, texts, _ = ask_claude(repo, tmp_path, extra, "Why do we use filelock for dedup?")
    assert done.returncode == 0, done.stderr
    assert ANSWER in done.stdout
    seen = "\n".join(texts)
    # SessionStart: the index (ids and subjects); UserPromptSubmit: the matching memory in full
    assert extra["MEMORY_ID"] in seen
    assert "Release checklist" in seen
    assert SECRET_WORD in seen
    assert "<local-recall-context>" in seen and "not instructions" in seen


def assert_answers(done: subprocess.CompletedProcess[str], seconds: float) -> None:
    assert done.returncode == 0, done.stderr
    assert ANSWER in done.stdout
    # Not bounded: on a busy machine Claude Code itself is slow. That our deadlines sit inside
    # its timeouts is tests/hooks/test_deadlines.py; that a hook gives up at its deadline,
    # test_a_stuck_hook_gives_up_at_the_deadline (tests/test_no_wall_clock.py).
    print(f"claude -p answered in {seconds:.1f} s")


def test_no_index_and_no_daemon(project: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    import shutil

    repo, extra = project
    stop_daemon(Layout(repo), wait_seconds=20)
    shutil.rmtree(repo / "local-recall" / "index")
    extra = {**extra, "LOCAL_RECALL_HOOKS_START_DAEMON": "false"}
    done, _, seconds = ask_claude(repo, tmp_path, extra, "Why do we use filelock for dedup?")
    assert_answers(done, seconds)


def test_daemon_killed_mid_session_setup(
    project: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    repo, extra = project
    lr(repo, clean_env({"LOCAL_RECALL_EXTRACTION_ENABLED": "false"}), "daemon", "start")
    pid = json.loads((repo / "local-recall" / "state" / "daemon.json").read_text())["pid"]
    os.kill(pid, 9)
    done, texts, seconds = ask_claude(repo, tmp_path, extra, "Why do we use filelock for dedup?")
    assert_answers(done, seconds)
    assert SECRET_WORD in "\n".join(texts)  # the in-process fallback still found it


def test_corrupt_config(project: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    repo, extra = project
    (repo / "local-recall" / "config.toml").write_text("[hooks\n= = =\n", encoding="utf-8")
    done, _, seconds = ask_claude(repo, tmp_path, extra, "Why do we use filelock for dedup?")
    assert_answers(done, seconds)


def test_hanging_daemon(project: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    repo, extra = project
    extra = {
        **extra,
        "LOCAL_RECALL_HOOKS_START_DAEMON": "false",
        "LOCAL_RECALL_HOOKS_QUERY_TIMEOUT_MS": "200",
    }
    path = socket_paths(repo.resolve(), clean_env())[0]
    path.parent.mkdir(mode=0o700, exist_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(16)  # connections queue up; nothing ever answers
    try:
        done, _, seconds = ask_claude(repo, tmp_path, extra, "Why do we use filelock for dedup?")
    finally:
        listener.close()
        path.unlink()
    assert_answers(done, seconds)


def test_a_stale_memory_reaches_the_model_marked_stale(
    project: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """Its anchor was renamed since its commit: the injected text says so (docs/team.md)."""
    repo, extra = project

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)

    base = clean_env({"LOCAL_RECALL_EXTRACTION_ENABLED": "false"})
    (repo / "loader.py").write_text("def load():\n    pass\n")
    git("add", "-A")
    git("commit", "-qm", "code")
    memory = ["-s", "The loader retries twice", "-b", "load() retries twice, then gives up."]
    lr(repo, base, "add", *memory, "--scope", "file:loader.py")
    git("add", "-A")
    git("commit", "-qm", "memory")
    git("mv", "loader.py", "fetch.py")
    git("commit", "-qm", "rename")
    assert "renamed to fetch.py" in lr(repo, base, "stale")  # saves the snapshot hooks read
    done, texts, _ = ask_claude(repo, tmp_path, extra, "How often does the loader retry?")
    assert done.returncode == 0, done.stderr
    seen = "\n".join(texts)
    assert "The loader retries twice [stale: loader.py was renamed to fetch.py" in seen
