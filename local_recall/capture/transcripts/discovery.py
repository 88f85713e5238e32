"""Which transcript files belong to this repository: `git_worktrees`, `find_transcripts`.

`<config>/projects/<encoded-cwd>/*.jsonl` files are read in place; nothing is copied. Claude
Code deletes transcripts after 30 days (`cleanupPeriodDays`), so nothing here may depend on a
file staying: the extracted memories are the durable output.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from local_recall.capture.transcripts.model import TranscriptFile
from local_recall.capture.transcripts.parse import read_lines
from local_recall.capture.transcripts.project_dirs import encode_project_dir, may_hold_sessions
from local_recall.errors import InvalidInput

logger = logging.getLogger(__name__)


def git_worktrees(repo_root: Path) -> list[Path]:
    """Every worktree of the repository holding `repo_root` (main first), from
    `git worktree list --porcelain`. Not a git repository, or no git: an empty list."""
    for extra in (["-z"], []):  # -z (git >= 2.36) keeps odd path characters intact
        try:
            done = subprocess.run(
                ["git", "-C", str(repo_root), "worktree", "list", "--porcelain", *extra],
                capture_output=True,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            logger.debug("git worktree list failed in %s: %s", repo_root, exc)
            return []
        if done.returncode == 0:
            separator = b"\0" if extra else b"\n"
            return [
                Path(os.fsdecode(record[len(b"worktree ") :]))
                for record in done.stdout.split(separator)
                if record.startswith(b"worktree ")
            ]
        logger.debug("git worktree list %s failed in %s: %s", extra, repo_root, done.stderr[-300:])
    return []


def root_forms(paths: Iterable[Path]) -> list[str]:
    """Each root as given (made absolute) and fully resolved: Claude Code records its process
    cwd, which is usually the physical path, but a logical (symlinked) one costs nothing."""
    forms: list[str] = []
    for path in paths:
        for form in (os.path.abspath(path), str(Path(path).resolve())):
            if form not in forms and form != os.sep:
                forms.append(form)
    return forms


def _is_within(cwd: str, roots: Sequence[str]) -> bool:
    for root in roots:
        base = root.rstrip("/\\")
        if cwd == root or cwd.startswith((base + "/", base + os.sep)):
            return True
    return False


_CWD_PROBE_LINES = 40
_CWD_PROBE_MAX_LINE = 1 << 20
_CWD_PROBE_MAX_BYTES = 16 << 20


def read_session_cwd(path: Path) -> str | None:
    """The `cwd` of the first entry that records one (the directory the session started in),
    or None if the first lines hold none. Oversized lines are streamed past, not loaded."""
    try:
        with path.open("rb") as stream:
            lines = read_lines(stream, 0, _CWD_PROBE_MAX_LINE, stop_after=_CWD_PROBE_MAX_BYTES)
            for line in lines:
                if line.number >= _CWD_PROBE_LINES:
                    return None
                if line.data is None:
                    continue
                try:
                    entry = json.loads(line.data)
                except ValueError:
                    continue
                if isinstance(entry, dict) and isinstance(entry.get("cwd"), str):
                    return str(entry["cwd"])
    except OSError as exc:
        logger.debug("cannot read %s: %s", path, exc)
    return None


def find_transcripts(
    repo_root: Path, claude_config_dir: Path, worktrees: Sequence[Path] = ()
) -> list[TranscriptFile]:
    """This repository's transcripts under `<claude_config_dir>/projects/`: sessions started in
    the root, in any subdirectory of it, or in one of `worktrees` (see `git_worktrees`), and
    their subagents' transcripts. A file belongs to the repo when the `cwd` its first entries
    record is inside one of those roots; when no `cwd` can be found yet, only a directory whose
    name is exactly a root's encoding counts. Sorted by path."""
    projects = claude_config_dir / "projects"
    roots = root_forms([repo_root, *worktrees])
    exact_names = {encode_project_dir(root) for root in roots}
    try:
        directories = sorted(entry for entry in projects.iterdir() if entry.is_dir())
    except OSError:
        return []
    found: list[TranscriptFile] = []
    for directory in directories:
        if not may_hold_sessions(directory.name, roots):
            continue
        exact = directory.name in exact_names
        sessions = [(path, None) for path in sorted(directory.glob("*.jsonl"))]
        subagents = [
            (path, path.parent.parent.name)
            for path in sorted(directory.glob("*/subagents/agent-*.jsonl"))
        ]
        for path, parent in [*sessions, *subagents]:
            transcript = _if_ours(path, parent, roots=roots, exact_dir=exact)
            if transcript is not None:
                found.append(transcript)
    return sorted(found, key=lambda transcript: transcript.path)


def _if_ours(
    path: Path, parent_session_id: str | None, *, roots: Sequence[str], exact_dir: bool
) -> TranscriptFile | None:
    cwd = read_session_cwd(path)
    if not ((exact_dir and cwd is None) or (cwd is not None and _is_within(cwd, roots))):
        return None
    try:
        stat = path.stat()
    except OSError:
        return None  # deleted meanwhile (Claude Code's 30-day cleanup)
    return TranscriptFile(
        path=path,
        session_id=path.stem,
        is_subagent=parent_session_id is not None,
        parent_session_id=parent_session_id,
        size=stat.st_size,
        mtime_ns=stat.st_mtime_ns,
    )


def transcript_at(path: Path) -> TranscriptFile:
    """A transcript file named directly (it need not belong to the repository). Raises
    OSError when it cannot be read."""
    stat = path.stat()
    is_subagent = path.parent.name == "subagents"
    return TranscriptFile(
        path=path,
        session_id=path.stem,
        is_subagent=is_subagent,
        parent_session_id=path.parent.parent.name if is_subagent else None,
        size=stat.st_size,
        mtime_ns=stat.st_mtime_ns,
    )


def select_transcripts(
    repo_root: Path,
    claude_config_dir: Path,
    *,
    given: Sequence[TranscriptFile] | None = None,
    only_path: Path | None = None,
) -> list[TranscriptFile]:
    """The transcripts a pass works on: `given`, else this repository's (`find_transcripts`
    over the root and its git worktrees); with `only_path`, just that file (it need not belong
    to the repository). Raises InvalidInput when `only_path` cannot be read."""
    pool = list(given) if given is not None else None
    if pool is None:
        pool = find_transcripts(repo_root, claude_config_dir, git_worktrees(repo_root))
    if only_path is None:
        return pool
    wanted = os.path.abspath(only_path)
    chosen = [f for f in pool if os.path.abspath(f.path) == wanted]
    if chosen:
        return chosen
    try:
        return [transcript_at(Path(wanted))]
    except OSError as exc:
        raise InvalidInput(f"--transcript: cannot read {only_path}: {exc.strerror}") from None
