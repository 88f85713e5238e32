"""Running a read-only git command for the repository layer: never taking git's optional
index lock (a read must not block a person's `git commit`), in the C locale (its output is
parsed), bounded in time."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path


def run_git(
    folder: Path, environ: Mapping[str, str], *args: str, timeout: float = 10
) -> subprocess.CompletedProcess[str]:
    """`git -C folder ARGS`; OSError (no git) and SubprocessError (the timeout) propagate."""
    return subprocess.run(
        ["git", "-C", str(folder), *args],
        capture_output=True,
        text=True,
        env={**environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        timeout=timeout,
        check=False,
    )


def git_output(
    folder: Path, environ: Mapping[str, str], *args: str, timeout: float = 10
) -> str | None:
    """`run_git`'s stdout without its trailing newlines; None when git failed or is missing."""
    try:
        done = run_git(folder, environ, *args, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip("\n") if done.returncode == 0 else None
