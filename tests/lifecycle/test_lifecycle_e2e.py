"""End to end with the real Claude Code CLI (offline, against FakeAnthropic): a session receives
a memory the pipeline wrote as unreviewed marked `[unreviewed]`, and a memory whose anchored
file was deleted since marked `[stale: …]` — through the hooks `local-recall init` installed."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from local_recall.daemon.control import stop_daemon
from local_recall.recall import Recall
from local_recall.repo.layout import Layout
from local_recall.settings import Settings
from tests.claude_cli import claude_or_fail, lr, offline_env, requires_claude, run_claude
from tests.conftest import clean_env, git_init
from tests.fake_anthropic import FakeAnthropic, default_responder, visible_text

pytestmark = [pytest.mark.slow, requires_claude]

UNREVIEWED_SUBJECT = "Deploys go through the blue-green switch"
STALE_SUBJECT = "The ledger module keeps one lock per account kind"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    repo = git_init(tmp_path / "repo")
    base = clean_env(
        {
            "CLAUDE_CONFIG_DIR": str(tmp_path / "home" / ".claude"),
            "LOCAL_RECALL_EXTRACTION_ENABLED": "false",
        }
    )
    (repo / "src").mkdir()
    (repo / "src" / "ledger.py").write_text("LOCKS = {}\n" * 20)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "ledger")
    lr(repo, base, "init", "--no-claude")
    recall = Recall.open(settings=Settings(root=repo, environ=base))
    # As an agent's save through MCP (or an extraction) writes it: unreviewed.
    recall.save(
        UNREVIEWED_SUBJECT,
        "Every deploy flips the blue-green switch after the smoke tests pass.",
        reviewed=False,
    )
    # Anchored to src/ledger.py at this commit; the file is then deleted.
    lr(
        repo,
        base,
        "add",
        "-s",
        STALE_SUBJECT,
        "-b",
        "The ledger module keeps one lock per account kind so transfers never deadlock.",
        "--scope",
        "file:src/ledger.py",
    )
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "memories")
    git(repo, "rm", "-q", "src/ledger.py")
    git(repo, "commit", "-qm", "drop the ledger")
    stale = json.loads(lr(repo, base, "stale", "--json"))
    assert any(STALE_SUBJECT in json.dumps(row) for row in stale), stale
    lr(repo, base, "index")
    lr(repo, base, "init")  # the hooks and the MCP server, project scope
    try:
        yield repo
    finally:
        result = stop_daemon(Layout(repo), wait_seconds=20)
        if not result.stopped and result.pid:
            os.kill(result.pid, 9)


def ask(repo: Path, tmp_path: Path, prompt: str) -> str:
    with FakeAnthropic(default_responder(text="ok")) as api:
        env = offline_env(
            tmp_path / "home", api.url, extra={"LOCAL_RECALL_EXTRACTION_ENABLED": "false"}
        )
        done = run_claude(claude_or_fail(), ["-p", prompt], cwd=repo, env=env, timeout=180)
        assert done.returncode == 0, done.stderr
        return "\n".join(visible_text(r.body) for r in api.message_requests())


def _line_with(text: str, needle: str) -> str:
    lines = [line for line in text.splitlines() if needle in line]
    assert lines, f"{needle!r} was not injected"
    return "\n".join(lines)


def test_a_session_sees_unreviewed_and_stale_memories_marked(project: Path, tmp_path: Path) -> None:
    seen = ask(project, tmp_path, "How do deploys use the blue-green switch?")
    assert "[unreviewed]" in _line_with(seen, UNREVIEWED_SUBJECT)
    seen = ask(project, tmp_path, "Why does the ledger module keep one lock per account kind?")
    line = _line_with(seen, STALE_SUBJECT)
    assert "[stale:" in line and "deleted" in line
