"""`local-recall init` plans everything, then writes: a refusal leaves the
repository exactly as it was, and what it reports about each file is true."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import clean_env, git_init


def tree(root: Path) -> dict[str, str]:
    """Every entry below root but .git: path -> what it is (content, link target, folder)."""
    found = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git" or Path(folder) != root]
        for name in dirs + files:
            path = Path(folder) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                found[rel] = "-> " + os.readlink(path)
            elif path.is_dir():
                found[rel] = "dir"
            else:
                found[rel] = path.read_bytes().decode("utf-8", "replace")
    return found


def init(root: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = clean_env({"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")})
    return subprocess.run(
        [sys.executable, "-m", "local_recall", "init", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "plant",
    [
        ".mcp.json",
        ".claude/settings.json",
        ".claude/settings.local.json",
        "local-recall/.gitignore",
        "local-recall/.gitattributes",
        "local-recall/config.toml",
    ],
)
def test_a_refused_init_writes_nothing(tmp_path: Path, plant: str) -> None:
    root = git_init(tmp_path / "repo")
    outside = tmp_path / "outside.txt"
    outside.write_text("{}\n")
    (root / plant).parent.mkdir(parents=True, exist_ok=True)
    (root / plant).symlink_to(outside)
    before = tree(root)
    done = init(root, tmp_path / "home")
    assert done.returncode == 1, done.stdout
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert "symbolic link" in done.stderr
    after = tree(root)
    # where local-recall/ already existed, the log records the refusal: nothing else changed
    log = after.pop("local-recall/recall.log", "")
    assert after == before and all("command failed" in line for line in log.splitlines())
    assert outside.read_text() == "{}\n"
    assert not (tmp_path / "home").exists()


def test_a_refused_user_scope_init_writes_nothing_in_the_repository(tmp_path: Path) -> None:
    root = git_init(tmp_path / "repo")
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").symlink_to(tmp_path / "elsewhere.json")
    before = tree(root)
    done = init(root, home, "--scope", "user")
    assert done.returncode == 1 and "symbolic link" in done.stderr
    assert tree(root) == before


def test_init_never_says_kept_for_a_file_that_does_not_exist(tmp_path: Path) -> None:
    root = git_init(tmp_path / "repo")
    (root / ".claude").mkdir()
    (root / ".claude" / "skills").write_text("a file where a folder should be\n")
    (root / ".claude" / "commands").symlink_to(tmp_path / "nowhere")
    done = init(root, tmp_path / "home")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if "agent guidance" in line]
    assert len(lines) == 6, done.stdout
    for line in lines:
        path = Path(line.rsplit(" ", 1)[-1])
        assert "kept (differs)" not in line or path.is_file(), line
        assert "not written" in line, line
    assert any("symbolic link" in line for line in lines)
    assert any("not a folder" in line for line in lines)
    assert not (tmp_path / "nowhere").exists()
    # a file that does differ is still "kept (differs)"
    (root / ".claude" / "commands").unlink()
    (root / ".claude" / "commands").mkdir()
    (root / ".claude" / "commands" / "recall.md").write_text("my own\n")
    again = init(root, tmp_path / "home")
    assert "kept (differs)" in again.stdout and "recall.md" in again.stdout
    assert (root / ".claude" / "commands" / "recall.md").read_text() == "my own\n"
