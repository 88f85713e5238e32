"""Each session's record of what it was shown (learning/shown_log.py), on real files: one file per
session named by a hash, appended per prompt, read from its tail, never through a symlink, old
sessions pruned."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from local_recall.learning.shown import ShownLine, shown_of
from local_recall.learning.shown_log import (
    MAX_READ_BYTES,
    SESSIONS_DIR,
    append_shown,
    prune,
    read_shown,
    record_path,
)

A = "aaaaaaaa-0000-4000-8000-000000000001"
B = "bbbbbbbb-0000-4000-8000-000000000002"


def test_a_sessions_record_is_appended_and_read_back(tmp_path: Path) -> None:
    append_shown(tmp_path, "s1", ShownLine("t1", "p1", (A,), ()))
    append_shown(tmp_path, "s1", ShownLine("t2", "p2", (), (B,)))
    append_shown(tmp_path, "s2", ShownLine("t3", "p3", (B,), ()))
    assert [line.prompt_id for line in read_shown(tmp_path, "s1")] == ["p1", "p2"]
    assert shown_of(read_shown(tmp_path, "s1")).full == {A}
    assert read_shown(tmp_path, "") == [] and read_shown(tmp_path, "never") == []
    append_shown(tmp_path, "", ShownLine("t", "p", (A,), ()))  # no session: nothing kept
    assert len(list((tmp_path / SESSIONS_DIR).iterdir())) == 2


def test_an_odd_session_id_names_no_other_path(tmp_path: Path) -> None:
    path = record_path(tmp_path, "../../etc/passwd\n\ud800")
    assert path.parent == tmp_path / SESSIONS_DIR and path.name.endswith(".jsonl")


def test_a_planted_symlink_is_neither_read_nor_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    theirs = outside / "old-notes.jsonl"  # old: what a prune through the link would delete
    theirs.write_text("keep me\n")
    os.utime(theirs, (0, 0))
    state = tmp_path / "state"
    state.mkdir()
    (state / SESSIONS_DIR).symlink_to(outside, target_is_directory=True)
    with pytest.raises(OSError):
        append_shown(state, "s1", ShownLine("t", "p", (A,), ()))
    assert list(outside.iterdir()) == [theirs] and theirs.read_text() == "keep me\n"
    assert prune(state / SESSIONS_DIR) == 0
    target = tmp_path / "secret.jsonl"
    target.write_text(ShownLine("t", "p", (A,), ()).to_line())
    (state / SESSIONS_DIR).unlink()
    (state / SESSIONS_DIR).mkdir()
    record_path(state, "s2").symlink_to(target)
    assert read_shown(state, "s2") == []
    with pytest.raises(OSError):
        append_shown(state, "s2", ShownLine("t", "p", (B,), ()))
    assert B not in target.read_text()


def test_a_huge_record_is_read_from_its_tail(tmp_path: Path) -> None:
    path = record_path(tmp_path, "s1")
    path.parent.mkdir(parents=True)
    junk = "x" * 1000 + "\n"
    path.write_text(
        junk * (3 * MAX_READ_BYTES // len(junk)) + ShownLine("t", "last", (A,), ()).to_line()
    )
    shown = read_shown(tmp_path, "s1")
    assert [line.prompt_id for line in shown] == ["last"]  # junk lines skipped, tail kept


def test_idle_sessions_are_pruned(tmp_path: Path) -> None:
    append_shown(tmp_path, "old", ShownLine("t", "p", (A,), ()))
    append_shown(tmp_path, "new", ShownLine("t", "p", (A,), ()))
    old = record_path(tmp_path, "old")
    os.utime(old, (0, 0))
    assert prune(tmp_path / SESSIONS_DIR) == 1
    assert not old.exists() and record_path(tmp_path, "new").exists()
