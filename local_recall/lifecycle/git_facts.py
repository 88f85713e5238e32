"""The git facts the lifecycle decides over, read with a handful of `git` commands per HEAD.

Never per memory: `history` is one `git log` for the whole store, `ancestors` one `git rev-list`.
Every command runs with a timeout and `GIT_OPTIONAL_LOCKS=0` (a read never takes the index lock a
user's `git commit` needs). Nothing here follows a symlink out of the repository.
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from local_recall.lifecycle.git_env import git_environment
from local_recall.lifecycle.staleness import CommitChanges, FileChange

GIT_TIMEOUT_SECONDS = 20.0
MAX_HISTORY_COMMITS = 20_000
MAX_COUNTED_BYTES = 8 << 20  # a larger anchor counts as "large": its line count is capped


@dataclass(frozen=True, slots=True)
class RepoState:
    """Where the repository is: what the lifecycle cache is keyed by."""

    head: str | None  # None: no commit yet, or not a git repository
    branch: str | None  # None: detached HEAD
    dirty: str  # a digest of the working tree's changes (staleness sees them)


def _git(root: Path, *args: str, environ: Mapping[str, str] | None = None) -> str | None:
    try:
        done = subprocess.run(
            _git_args(root, args),
            capture_output=True,
            timeout=GIT_TIMEOUT_SECONDS,
            env=git_environment(environ),
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", errors="surrogateescape")


def _git_all(
    root: Path, commands: Sequence[Sequence[str]], environ: Mapping[str, str] | None
) -> list[str | None]:
    """Several read-only git commands at once (their stdout, None for a failure): the three of
    `repo_state` cost one process's latency instead of three on the `stale` warm path."""
    procs: list[subprocess.Popen[bytes] | None] = []
    for args in commands:
        try:
            procs.append(_spawn_git(root, args, environ))
        except OSError:
            procs.append(None)
    out: list[str | None] = []
    for proc in procs:
        if proc is None:
            out.append(None)
            continue
        try:
            raw, _ = proc.communicate(timeout=GIT_TIMEOUT_SECONDS)
        except subprocess.SubprocessError:
            proc.kill()
            proc.wait()
            out.append(None)
            continue
        ok = proc.returncode == 0
        out.append(raw.decode("utf-8", errors="surrogateescape") if ok else None)
    return out


def is_tracked(root: Path, path: str, environ: Mapping[str, str] | None = None) -> bool:
    """Does git's index hold the file `path` (repo-relative, taken literally: no pathspec
    magic, no globs)? False outside a git repository."""
    out = _git(root, "--literal-pathspecs", "ls-files", "-z", "--", path, environ=environ)
    return out is not None and path in out.split("\0")


def repo_state(root: Path, environ: Mapping[str, str] | None = None) -> RepoState:
    head, branch, dirty_out = _git_all(
        root,
        [
            ("rev-parse", "-q", "--verify", "HEAD"),
            ("symbolic-ref", "-q", "--short", "HEAD"),
            ("diff", "--no-ext-diff", "--numstat", "HEAD"),
        ],
        environ,
    )
    dirty = dirty_out or ""
    return RepoState(
        head=(head.strip() or None) if head else None,
        branch=(branch.strip() or None) if branch else None,
        dirty=hashlib.sha256(dirty.encode("utf-8", "surrogateescape")).hexdigest()[:16],
    )


def parse_changes(tokens: Sequence[str]) -> tuple[FileChange, ...]:
    """Parse `--raw --numstat -z` output of one commit (or one diff) into changes.

    Raw entries (`:mode mode sha sha STATUS`, then 1 or 2 paths) say what happened to a path;
    numstat entries (`added<TAB>deleted<TAB>path`, or an empty path followed by old and new for a
    rename) say how many lines. Binary files count as one changed line each way.
    """
    status: dict[str, tuple[str, str | None]] = {}
    lines: dict[str, int] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i].lstrip("\n")
        if token.startswith(":"):
            code = token.split()[-1] if token.split() else ""
            if code[:1] in ("R", "C") and i + 2 < len(tokens):
                status[tokens[i + 2]] = (code[:1], tokens[i + 1])
                i += 3
            elif i + 1 < len(tokens):
                status[tokens[i + 1]] = (code[:1], None)
                i += 2
            else:
                i += 1
            continue
        parts = token.split("\t")
        if len(parts) == 3:
            added, deleted, path = parts
            count = (int(added) if added.isdigit() else 1) + (
                int(deleted) if deleted.isdigit() else 1
            )
            if path == "" and i + 2 < len(tokens):
                path = tokens[i + 2]
                i += 3
            else:
                i += 1
            lines[path] = lines.get(path, 0) + count
            continue
        i += 1
    changes = []
    for path, (code, old) in status.items():
        changes.append(
            FileChange(
                path=path,
                added=lines.get(path, 0),  # added + deleted: staleness needs only the sum
                old_path=old if code == "R" else None,
                removed=code == "D",
            )
        )
    return tuple(changes)


