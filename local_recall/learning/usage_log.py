"""This user's record of outcomes (learning/outcomes.py): `state/outcomes.jsonl`, in the
gitignored state/ of the repository (docs/hooks.md#what-is-learned).

Why not committed: what one person's sessions did with a memory is that person's data, and a
committed file every session appends to dirtied every tree and made one person's two branches
conflict with each other. What the team must see, that a session found a memory wrong, is a
claim in the memory's own file (memory/model.py `Dispute`), reviewed like any memory change.

The file is bounded: past MAX_FILE_BYTES an append keeps the newest half (rewritten atomically),
and a read takes its tail. state/ may still be planted (a hostile checkout, a synced folder):
never read through a symbolic link; a line that does not validate, or that raises anything while
it is parsed, or that is dated in the future, is skipped and counted (`UsageRead`).

A committed `local-recall/usage/` from before is read by `doctor` only (`read_legacy`), to say
how to retire it: its lines are claims nobody reviewed, so none of them is believed.
"""

import os
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NamedTuple

from local_recall.learning.outcomes import (
    USE_RANK,
    Outcome,
    one_per_session,
    outcome_line,
    parse_counted,
)
from local_recall.repo.files import (
    open_append_nofollow,
    read_tail_nofollow,
    through_symlink,
    write_text_atomic,
)
from local_recall.repo.layout import Layout

OUTCOMES_FILE = "outcomes.jsonl"  # in state/ (learning/learned.py keys its cache on it)
# A year of one person's sessions at ~20 memories shown each is ~3 MB; past this, the newest.
MAX_FILE_BYTES = 4 * 1024 * 1024
# The clock of the machine that wrote a line is this one: a little slack for a resync only.
FUTURE_SLACK = timedelta(minutes=5)

# The committed folder of earlier versions, read by `doctor` only.
LEGACY_DIRNAME = "usage"
LEGACY_MAX_FILES = 500
LEGACY_MAX_BYTES = 64 * 1024 * 1024  # over all of its files: `doctor` stays quick
_LEGACY_FILE = re.compile(r"[0-9a-f]{16}\.jsonl")


class UsageRead(NamedTuple):
    outcomes: list[Outcome]
    skipped_lines: int  # lines that did not parse or validate, or are dated in the future
    skipped_files: tuple[str, ...]  # entries not read, with why ("name: why")


def outcomes_path(layout: Layout) -> Path:
    return layout.state_dir / OUTCOMES_FILE


def legacy_dir(layout: Layout) -> Path:
    return layout.recall_dir / LEGACY_DIRNAME


def _parse(data: bytes, now: datetime) -> tuple[list[Outcome], int]:
    parsed, bad = parse_counted(data.decode("utf-8", "replace").split("\n"))
    believed = [o for o in parsed if not dated_after(o.at, now + FUTURE_SLACK)]
    return believed, bad + len(parsed) - len(believed)


def dated_after(at: str, limit: datetime) -> bool:
    """Whether `at` (an Outcome's shape-checked time) is later than `limit` (aware): a line
    dated in the future is not believed (it would outrank every real one and never decay)."""
    try:
        return datetime.fromisoformat(at) > limit
    except (ValueError, TypeError):
        return True


def read_usage(layout: Layout, now: datetime | None = None) -> UsageRead:
    """This user's outcomes in line order, and what was skipped."""
    path = outcomes_path(layout)
    try:
        data = read_tail_nofollow(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        return UsageRead([], 0, ())
    except OSError as exc:  # a symbolic link, a folder: nothing learned, nothing lost
        return UsageRead([], 0, (f"{OUTCOMES_FILE}: {exc.strerror or exc}",))
    outcomes, bad = _parse(data, now or datetime.now(UTC))
    return UsageRead(outcomes, bad, ())


def read_outcomes(layout: Layout, now: datetime | None = None) -> list[Outcome]:
    """This user's outcomes, one per (session, memory) (`one_per_session`: the strongest);
    whatever cannot be read is skipped (`read_usage`)."""
    return list(one_per_session(read_usage(layout, now).outcomes).values())


def append_outcomes(layout: Layout, outcomes: Sequence[Outcome]) -> list[Outcome]:
    """Appends the outcomes the record has not yet for their (session, memory), or only with
    a weaker use (`USE_RANK`): re-running a session's pass adds nothing. Returns those
    appended. OSError: not written (the caller logs it)."""
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
    state = layout.state_dir
    if through_symlink(state):
        raise OSError(f"{state} leads through a symbolic link")
    state.mkdir(parents=True, exist_ok=True)
    path = outcomes_path(layout)
    fd = open_append_nofollow(path)
    try:
        # one write: O_APPEND keeps it whole
        os.write(fd, "".join(map(outcome_line, new)).encode("utf-8"))
        size = os.fstat(fd).st_size
    finally:
        os.close(fd)
    if size > MAX_FILE_BYTES:
        _keep_newest(path)
    return new


def _keep_newest(path: Path) -> None:
    """The record past its bound: its newest half, whole lines, written atomically."""
    data = read_tail_nofollow(path, MAX_FILE_BYTES // 2)  # from its first whole line
    write_text_atomic(path, data.decode("utf-8", "replace"))


def read_legacy(layout: Layout) -> UsageRead | None:
    """The committed `local-recall/usage/` of earlier versions (None: there is none), for
    `doctor` to say how to retire it. Bounded: at most LEGACY_MAX_FILES writers' files, each
    from its tail, LEGACY_MAX_BYTES in all; never through a symbolic link."""
    directory = legacy_dir(layout)
    if through_symlink(directory):
        return UsageRead([], 0, (f"{LEGACY_DIRNAME}: a symbolic link",))
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return None
    outcomes: list[Outcome] = []
    skipped: list[str] = []
    skipped_lines, files, budget = 0, 0, LEGACY_MAX_BYTES
    for name in names:
        if not _LEGACY_FILE.fullmatch(name):
            skipped.append(f"{name}: not a writer's file (<16 hex>.jsonl)")
            continue
        if files >= LEGACY_MAX_FILES or budget <= 0:
            skipped.append(f"{name}: past what doctor reads")
            continue
        try:
            data = read_tail_nofollow(directory / name, min(budget, MAX_FILE_BYTES))
        except OSError as exc:
            skipped.append(f"{name}: {exc.strerror or exc}")
            continue
        files += bool(data)  # empty files sorting first hide no writer
        budget -= len(data)
        # any date: these are named to a person, never believed
        parsed, bad = parse_counted(data.decode("utf-8", "replace").split("\n"))
        outcomes.extend(parsed)
        skipped_lines += bad
    return UsageRead(outcomes, skipped_lines, tuple(skipped))
