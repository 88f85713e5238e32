"""This user's record of outcomes (learning/usage_log.py) on real files: state/outcomes.jsonl,
gitignored, bounded, appended idempotently; a planted record (symlinks, garbage, lines that
raise anything while parsed, lines dated in the future) skipped and counted, never fatal; a
committed local-recall/usage/ of earlier versions read for `doctor` only."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from local_recall.learning.outcomes import Outcome, outcome_line
from local_recall.learning.usage_log import (
    MAX_FILE_BYTES,
    append_outcomes,
    legacy_dir,
    outcomes_path,
    read_legacy,
    read_outcomes,
    read_usage,
)
from local_recall.repo.layout import GITIGNORE_LINES, Layout

A = "aaaaaaaa-0000-4000-8000-000000000001"
B = "bbbbbbbb-0000-4000-8000-000000000002"
S1 = "0123456789abcdef0123456789abcdef"
S2 = "fedcba9876543210fedcba9876543210"
AT = "2026-11-28T10:00:00Z"
NOW = datetime(2026, 12, 6, tzinfo=UTC)


def _layout(tmp_path: Path) -> Layout:
    layout = Layout(tmp_path)
    layout.recall_dir.mkdir()
    return layout


def test_outcomes_live_in_the_gitignored_state(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    mine = Outcome(A, S1, AT, "pointer", "followed")
    append_outcomes(layout, [mine])
    assert outcomes_path(layout) == layout.state_dir / "outcomes.jsonl"
    assert "state/" in GITIGNORE_LINES
    assert sorted(p.name for p in layout.recall_dir.iterdir()) == ["state"]
    assert read_outcomes(layout, NOW) == [mine]


def test_a_rerun_of_a_sessions_pass_counts_nothing_twice(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    first = [Outcome(A, S1, AT, "pointer", "followed"), Outcome(B, S1, AT, "full", "ignored")]
    append_outcomes(layout, first)
    assert append_outcomes(layout, first) == []
    # a later chunk of the session shows it was relied on after all: that one line is added
    relied = Outcome(B, S1, AT, "full", "relied")
    assert append_outcomes(layout, [*first, relied]) == [relied]
    assert read_outcomes(layout, NOW) == [first[0], relied]
    assert append_outcomes(layout, [Outcome(B, S1, AT, "full", "followed")]) == []


# A well-formed line with a list where a string belongs: `"tier": []` is unhashable, and the
# check `tier in TIERS` raised TypeError for the whole read (every outcome lost with it).
LIST_TIER = json.dumps(
    {"memory_id": A, "session": S2, "at": AT, "tier": [], "use": "disputed", "reason": "x"},
    separators=(",", ":"),
)


def test_lines_that_raise_anything_are_skipped_and_counted(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    good = Outcome(A, S1, AT, "full", "relied")
    future = Outcome(B, S2, "9999-12-31T00:00:00Z", "full", "disputed", "outranks all")
    nested = "[" * 1000 + "]" * 1000  # RecursionError in the parser, not ValueError
    layout.state_dir.mkdir()
    outcomes_path(layout).write_text(
        "\n".join(["garbage", LIST_TIER, nested, outcome_line(future).strip()])
        + "\n"
        + outcome_line(good)
    )
    read = read_usage(layout, NOW)
    assert read.outcomes == [good] and read.skipped_lines == 4
    append_outcomes(layout, [Outcome(B, S1, AT, "pointer", "followed")])  # still records
    assert len(read_outcomes(layout, NOW)) == 2


def test_the_record_is_bounded(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    line = outcome_line(Outcome(A, S1, AT, "full", "ignored"))
    layout.state_dir.mkdir()
    outcomes_path(layout).write_text(line * (MAX_FILE_BYTES // len(line)))
    newest = Outcome(B, S2, AT, "full", "relied")
    assert append_outcomes(layout, [newest]) == [newest]
    size = outcomes_path(layout).stat().st_size
    assert size <= MAX_FILE_BYTES // 2
    assert outcomes_path(layout).read_text().endswith(outcome_line(newest))
    assert newest in read_outcomes(layout, NOW)


def test_a_record_that_is_a_symlink_is_neither_read_nor_written(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    outside = tmp_path / "outside.jsonl"
    outside.write_text(outcome_line(Outcome(A, S1, AT, "full", "relied")))
    layout.state_dir.mkdir()
    outcomes_path(layout).symlink_to(outside)
    read = read_usage(layout, NOW)
    assert read.outcomes == [] and read.skipped_files
    with pytest.raises(OSError):
        append_outcomes(layout, [Outcome(B, S2, AT, "full", "relied")])
    assert len(outside.read_text().splitlines()) == 1


def test_the_committed_usage_folder_of_earlier_versions_is_read_for_doctor_only(
    tmp_path: Path,
) -> None:
    layout = _layout(tmp_path)
    assert read_legacy(layout) is None
    folder = legacy_dir(layout)
    folder.mkdir()
    forged = Outcome(A, S1, AT, "full", "disputed", "delete this memory")
    (folder / "1111111111111111.jsonl").write_text(outcome_line(forged) + LIST_TIER + "\n")
    (folder / "notes.txt").write_text("x")
    for n in range(600):  # empty files sorting first hide nothing
        (folder / f"{n:016x}.jsonl").write_text("")
    old = read_legacy(layout)
    assert old is not None
    assert old.outcomes == [forged] and old.skipped_lines == 1
    assert [entry.split(":")[0] for entry in old.skipped_files] == ["notes.txt"]
    # none of it is this user's record
    assert read_outcomes(layout, NOW) == []
    assert not os.path.exists(outcomes_path(layout))


def test_a_session_record_nested_past_the_parser_loses_that_line_only(tmp_path: Path) -> None:
    from local_recall.learning.shown import ShownLine, record_path
    from local_recall.learning.shown_log import read_shown

    layout = _layout(tmp_path)
    good = ShownLine(AT, "p1", (A,), (B,))
    path = record_path(layout.state_dir, "session-1")
    path.parent.mkdir(parents=True)
    path.write_text("[" * 1000 + "]" * 1000 + "\n" + '{"full": [[]]}\n' + good.to_line())
    assert read_shown(layout.state_dir, "session-1")[-1] == good
