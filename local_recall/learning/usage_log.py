"""The committed record of outcomes (learning/outcomes.py): `local-recall/usage/<writer>.jsonl`,
one append-only file per writer (docs/hooks.md#what-is-learned).

Why per writer: a team learns from every teammate's sessions, so the record is committed; one
file per person means two people never append to the same file, and a git merge of their work
only adds files (no conflict, nothing rewritten). Counts are never kept in a memory's
frontmatter, which every session would rewrite. The writer is a short hash of the committer's
`git config user.email` (of the user and machine when unset): stable across sessions, says
nothing readable about the person.

The folder is committed, so it may be hostile: only `<16 hex>.jsonl` regular files are read,
never through a symbolic link, each from its tail past MAX_FILE_BYTES; any other entry and any
line that does not validate is skipped and counted (`UsageRead`), never fatal.
"""

import getpass
import hashlib
import os
import platform
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from local_recall.learning.outcomes import (
    USE_RANK,
    Outcome,
    one_per_session,
    outcome_line,
    parse_counted,
)
from local_recall.learning.shown import ShownLine, parse_lines, record_path
from local_recall.repo.files import open_append_nofollow, read_tail_nofollow, through_symlink
from local_recall.repo.layout import Layout

USAGE_DIRNAME = "usage"
# A year of one person's sessions at ~20 memories shown each is ~3 MB; past this, the newest.
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_FILES = 500  # writers: a team far larger than this would need a different design
DISPUTED = "disputed"
_WRITER_FILE = re.compile(r"[0-9a-f]{16}\.jsonl")
_GIT_TIMEOUT_SECONDS = 5
# A session's record is read on every prompt: its tail only, past this (a long session's
# earliest prompts then count as unseen, which costs a repeat, never a miss).
MAX_READ_BYTES = 128 * 1024


class UsageRead(NamedTuple):
    outcomes: list[Outcome]
    skipped_lines: int  # lines that did not parse or validate
    skipped_files: tuple[str, ...]  # entries of usage/ not read, with why ("name: why")


def usage_dir(layout: Layout) -> Path:
    return layout.recall_dir / USAGE_DIRNAME


def writer_name(email: str, *, user: str, host: str) -> str:
    """The writer's file stem: 16 hex of the email, or of user@host when there is none."""
    key = f"email:{email.strip().lower()}" if email.strip() else f"local:{user}@{host}"
    return hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:16]


def current_writer(root: Path) -> str:
    """This user's writer name in the repository at `root`."""
    try:
        done = subprocess.run(
            ["git", "config", "user.email"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_SECONDS,
            check=False,
        )
        email = done.stdout if done.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        email = ""
    try:
        user = getpass.getuser()
    except (OSError, KeyError):
        user = str(os.getuid())
    return writer_name(email, user=user, host=platform.node())


def read_usage(layout: Layout, *, containing: str = "") -> UsageRead:
    """Every writer's outcomes, in file-name then line order, and what was skipped.
    `containing`: only the lines holding this text are parsed (the prompt hook's cheap read of
    the disputes: a line is not parsed unless it says "disputed")."""
    directory = usage_dir(layout)
    if through_symlink(directory):
        return UsageRead([], 0, (f"{USAGE_DIRNAME}: a symbolic link",))
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return UsageRead([], 0, ())  # no usage yet (or unreadable: nothing learned, nothing lost)
    outcomes: list[Outcome] = []
    skipped_lines = 0
    skipped: list[str] = []
    read = 0
    for name in names:
        if not _WRITER_FILE.fullmatch(name):
            skipped.append(f"{name}: not a writer's file (<16 hex>.jsonl)")
            continue
        if read >= MAX_FILES:
            skipped.append(f"{name}: more than {MAX_FILES} writers")
            continue
        read += 1
        try:
            data = read_tail_nofollow(directory / name, MAX_FILE_BYTES)
        except OSError as exc:
            skipped.append(f"{name}: {exc.strerror or exc}")
            continue
        wanted = containing.encode("utf-8")  # filtered as bytes: most lines are never decoded
        lines = [line.decode("utf-8", "replace") for line in data.split(b"\n") if wanted in line]
        parsed, bad = parse_counted(lines)
        outcomes.extend(parsed)
        skipped_lines += bad
    return UsageRead(outcomes, skipped_lines, tuple(skipped))


def read_outcomes(layout: Layout) -> list[Outcome]:
    """Every writer's committed outcomes, one per (session, memory) (`one_per_session`: the
    strongest); whatever cannot be read is skipped (`read_usage`)."""
    return list(one_per_session(read_usage(layout).outcomes).values())


def read_disputes(layout: Layout) -> dict[str, str]:
    """Memory id -> why the latest session that found it wrong said so."""
    disputes = [o for o in read_usage(layout, containing=DISPUTED).outcomes if o.use == DISPUTED]
    return {o.memory_id: o.reason for o in sorted(disputes, key=lambda o: o.at)}


def append_outcomes(
    layout: Layout, outcomes: Sequence[Outcome], *, writer: str | None = None
) -> list[Outcome]:
    """Appends to this writer's file the outcomes no writer has yet for their (session,
    memory), or only with a weaker use (`USE_RANK`): re-running a session's pass adds nothing.
    Returns those appended. OSError: not written (the caller logs it)."""
    if not outcomes:
        return []
    known = {(o.session, o.memory_id): USE_RANK[o.use] for o in read_outcomes(layout)}
    new: list[Outcome] = []
    for outcome in outcomes:
        key = (outcome.session, outcome.memory_id)
        if USE_RANK[outcome.use] > known.get(key, -1):
            known[key] = USE_RANK[outcome.use]
            new.append(outcome)
    if not new:
        return []
    directory = usage_dir(layout)
    if through_symlink(directory):
        raise OSError(f"{directory} leads through a symbolic link")
    directory.mkdir(exist_ok=True)
    name = writer if writer is not None else current_writer(layout.root)
    if not _WRITER_FILE.fullmatch(f"{name}.jsonl"):
        raise OSError(f"not a writer name: {name!r}")
    fd = open_append_nofollow(directory / f"{name}.jsonl")
    try:
        # one write: O_APPEND keeps it whole
        os.write(fd, "".join(map(outcome_line, new)).encode("utf-8"))
    finally:
        os.close(fd)
    return new


def read_shown(state_dir: Path, session_id: str) -> list[ShownLine]:
    """A session's record of what it was shown (learning/shown.py); [] when there is none or
    it cannot be read."""
    if not session_id:
        return []
    try:
        data = read_tail_nofollow(record_path(state_dir, session_id), MAX_READ_BYTES)
    except OSError:
        return []
    return parse_lines(data.decode("utf-8", "replace").splitlines())
