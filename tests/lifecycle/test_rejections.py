"""Rejected hashes: a committed file that two branches can both append to and merge cleanly."""

from __future__ import annotations

import subprocess
from datetime import date
from pathlib import Path

import pytest

from local_recall.lifecycle.rejections import (
    FILENAME,
    GITATTRIBUTES_LINE,
    parse_rejections,
    read_rejections,
    remember_rejections,
    render_additions,
)

A, B, C = "a" * 64, "b" * 64, "c" * 64


def test_parse_skips_everything_that_is_not_a_hash_line() -> None:
    text = f"# header\n{A}  2026-01-01\n\nnot a hash\n<<<<<<< HEAD\n{B}\n=======\n{A.upper()}\n"
    assert parse_rejections(text) == {A, B}


def test_render_appends_only_new_hashes_with_a_header_first() -> None:
    first = render_additions("", [A, A, "zz"], date(2026, 1, 2))
    assert first.startswith("#")
    assert first.endswith(f"{A}  2026-01-02\n")
    assert render_additions(first, [A], date(2026, 1, 3)) == first
    assert parse_rejections(render_additions(first, [B], date(2026, 1, 3))) == {A, B}


def test_a_symlink_is_neither_read_nor_written(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text(f"{A}\n")
    link = tmp_path / FILENAME
    link.symlink_to(outside)
    assert read_rejections(link) == frozenset()
    with pytest.raises(OSError):
        remember_rejections(link, [B], date(2026, 1, 1))
    assert outside.read_text() == f"{A}\n"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def test_two_branches_rejecting_different_memories_merge_without_conflict(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    folder = repo / "local-recall"
    folder.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    (folder / ".gitattributes").write_text(GITATTRIBUTES_LINE + "\n")
    path = folder / FILENAME
    remember_rejections(path, [A], date(2026, 1, 1))
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    _git(repo, "checkout", "-qb", "ana")
    remember_rejections(path, [B], date(2026, 1, 2))
    _git(repo, "commit", "-qam", "ana rejects B")
    _git(repo, "checkout", "-q", "main")
    remember_rejections(path, [C], date(2026, 1, 2))
    _git(repo, "commit", "-qam", "bo rejects C")
    _git(repo, "merge", "-q", "--no-edit", "ana")  # raises on a conflict
    assert read_rejections(path) == {A, B, C}
    assert "<<<<<<<" not in path.read_text()
