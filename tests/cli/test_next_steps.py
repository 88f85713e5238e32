"""`init --agent codex|gemini|copilot` ends with that agent's next steps: how to
start it, the trust it asks for once, and a `git add` naming only files that exist."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from local_recall.cli.next_steps import next_steps
from tests.conftest import clean_env, git_init


def test_each_agent_gets_its_own_start_and_files() -> None:
    steps = next_steps(None, ["codex"])
    assert steps[0].startswith("git add local-recall .codex/hooks.json .codex/config.toml &&")
    assert steps[1].startswith("codex ") and "/hooks" in steps[1]
    assert not any(step.startswith("claude ") for step in steps)
    both = next_steps("project", ["gemini", "copilot"])
    assert [s.split()[0] for s in both[1:4]] == ["claude", "gemini", "copilot"]
    assert both[0].split(" && ")[0].split() == [
        "git",
        "add",
        "local-recall",
        ".claude/settings.json",
        ".mcp.json",  # once, though Claude Code and Copilot both use it
        ".claude/skills",
        ".claude/commands",
        ".gemini/settings.json",
        ".github/hooks/local-recall.json",
        ".github/copilot-instructions.md",
    ]
    assert "trust the folder" in both[2] and "trust the folder" in both[3]


def test_only_the_files_init_changed_are_named() -> None:
    steps = next_steps("project", [], present=["local-recall", ".mcp.json"])
    assert steps[0].startswith("git add local-recall .mcp.json &&")
    assert next_steps("project", [], present=[])[0].startswith("claude ")  # nothing to add
    assert next_steps(None)[1].startswith("local-recall init   # again without --no-claude")


@pytest.mark.parametrize("agent", ["codex", "gemini", "copilot"])
def test_the_printed_git_add_works_in_a_repository_for_that_agent_alone(
    tmp_path: Path, agent: str
) -> None:
    root = git_init(tmp_path / "repo")
    env = clean_env({"CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config")})
    done = subprocess.run(
        [sys.executable, "-m", "local_recall", "init", "--agent", agent],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    steps = done.stdout.split("Next steps:", 1)[1]
    add = next(line for line in steps.splitlines() if "git add" in line)
    command = add.split("git add", 1)[1].split("&&", 1)[0]
    added = subprocess.run(
        ["git", "add", *shlex.split(command)], cwd=root, capture_output=True, text=True
    )
    assert added.returncode == 0, (add, added.stderr)
    assert f"  2. {agent} " in steps and "claude " not in steps
