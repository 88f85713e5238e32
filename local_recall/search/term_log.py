"""The store's term statistics in `state/`: a base and an append-only log of changes.

    stats = read_term_stats(state_dir)                       # base + log; None: missing/unusable
    stamp = write_term_base(state_dir, stats)                # whole (a compaction, a first write)
    stamp = append_term_delta(state_dir, documents, delta)   # a save: its memories' terms only

`terms.json` holds `TermStats.to_json()` plus a `token`; `terms.log` starts with a line naming
that token, then one line per change: `{"documents": <the store's count>, "df": {stem: +/-n}}`.
A base rewritten whole gets a new token and a new log, so a log never applies to another base.
At 100,000 memories the base is ~1.2 MB (it grows with the vocabulary): rewriting it on every
save was most of the 1.26 MB a save wrote; a save now appends a line of its own
memory's stems (~0.3 KB), and a sync off the save path folds a long log into a new base
(`TermPolicy`). Counts are integers, so base + log equals a count from scratch exactly.

Like the rest of `state/`, the files may be planted by a hostile repository: they are read,
appended and replaced as every base and log is (repo/base_log.py: no symlink followed, sizes
capped, a torn last line ignored by readers and cut by the next writer), every line is
validated; anything wrong reads as "no statistics" and they are computed from the files.
"""

from __future__ import annotations

import contextlib
import json
import secrets
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from local_recall.repo import base_log
from local_recall.repo.files import stat_key
from local_recall.search.relevance import TermStats, term_stats_from_json

MAX_BYTES: Final = 256 * 1024 * 1024  # the base's and the log's cap (a planted file)

TERMS_JSON: Final = "terms.json"
TERMS_LOG: Final = "terms.log"

# (base's (inode, mtime_ns, size), log's) or None: what a reader or writer last saw
TermsStamp = tuple[tuple[int, int, int] | None, tuple[int, int, int] | None]


@dataclass(frozen=True, slots=True)
class TermPolicy:
    """When the log is folded into a new base: by a sync off the save path once the log is
    `share` of the base's bytes, by any sync at `hard_share`."""

    share: float = 0.25
    hard_share: float = 1.0
    min_bytes: int = 64 * 1024

    def log_too_long(self, log_bytes: int, base_bytes: int, *, compact: bool) -> bool:
        share = self.share if compact else self.hard_share
        return base_log.outgrown(log_bytes, base_bytes, share=share, floor=self.min_bytes)


DEFAULT_POLICY: Final = TermPolicy()


def terms_stamp(state_dir: Path) -> TermsStamp | None:
    """Changes whenever the statistics do (the base replaced, a line appended); None: no base."""
    base = stat_key(state_dir / TERMS_JSON)
    return None if base is None else (base, stat_key(state_dir / TERMS_LOG))


def read_term_stats(state_dir: Path) -> TermStats | None:
    return read_term_files(state_dir)[0]


def read_term_files(state_dir: Path) -> tuple[TermStats | None, bool]:
    """(The statistics: base + log, whether a change may be appended to this log)."""
    data = base_log.read_json(state_dir / TERMS_JSON, MAX_BYTES)
    stats = term_stats_from_json(data)
    if stats is None:
        return None, False
    token = data.get("token") if isinstance(data, dict) else None
    lines = _log_lines(state_dir / TERMS_LOG, token) if isinstance(token, str) else None
    if lines is None:
        return stats, False  # a base of an older version, or a log of another base: the base
    documents, df = stats.documents, stats.df
    for line in lines:
        change = _delta_of(line)
        if change is None:
            return None, False
        documents, delta = change
        apply_delta(df, delta)
    if any(count < 0 for count in df.values()):
        return None, False  # not a log of this base
    return TermStats(documents, df), True


def apply_delta(df: Counter[str], delta: Mapping[str, int]) -> None:
    """Add `delta` to `df`; a term whose count reaches 0 is removed (as if never counted)."""
    for term, by in delta.items():
        left = df.get(term, 0) + by
        if left:
            df[term] = left
        else:
            df.pop(term, None)


def _delta_of(line: object) -> tuple[int, dict[str, int]] | None:
    if not isinstance(line, dict) or set(line) != {"documents", "df"}:
        return None
    documents, df = line["documents"], line["df"]
    if not isinstance(documents, int) or documents < 0 or not isinstance(df, dict):
        return None
    if not all(isinstance(k, str) and type(v) is int for k, v in df.items()):
        return None
    return documents, df


def _log_lines(path: Path, token: str) -> list[object] | None:
    """The lines after the header naming `token`, parsed; None without a log of this base
    (missing, refused, another base's, or a complete line that is not JSON)."""
    try:
        log = base_log.read_log(path, MAX_BYTES)
    except OSError:
        return None
    lines = base_log.after_header(log.lines, _header(token))
    try:
        return None if lines is None else [json.loads(line) for line in lines]
    except ValueError:
        return None


def _header(token: str) -> bytes:
    return json.dumps({"token": token}).encode() + b"\n"


def write_term_base(state_dir: Path, stats: TermStats) -> TermsStamp | None:
    """Replace the statistics whole: a new base, then a new log naming it."""
    token = secrets.token_hex(8)
    text = json.dumps({**stats.to_json(), "token": token}).encode()
    base_log.write_base(state_dir / TERMS_JSON, lambda handle: handle.write(text))
    base_log.write_base(state_dir / TERMS_LOG, lambda handle: handle.write(_header(token)))
    return terms_stamp(state_dir)


def append_term_delta(
    state_dir: Path, documents: int, delta: Mapping[str, int]
) -> TermsStamp | None:
    """Append one change to the log (under the cache lock; a torn tail is cut first); None
    when there is no log to append to (write a base instead)."""
    path = state_dir / TERMS_LOG
    keep = base_log.complete_length(path, MAX_BYTES)
    if not keep:
        return None
    line = json.dumps({"documents": documents, "df": dict(delta)}) + "\n"
    base_log.append(path, line.encode(), at=keep)
    return terms_stamp(state_dir)


def stats_difference(ours: TermStats, theirs: TermStats) -> dict[str, int]:
    """What to add to `theirs` to make it `ours` (when the files moved under another process:
    O(vocabulary) CPU, still a line of what differs)."""
    delta = {t: c - theirs.df.get(t, 0) for t, c in ours.df.items() if c != theirs.df.get(t, 0)}
    delta.update({t: -c for t, c in theirs.df.items() if t not in ours.df})
    return delta


def remove_term_stats(state_dir: Path) -> None:
    for name in (TERMS_JSON, TERMS_LOG):
        with contextlib.suppress(OSError):
            (state_dir / name).unlink()
