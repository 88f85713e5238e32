"""Where a memory is made: the commit and branch checked out.

Read from the `.git` files when they say (repo/git_head.py: no subprocess), else with ONE
`git rev-parse` (a root below the git top level, a reftable repository). A save from the CLI,
the MCP server or the API asks once; the extraction pipeline once per pass, never per memory.
Outside a git repository, in a repository without commits, or when git is missing, nothing is
known and the keys stay absent.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

from local_recall.lifecycle.git_env import git_environment
from local_recall.memory.model import Provenance
from local_recall.repo.git_head import read_git_head

GIT_TIMEOUT_SECONDS = 5.0


def parse_rev_parse(output: str) -> Provenance:
    """`git rev-parse HEAD --symbolic-full-name HEAD` output → commit and branch. Pure.

    The second line is `refs/heads/<branch>`, or `HEAD` when detached (no branch)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    if len(lines) != 2 or len(lines[0]) not in (40, 64):
        return Provenance()
    commit, ref = lines
    branch = ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else None
    return Provenance(commit=commit.lower(), branch=branch or None)


def current_head(root: Path, environ: Mapping[str, str] | None = None) -> Provenance:
    """The commit and branch of the repository at `root` now (both None when unknown)."""
    read = read_git_head(root)
    if read.commit is not None:
        return Provenance(commit=read.commit, branch=read.branch)
    dot_git = root / ".git"
    if dot_git.is_dir() and not (dot_git / "reftable").exists():
        return Provenance()  # a repository without commits yet: nothing to ask git
    env = git_environment(environ)
    args = ["git", "-C", str(root), "rev-parse", "HEAD", "--symbolic-full-name", "HEAD"]
    try:
        done = subprocess.run(
            args, capture_output=True, timeout=GIT_TIMEOUT_SECONDS, env=env, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return Provenance()
    if done.returncode != 0:
        return Provenance()
    return parse_rev_parse(done.stdout.decode("utf-8", errors="replace"))
