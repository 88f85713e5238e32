"""The small things a new user trips on — what to do after `init`, the
personal settings file kept out of git, a word when redaction changed the text, `-k a,b`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import CliRunner, clean_env, git_init

# A GitHub token shape (ghp_ + 36 characters): caught by the named-format rules.
TOKEN = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"


def _init(root: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = clean_env({"CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config")})
    return subprocess.run(
        [sys.executable, "-m", "local_recall", "init", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_init_ends_with_next_steps(tmp_path: Path) -> None:
    root = git_init(tmp_path / "fresh")
    done = _init(root, tmp_path)
    assert done.returncode == 0, done.stderr
    tail = done.stdout.split("Next steps:", 1)
    assert len(tail) == 2, done.stdout
    for move in ("git add local-recall", "claude", "local-recall new", "review", "doctor"):
        assert move in tail[1]


def test_init_keeps_the_personal_settings_file_out_of_git(tmp_path: Path) -> None:
    root = git_init(tmp_path / "fresh")
    assert _init(root, tmp_path).returncode == 0
    assert (root / ".claude" / "settings.local.json").is_file()
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert ".claude/settings.local.json" not in status
    assert ".claude/settings.json" in status  # the shared one is still offered to git
    subprocess.run(["git", "add", ".claude"], cwd=root, check=True)
    staged = subprocess.run(
        ["git", "diff", "--cached", "--name-only"], cwd=root, capture_output=True, text=True
    ).stdout
    assert "settings.local.json" not in staged
    # again: nothing added twice, and the team's .gitignore is not touched
    assert _init(root, tmp_path).returncode == 0
    exclude = (root / ".git" / "info" / "exclude").read_text()
    assert exclude.count("/.claude/settings.local.json") == 1
    assert not (root / ".gitignore").exists()


def test_redaction_says_what_kind_on_stderr_never_the_value(cli: CliRunner) -> None:
    added = cli("add", "--subject", "Deploy token", "--body", f"The CI uses {TOKEN} to deploy.")
    assert added.returncode == 0, added.stderr
    lines = [line for line in added.stderr.splitlines() if "redacted" in line]
    assert len(lines) == 1, added.stderr
    assert "github" in lines[0] and TOKEN not in added.stderr
    quiet = cli("add", "--subject", "Plain", "--body", "Nothing secret here.")
    assert "redacted" not in quiet.stderr
    edited = cli("edit", added.stdout.strip(), "--body", f"Now {TOKEN} again.")
    assert edited.returncode == 0 and "redacted 1 secret" in edited.stderr


def test_keywords_accept_commas(cli: CliRunner) -> None:
    added = cli("add", "-s", "Tox", "-b", "Run tox.", "--keyword", "tox, pytest", "-k", "ci")
    assert added.returncode == 0, added.stderr
    shown = json.loads(cli("show", added.stdout.strip(), "--json").stdout)
    assert shown["keywords"] == ["tox", "pytest", "ci"]
    also = cli("add", "-s", "Lint", "-b", "Run ruff.", "--keywords", "ruff,lint")
    assert also.returncode == 0, also.stderr
    assert json.loads(cli("show", also.stdout.strip(), "--json").stdout)["keywords"] == [
        "ruff",
        "lint",
    ]
