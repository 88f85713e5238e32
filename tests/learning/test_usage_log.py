"""The committed usage record (learning/usage_log.py) on real files: one append-only file per
writer, idempotent appends, and a hostile usage/ folder (symlinks, huge files, garbage, odd
names) skipped and reported, never fatal and never followed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from local_recall.learning.outcomes import Outcome, outcome_line
from local_recall.learning.usage_log import (
    MAX_FILE_BYTES,
    append_outcomes,
    current_writer,
    read_outcomes,
    read_usage,
    usage_dir,
    writer_name,
)
from local_recall.repo.layout import GITIGNORE_LINES, Layout

A = "aaaaaaaa-0000-4000-8000-000000000001"
B = "bbbbbbbb-0000-4000-8000-000000000002"
S1 = "0123456789abcdef0123456789abcdef"
S2 = "fedcba9876543210fedcba9876543210"
AT = "2026-11-28T10:00:00Z"
ME = "1111111111111111"
YOU = "2222222222222222"


def _layout(tmp_path: Path) -> Layout:
    layout = Layout(tmp_path)
    layout.recall_dir.mkdir()
    return layout


def test_each_writer_appends_to_its_own_file_and_everyone_reads_all(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    mine = Outcome(A, S1, AT, "pointer", "followed")
    yours = Outcome(B, S2, AT, "full", "disputed", "wrong port")
    append_outcomes(layout, [mine], writer=ME)
    append_outcomes(layout, [yours], writer=YOU)
    assert sorted(p.name for p in usage_dir(layout).iterdir()) == [f"{ME}.jsonl", f"{YOU}.jsonl"]
    assert read_outcomes(layout) == [mine, yours]


def test_a_rerun_of_a_sessions_pass_counts_nothing_twice(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    first = [Outcome(A, S1, AT, "pointer", "followed"), Outcome(B, S1, AT, "full", "ignored")]
    append_outcomes(layout, first, writer=ME)
    assert append_outcomes(layout, first, writer=ME) == []
    append_outcomes(layout, first, writer=YOU)  # a teammate's daemon read the same session
    assert read_outcomes(layout) == first
    assert not (usage_dir(layout) / f"{YOU}.jsonl").exists()
    # a later chunk of the session shows it was relied on after all: that one line is added
    relied = Outcome(B, S1, AT, "full", "relied")
    assert append_outcomes(layout, [*first, relied], writer=ME) == [relied]
    assert read_outcomes(layout) == [first[0], relied]
    assert append_outcomes(layout, [Outcome(B, S1, AT, "full", "followed")], writer=ME) == []


def test_the_usage_folder_is_committed_not_ignored() -> None:
    assert not any(line.startswith("usage") for line in GITIGNORE_LINES)


def test_the_writer_is_a_stable_hash_of_the_email_or_the_user_and_machine(tmp_path: Path) -> None:
    assert writer_name("Ann@Example.com ", user="u", host="h") == writer_name(
        "ann@example.com", user="other", host="elsewhere"
    )
    assert writer_name("", user="u", host="h") != writer_name("", user="u", host="h2")
    assert len(writer_name("", user="u", host="h")) == 16
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(
        ["git", "-C", str(tmp_path), "config", "user.email", "ann@example.com"], check=True
    )
    assert current_writer(tmp_path) == writer_name("ann@example.com", user="x", host="y")


def test_a_hostile_usage_folder_is_skipped_and_reported(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    good = Outcome(A, S1, AT, "full", "relied")
    folder = usage_dir(layout)
    folder.mkdir()
    outside = tmp_path / "outside.jsonl"
    outside.write_text(outcome_line(Outcome(B, S2, AT, "full", "relied")))
    (folder / "3333333333333333.jsonl").symlink_to(outside)
    (folder / "notes.txt").write_text(outcome_line(good))
    (folder / "4444444444444444.jsonl").mkdir()
    huge = folder / "5555555555555555.jsonl"
    with huge.open("w") as handle:  # garbage past the bound, one good line at its end
        handle.write("x" * (MAX_FILE_BYTES + 10) + "\n" + outcome_line(good))
    (folder / f"{ME}.jsonl").write_text(
        'garbage\n{"memory_id": "not-a-uuid"}\n' + outcome_line(good)
    )
    read = read_usage(layout)
    assert read.outcomes == [good, good]
    assert read.skipped_lines == 2
    assert sorted(entry.split(":")[0] for entry in read.skipped_files) == [
        "3333333333333333.jsonl",
        "4444444444444444.jsonl",
        "notes.txt",
    ]


def test_a_usage_folder_that_is_a_symlink_is_neither_read_nor_written(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / f"{ME}.jsonl").write_text(outcome_line(Outcome(A, S1, AT, "full", "relied")))
    usage_dir(layout).symlink_to(outside, target_is_directory=True)
    assert read_usage(layout).outcomes == [] and read_usage(layout).skipped_files
    with pytest.raises(OSError):
        append_outcomes(layout, [Outcome(B, S2, AT, "full", "ignored")], writer=YOU)
    assert os.listdir(outside) == [f"{ME}.jsonl"]


def test_an_odd_writer_name_names_no_other_path(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    with pytest.raises(OSError):
        append_outcomes(layout, [Outcome(A, S1, AT, "full", "ignored")], writer="../../x")