def _git_args(root: Path, args: Sequence[str]) -> list[str]:
    return ["git", "-C", str(root), *args]


def _spawn_git(
    root: Path, args: Sequence[str], environ: Mapping[str, str] | None
) -> subprocess.Popen[bytes]:
    """A git command started in the background, its stdout piped (the caller waits)."""
    return subprocess.Popen(
        _git_args(root, args),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=git_environment(environ),
    )


def history(
    root: Path,
    *,
    max_commits: int = MAX_HISTORY_COMMITS,
    environ: Mapping[str, str] | None = None,
    workers: int | None = None,
) -> list[CommitChanges]:
    """Commits reachable from HEAD along first parents, newest first, with their changes (a merge
    against its first parent, so what a merged branch changed is seen once, at the merge).

    Counting changed lines means diffing every blob: the history is cut into slices diffed by
    parallel `git log` processes (`--skip`/`--max-count`), which halves the wall time on 2 cores.
    """
    listed = _git(
        root, "rev-list", "--first-parent", f"--max-count={max_commits}", "HEAD", environ=environ
    )
    if listed is None:
        return []
    total = len(listed.split())
    if total == 0:
        return []
    slices = max(1, min(workers or os.cpu_count() or 1, 4, total // 200 or 1))
    step = -(-total // slices)
    base = ["log", "--first-parent", "-m", "-M", "-z", "--no-ext-diff", "--no-color"]
    base += ["--format=%x1e%H", "--raw", "--numstat"]
    procs = []
    try:
        for start in range(0, total, step):
            args = [*base, f"--skip={start}", f"--max-count={step}", "HEAD"]
            procs.append(_spawn_git(root, args, environ))
        outputs: list[str] = []
        for proc in procs:
            raw, _ = proc.communicate(timeout=GIT_TIMEOUT_SECONDS * 3)
            if proc.returncode != 0:
                return []
            outputs.append(raw.decode("utf-8", errors="surrogateescape"))
    except (OSError, subprocess.SubprocessError):
        return []
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    commits = []
    for out in outputs:
        for record in out.split("\x1e"):
            if not record.strip():
                continue
            tokens = record.split("\0")
            changes = parse_changes([t for t in tokens[1:] if t.strip()])
            commits.append(CommitChanges(tokens[0].strip(), changes))
    return commits


def diff_to_head(
    root: Path, since: str | None, environ: Mapping[str, str] | None = None
) -> tuple[FileChange, ...] | None:
    """Changes from `since` to HEAD; `since=None`: uncommitted changes (HEAD to working tree)."""
    args = ["diff", "-M", "-z", "--no-ext-diff", "--raw", "--numstat"]
    args += ["HEAD"] if since is None else [since, "HEAD"]
    out = _git(root, *args, environ=environ)
    if out is None:
        return None
    return parse_changes([t for t in out.split("\0") if t.strip()])


def ancestors(root: Path, environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """Every commit HEAD contains (for branch ranking: is a memory's commit merged here?)."""
    out = _git(root, "rev-list", f"--max-count={MAX_HISTORY_COMMITS * 5}", "HEAD", environ=environ)
    return frozenset(out.split()) if out else frozenset()


def line_counts(root: Path, paths: Iterable[str]) -> dict[str, int]:
    """Line counts of the given repo-relative files as they are in the working tree. A path that
    is missing, not a regular file, outside the repository or behind a symlink is left out."""
    counts: dict[str, int] = {}
    base = os.path.realpath(root)
    inside: dict[str, bool] = {}  # folder -> its real path is inside the repository
    for rel in paths:
        if rel in counts or rel.startswith("/") or ".." in rel.split("/"):
            continue
        folder, _, _ = rel.rpartition("/")
        ok = inside.get(folder)
        if ok is None:
            real = os.path.realpath(os.path.join(base, folder))
            ok = inside[folder] = real == base or real.startswith(base + os.sep)
        if not ok:
            continue
        try:
            fd = os.open(
                os.path.join(base, rel), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK
            )
        except (OSError, ValueError):
            continue
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
            data = os.read(fd, MAX_COUNTED_BYTES)
            while len(data) < MAX_COUNTED_BYTES and (more := os.read(fd, 1 << 20)):
                data += more
            counts[rel] = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        except OSError:
            continue
        finally:
            os.close(fd)
    return counts
