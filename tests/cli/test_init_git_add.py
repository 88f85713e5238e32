"""The `git add` line `init` and `uninstall` print names exactly the files they changed (what
`git status` shows, checked in a real repository with the real CLI for every combination of
agents), and `uninstall` gives every file back byte for byte as it was before `init`: files
that existed with their own indentation and trailing whitespace, and files that did not."""

from __future__ import annotations

import itertools
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import clean_env, git_init

AGENTS = ("claude", "codex", "gemini", "copilot")
COMBINATIONS = [
    list(chosen) for size in range(1, 5) for chosen in itertools.combinations(AGENTS, size)
]
# Files a team already has, each with something odd at its end (a JSON file is written back in
# its own indentation: one laid out by hand in mixed styles would come back evenly indented);
# the others init may write (.gemini/settings.json, .codex/hooks.json, …) do not exist before.
EXISTING = {
    ".mcp.json": '{\n    "mcpServers": {\n        "tracker": {\n            "command": "t"\n'
    + "        }\n    }\n}\n\n",
    ".github/copilot-instructions.md": "Be brief.\n\n",
    ".codex/config.toml": 'model = "o4"',
    ".claude/settings.json": '{\n  "permissions": {\n    "allow": []\n  }\n}\n  \n',
}
# The other way round: what did not exist above exists here, and the other way round.
EXISTING_OTHERS = {
    ".gemini/settings.json": '{\n\t"ui": {\n\t\t"theme": "Dracula"\n\t}\n}',
    ".codex/hooks.json": '{"hooks": {"Stop": [{"hooks": [{"type": "command", '
    + '"command": "true"}]}]}}\n\n\n',
    ".github/copilot-instructions.md": "",
}
WATCHED = [
    *EXISTING,
    *EXISTING_OTHERS,
    ".github/hooks/local-recall.json",
    ".claude/settings.local.json",
    ".claude/skills",
    ".claude/commands",
]


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def _run(root: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "local_recall", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _added(output: str) -> list[str]:
    """The paths of the printed `git add … && git commit …` line; [] when there is none."""
    lines = [line for line in output.splitlines() if "git add " in line]
    assert len(lines) <= 1, output
    if not lines:
        return []
    return shlex.split(lines[0].split("git add ", 1)[1].split("&&", 1)[0])


def _check_line_matches_status(root: Path, output: str) -> None:
    """Staging exactly the named paths leaves nothing unstaged, and each named path has a
    change: the line is what `git status` shows, no more, no less."""
    named = _added(output)
    if named:
        _git(root, "add", "--", *named)
    status = _git(root, "status", "--porcelain", "-uall").splitlines()
    unstaged = [line for line in status if line[0] in " ?" or line[1] != " "]
    assert unstaged == [], (named, status, output)
    for path in named:
        assert _git(root, "diff", "--cached", "--name-only", "--", path).strip(), (path, output)
    if named:
        _git(root, "commit", "-q", "-m", "step")


def _snapshot(root: Path) -> dict[str, bytes | None]:
    found: dict[str, bytes | None] = {}
    for name in WATCHED:
        path = root / name
        if path.is_dir():
            found.update(
                {str(p.relative_to(root)): p.read_bytes() for p in path.rglob("*") if p.is_file()}
            )
        else:
            found[name] = path.read_bytes() if path.is_file() else None
    return found


def _init_and_uninstall(tmp_path: Path, agents: list[str], existing: dict[str, str]) -> None:
    root = git_init(tmp_path / "repo")
    for name, text in existing.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--allow-empty", "-m", "before")
    before = _snapshot(root)
    env = clean_env({"CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config")})
    chosen = [arg for agent in agents for arg in ("--agent", agent)]
    _check_line_matches_status(root, _run(root, env, "init", *chosen))
    assert _snapshot(root) != before
    _check_line_matches_status(root, _run(root, env, "uninstall", *chosen))
    assert _snapshot(root) == before


@pytest.mark.parametrize("agents", COMBINATIONS, ids="+".join)
def test_git_add_line_and_uninstall_for_every_combination_of_agents(
    tmp_path: Path, agents: list[str]
) -> None:
    _init_and_uninstall(tmp_path, agents, EXISTING)


@pytest.mark.parametrize("agents", [["codex", "gemini", "copilot"], AGENTS], ids="+".join)
def test_the_other_files_existing_come_back_byte_for_byte(
    tmp_path: Path, agents: list[str]
) -> None:
    _init_and_uninstall(tmp_path, list(agents), EXISTING_OTHERS)


def test_copilot_after_claude_names_the_claude_settings_it_rewrites(tmp_path: Path) -> None:
    """`init --agent copilot` in a repository wired for Claude Code rewrites
    .claude/settings.json (no `mcp_tool` handler: Copilot refuses the file over one)."""
    root = git_init(tmp_path / "repo")
    env = clean_env({"CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config")})
    _check_line_matches_status(root, _run(root, env, "init"))
    output = _run(root, env, "init", "--agent", "copilot")
    assert ".claude/settings.json" in _added(output)
    _check_line_matches_status(root, output)
    again = _run(root, env, "init", "--agent", "copilot")
    assert _added(again) == [], again  # nothing changed: nothing to add
