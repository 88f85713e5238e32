"""The checked-out branch and commit, read from `.git` files (no subprocess: the SessionStart
hook asks for the branch on every session start).

`.git` may be a folder or, in worktrees and submodules, a file `gitdir: <path>`. HEAD is
`ref: refs/heads/<branch>` or a bare commit (detached). A ref is a loose file or a line of
`packed-refs` (read from the common dir of a worktree). Anything unreadable or odd gives None:
the callers treat "unknown" as "no branch filter", never as an error. The repository may be
hostile, so every read is bounded.
"""

# No `from __future__ import annotations` here: NamedTuple turns string annotations into
# ForwardRefs, compiling each one at import on the hook's path.

import re
from pathlib import Path
from typing import NamedTuple

_MAX_READ = 64 * 1024
_MAX_PACKED = 4 * 1024 * 1024
_SHA = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")


class GitHead(NamedTuple):
    branch: str | None  # None: detached, or not a git checkout
    commit: str | None


def read_git_head(root: Path) -> GitHead:
    git_dir = _git_dir(root)
    if git_dir is None:
        return GitHead(None, None)
    head = _read(git_dir / "HEAD", _MAX_READ)
    if head is None:
        return GitHead(None, None)
    head = head.strip()
    if _SHA.match(head):
        return GitHead(None, head)
    if not head.startswith("ref: "):
        return GitHead(None, None)
    ref = head[5:].strip()
    branch = ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else None
    return GitHead(branch, _resolve(git_dir, ref))


def _git_dir(root: Path) -> Path | None:
    dot_git = root / ".git"
    try:
        if dot_git.is_dir():
            return dot_git
        if not dot_git.is_file():
            return None
    except OSError:
        return None
    text = _read(dot_git, _MAX_READ)
    if text is None or not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:") :].strip())
    return target if target.is_absolute() else root / target


def _resolve(git_dir: Path, ref: str) -> str | None:
    if ".." in ref.split("/") or "\x00" in ref:
        return None
    common = git_dir
    pointer = _read(git_dir / "commondir", _MAX_READ)
    if pointer is not None and pointer.strip():
        base = Path(pointer.strip())
        common = base if base.is_absolute() else git_dir / base
    for folder in dict.fromkeys((git_dir, common)):
        loose = _read(folder / ref, _MAX_READ)
        if loose is not None and _SHA.match(loose.strip()):
            return loose.strip()
    packed = _read(common / "packed-refs", _MAX_PACKED) or ""
    for line in packed.splitlines():
        sha, _, name = line.partition(" ")
        if name.strip() == ref and _SHA.match(sha):
            return sha
    return None


def _read(path: Path, limit: int) -> str | None:
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except (OSError, ValueError):
        return None
    if len(data) > limit:
        return None
    return data.decode("utf-8", errors="replace")
