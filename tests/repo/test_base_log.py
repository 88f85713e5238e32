"""The base + append-only log mechanics the catalog, the term statistics and the vector cache
share (repo/base_log.py), on real files in tmp_path."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from local_recall.repo import base_log


def test_a_torn_tail_is_left_out_of_the_complete_lines() -> None:
    lines, length = base_log.complete_lines(b'{"base": 1}\n{"a": 1}\n{"b": ')
    assert lines == (b'{"base": 1}', b'{"a": 1}')
    assert length == 21
    assert base_log.complete_lines(b"no newline yet") == ((), 0)
    assert base_log.complete_lines(b"") == ((), 0)


def test_a_log_of_another_base_is_not_applied() -> None:
    lines = (b'{"token": "aa"}', b"one", b"two")
    assert base_log.after_header(lines, b'{"token": "aa"}\n') == (b"one", b"two")
    assert base_log.after_header(lines, b'{"token": "bb"}\n') is None
    assert base_log.after_header((b'{"token": "aa"}',), b'{"token": "aa"}') == ()
    assert base_log.after_header((), b'{"token": "aa"}\n') is None


def test_read_log_gives_complete_lines_their_length_and_the_key_read(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_bytes(b"head\nline\ntorn")
    read = base_log.read_log(log, 1000)
    assert read.lines == (b"head", b"line")
    assert read.length == 10
    info = os.stat(log)
    assert read.key == (info.st_ino, info.st_mtime_ns, 14)


def test_a_symlinked_log_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.log"
    outside.write_bytes(b"head\nline\n")
    state = tmp_path / "state"
    state.mkdir()
    (state / "x.log").symlink_to(outside)
    with pytest.raises(OSError) as refused:
        base_log.read_log(state / "x.log", 1000)
    assert refused.value.errno == errno.ELOOP
    assert base_log.complete_length(state / "x.log", 1000) == 0
    with pytest.raises(OSError):
        base_log.append(state / "x.log", b"more\n", create=True)
    assert outside.read_bytes() == b"head\nline\n"
    assert base_log.open_regular(state / "x.log") is None
    assert base_log.read_json(state / "x.log", 1000) is None


def test_a_symlinked_state_folder_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "x.log").write_bytes(b"head\n")
    (tmp_path / "state").symlink_to(real)
    with pytest.raises(OSError):
        base_log.read_log(tmp_path / "state" / "x.log", 1000)
    with pytest.raises(OSError):
        base_log.write_base(tmp_path / "state" / "x.json", lambda handle: handle.write(b"{}"))
    assert sorted(p.name for p in real.iterdir()) == ["x.log"]


def test_an_oversize_log_is_refused_and_costs_no_whole_read(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_bytes(b"line\n" * 300)  # 1,500 bytes
    with pytest.raises(OSError) as refused:
        base_log.read_log(log, 1000)
    assert refused.value.errno == errno.EFBIG
    assert base_log.complete_length(log, 1000) == 0  # no log to append to: a new base is due
    assert base_log.complete_length(log, 1500) == 1500
    assert base_log.read_json(log, 1000) is None
    assert base_log.open_regular(log, 1000) is None


def test_a_fifo_in_place_of_the_log_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "x.log"
    os.mkfifo(fifo)
    with pytest.raises(OSError):
        base_log.read_log(fifo, 1000)
    assert base_log.complete_length(fifo, 1000) == 0
    with pytest.raises(OSError):
        base_log.append(fifo, b"line\n", at=0)


def test_an_append_after_a_torn_tail_cuts_it(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_bytes(b"head\none\ntw")
    keep = base_log.complete_length(log, 1000)
    assert keep == 9
    key = base_log.append(log, b"three\n", at=keep)
    assert log.read_bytes() == b"head\none\nthree\n"
    assert key[2] == 15
    assert base_log.read_log(log, 1000).lines == (b"head", b"one", b"three")


def test_an_append_at_zero_starts_the_log_again(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_bytes(b"old head\nold line\n")
    base_log.append(log, b"new head\nline\n", at=0)
    assert log.read_bytes() == b"new head\nline\n"


def test_an_unlocked_append_goes_at_the_end_and_may_create(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    with pytest.raises(FileNotFoundError):
        base_log.append(log, b"one\n")
    base_log.append(log, b"one\n", create=True)
    base_log.append(log, b"two\n")
    assert log.read_bytes() == b"one\ntwo\n"
    assert os.stat(log).st_mode & 0o777 == 0o644 & ~_umask()


def test_a_base_is_replaced_whole_and_a_planted_symlink_is_replaced_not_followed(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside.json"
    outside.write_bytes(b"untouched")
    state = tmp_path / "state"
    state.mkdir()
    base = state / "x.json"
    base.symlink_to(outside)
    key = base_log.write_base(base, lambda handle: handle.write(b'{"v": 1}'))
    assert not base.is_symlink() and base.read_bytes() == b'{"v": 1}'
    assert outside.read_bytes() == b"untouched"
    assert key == (os.stat(base).st_ino, os.stat(base).st_mtime_ns, 8)
    key2 = base_log.write_base(base, lambda handle: handle.write(b'{"v": 22}'))
    assert key2 is not None and key2[0] != key[0]  # a new file renamed in: a new inode
    assert base_log.read_json(base, 1000) == {"v": 22}
    assert [p.name for p in state.iterdir()] == ["x.json"]  # no temp file left


def test_a_failed_base_write_leaves_the_old_base_and_no_temp_file(tmp_path: Path) -> None:
    base = tmp_path / "x.json"
    base.write_bytes(b"old")

    def fail(handle: object) -> None:
        raise OSError(errno.ENOSPC, "no space left")

    with pytest.raises(OSError):
        base_log.write_base(base, fail)
    assert base.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_a_log_is_outgrown_at_its_share_of_the_base_or_the_floor() -> None:
    assert not base_log.outgrown(24, 100, share=0.25)
    assert base_log.outgrown(25, 100, share=0.25)
    assert not base_log.outgrown(25, 100, share=0.25, floor=1000)
    assert base_log.outgrown(250, 100, share=0.25, floor=1000)
    assert base_log.outgrown(1, 0, share=0.25)


def test_read_json_is_none_for_what_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(b"[" * 100_000)
    assert base_log.read_json(path, 1 << 20) is None
    path.write_bytes(b'{"a": [1, 2]}')
    assert base_log.read_json(path, 1 << 20) == {"a": [1, 2]}
    assert base_log.read_json(tmp_path / "missing.json", 1 << 20) is None


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current
