"""Rejected memories, remembered by content hash so that no teammate's daemon extracts them again.

`local-recall/rejected-hashes.txt` is committed. One line per rejection: the sha256 of the
normalised body, then the date (for people reading it). Two people rejecting different memories
on two branches each append a line; `local-recall/.gitattributes` declares git's built-in `union`
merge driver for the file, so the merge keeps both lines without a conflict. Reading is tolerant:
blank lines, comments, duplicates, a hand-written line or leftover conflict markers are skipped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from datetime import date
from pathlib import Path

from local_recall.repo.files import write_text_atomic

FILENAME = "rejected-hashes.txt"
GITATTRIBUTES_LINE = f"{FILENAME} merge=union"
MAX_FILE_BYTES = 16 << 20
_LINE = re.compile(r"^([0-9a-f]{64})(?:\s|$)")
_HEADER = (
    "# Content hashes of memories a person rejected or merged away: the extraction pipeline never\n"
    "# writes these again. One per line; merged with git's union driver (see .gitattributes).\n"
)


def parse_rejections(text: str) -> frozenset[str]:
    return frozenset(m.group(1) for line in text.splitlines() if (m := _LINE.match(line.strip())))


def read_rejections(path: Path) -> frozenset[str]:
    """The remembered hashes; empty when the file is missing, unreadable, too large or a symlink
    (a planted link must not make us read outside the repository)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError:
        return frozenset()
    if len(raw) > MAX_FILE_BYTES:
        return frozenset()
    return parse_rejections(raw.decode("utf-8", errors="replace"))


def render_additions(existing_text: str, hashes: Iterable[str], today: date) -> str:
    """The file with `hashes` appended (those not already there), in first-seen order. Pure."""
    known = parse_rejections(existing_text)
    text = existing_text if existing_text.strip() else _HEADER
    if text and not text.endswith("\n"):
        text += "\n"
    added: dict[str, None] = {}
    for value in hashes:
        if _LINE.match(value) and value not in known:
            added[value] = None
    return text + "".join(f"{value}  {today.isoformat()}\n" for value in added)


def remember_rejections(path: Path, hashes: Iterable[str], today: date) -> None:
    """Append hashes to the file (atomically; callers hold the store lock)."""
    if path.is_symlink():
        raise OSError(f"{path} is a symlink; refusing to write through it")
    try:
        existing = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        existing = ""
    updated = render_additions(existing, hashes, today)
    if updated != existing:
        write_text_atomic(path, updated)
