"""Keeping a personal file out of git without touching a committed file: a line in the
repository's own `info/exclude` (`git rev-parse --git-path info/exclude`: the common git dir of
a worktree). `init` writes `.claude/settings.local.json` (this user's MCP approval), which
install.md says must stay out of git; a line in the team's `.gitignore` would be a change to
commit, `info/exclude` is this clone's alone."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from local_recall.errors import StorageError
from local_recall.repo.files import read_bytes_nofollow, write_text_atomic
from local_recall.repo.git_run import run_git as _git


def is_ignored(root: Path, relative: str, environ: Mapping[str, str]) -> bool:
    """Does git ignore `relative` (by any rule: .gitignore, info/exclude, the global one)?"""
    try:
        return _git(root, environ, "check-ignore", "-q", "--no-index", relative).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def exclude_file(root: Path, environ: Mapping[str, str]) -> Path | None:
    """This clone's info/exclude (a worktree's is its common git dir's); None outside git."""
    try:
        found = _git(root, environ, "rev-parse", "--git-path", "info/exclude")
    except (OSError, subprocess.SubprocessError):
        return None
    if found.returncode != 0 or not found.stdout.strip():
        return None
    path = Path(found.stdout.strip())
    return path if path.is_absolute() else root / path


def exclude_locally(root: Path, relative: str, environ: Mapping[str, str]) -> Path | None:
    """Add `/<relative>` to this clone's info/exclude unless git already ignores it. Returns
    the exclude file when a line was added; None when nothing was needed or possible (not a
    git checkout, git missing, a read-only .git)."""
    path = None if is_ignored(root, relative, environ) else exclude_file(root, environ)
    if path is None:
        return None
    try:
        text = read_bytes_nofollow(path).decode("utf-8", "replace")
    except FileNotFoundError:
        text = ""
    except OSError:
        return None
    line = "/" + relative.lstrip("/")
    if line in text.splitlines():
        return None
    try:
        os.makedirs(path.parent, exist_ok=True)
        separator = "" if not text or text.endswith("\n") else "\n"
        write_text_atomic(path, f"{text}{separator}{line}\n")
    except (OSError, StorageError):  # a read-only or planted .git: nothing lost, nothing said
        return None
    return path
