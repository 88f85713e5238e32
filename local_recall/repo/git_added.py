"""When git first saw a file: the time of the commit that added it. A memory written by hand
without `occurred_at` takes this time (the same in every clone), else the file's own mtime."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from local_recall.repo.git_run import git_output

# A hook may be the first to read such a file (the catalog then keeps its time): git's walk
# back to the commit that added it is bounded, the file's mtime is the answer past it.
_TIMEOUT = 2.0


def added_at(path: Path, environ: Mapping[str, str]) -> datetime | None:
    """The author time of the newest commit that added `path` (git walks back from HEAD only
    that far: `-1`); None when git has no such commit (untracked, not a checkout, git missing,
    a walk over the time limit)."""
    found = git_output(
        path.parent,
        environ,
        *("log", "-1", "--diff-filter=A", "--format=%at", "--", path.name),
        timeout=_TIMEOUT,
    )
    lines = found.split() if found else []
    try:
        return datetime.fromtimestamp(int(lines[-1]), UTC) if lines else None
    except (ValueError, OverflowError, OSError):
        return None


def file_time(path: Path, environ: Mapping[str, str]) -> datetime:
    """`added_at`, else the file's modification time, else the epoch (it is gone)."""
    found = added_at(path, environ)
    if found is not None:
        return found
    try:
        return datetime.fromtimestamp(path.lstat().st_mtime, UTC)
    except OSError:
        return datetime.fromtimestamp(0, UTC)
