"""The catalog's files (store.py): a base written whole and a log of what changed since.

The catalog holds every memory file's parsed entry (~0.8 KB each). Rewritten whole on every
save, it was most of what a save wrote once the relevance cache stopped being rewritten: 3.96 MB
of 4.04 at 5,000 memories, ~80 MB at 100,000. Now a save appends its entry:

    catalog-<kind>.json   {"version": v, "entries": {name: entry}}   the base (catalog_json.py)
    catalog-<kind>.log    a header line naming the base it follows (inode, size, mtime), then
                          one line per save: {"set": {name: entry}, "drop": [names]}

A log whose header names another base (the base was rewritten since) is ignored, and the next
append starts it again. Only complete lines count: a torn append (a crash) is ignored. Lines are
single `write` calls with O_APPEND, so two processes appending at once do not interleave inside a
line. Once the log that follows the base holds a quarter of the base's size, the next save writes
a new base (amortised: a save writes its own entry); so does a change larger than that quarter (a
scan after every file got a new inode: a copy, a checkout), rather than one line as large as the
base. The catalog is only a cache — each entry carries its file's stat
and is re-parsed when the file changed — so a lost append costs a parse, never a memory. Read,
appended and replaced as every base and log is (repo/base_log.py): no symlink is followed."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from local_recall.memory.catalog_json import CatalogEncoder
from local_recall.repo import base_log
from local_recall.repo.files import StatKey, stat_key

Entries = dict[str, dict[str, Any]]
COMPACT_SHARE = 0.25  # log bytes against the base's, before a save writes a new base
MAX_BYTES = 1 << 30


class CatalogFile:
    """One store's catalog: `load` what base and log say, `save` the entries a scan found (an
    append of what differs from the last load or save, or a new base)."""

    def __init__(self, path: Path, version: int) -> None:
        self.path = path
        self.log_path = path.with_suffix(".log")
        self.version = version
        self._encoder = CatalogEncoder()
        self._entries: Entries = {}
        self._stamp: tuple[StatKey, StatKey | None] | None = None  # (base, log) as last seen
        self._base: StatKey | None = None
        self._base_size = 0
        self._log_follows = False  # the log on disk follows `_base` (else: start it again)

    def load(self) -> Entries:
        """The entries, from memory when neither file changed since this process read or wrote
        them (a long-lived daemon then pays only for two stats). {} when unusable."""
        base_key, log_key = stat_key(self.path), stat_key(self.log_path)
        if base_key is None:
            return {}
        if self._stamp == (base_key, log_key):
            return self._entries
        base = _read_base(self.path, self.version)
        if base is None:
            return {}
        entries, base_key = base
        try:
            log = base_log.read_log(self.log_path, MAX_BYTES)
        except OSError:  # none, or refused: what is there keys it (the stamp stays comparable)
            replayed = None
        else:
            replayed, log_key = _replay(entries, log.lines, base_key), log.key
        self._entries = entries if replayed is None else replayed
        self._stamp, self._log_follows = (base_key, log_key), replayed is not None
        self._base, self._base_size = base_key, base_key[2]
        return self._entries

    def unchanged(self) -> bool:
        """Are both files as this process last read or wrote them (two stats)? A scan that
        finds every memory file unchanged may then skip its rebuild: no other process has
        recorded a change it has not seen."""
        return self._stamp is not None and self._stamp == (
            stat_key(self.path),
            stat_key(self.log_path),
        )

    def save(self, entries: Entries) -> None:
        """Record `entries` (never raises: a read-only checkout still lists)."""
        try:
            if not self._append(entries):
                self._write_base(entries)
        except (OSError, ValueError):
            return

    def put(self, name: str, entry: dict[str, Any]) -> None:
        """Record one file's entry (a save's), the others as last loaded or saved: its line is
        appended without comparing the other 5,000 entries (never raises, as `save`)."""
        try:
            known = self.load()  # two stats; read again if another process wrote since
            if not self._append(None, (name, entry)):
                self._write_base({**known, name: entry})
        except (OSError, ValueError):
            return

    def _append(
        self, entries: Entries | None, one: tuple[str, dict[str, Any]] | None = None
    ) -> bool:
        """Append the difference from the last load or save (`one`: that entry is the
        difference); False when a new base is due."""
        if self._stamp is None or self._base is None:
            return False
        base_key, log_key = stat_key(self.path), stat_key(self.log_path)
        if (base_key, log_key) != self._stamp:  # another process wrote since: diff unknown
            return False
        known = self._entries
        if one is not None:
            changed, dropped, entries = {one[0]: one[1]}, [], {**known, one[0]: one[1]}
        else:
            assert entries is not None
            changed = {name: e for name, e in entries.items() if known.get(name) is not e}
            dropped = [name for name in known if name not in entries]
        if not changed and not dropped:
            return True
        line = json.dumps({"set": changed, "drop": dropped}).encode() + b"\n"
        # a log that follows an older base is started again: its size is no reason for a new
        # base (it was: once a log outgrew its quarter, every save after the new base wrote
        # one more, 79 MB a save at 100,000 memories); nor is a line as large as
        # the base (most entries changed: a copied store, a checkout) appended
        logged = log_key[2] if log_key is not None and self._log_follows else 0
        if base_log.outgrown(max(logged, len(line)), self._base_size, share=COMPACT_SHARE):
            return False
        header = b"" if self._log_follows else _header(self._base)
        try:  # a log that does not follow this base is started again (cut to nothing)
            after = base_log.append(
                self.log_path, header + line, at=0 if header else None, create=True
            )
        except OSError:  # not a regular file: a new base (the log is then ignored)
            return False
        self._entries, self._log_follows = (entries if one else dict(entries)), True
        self._stamp = (self._base, after)
        return True

    def _write_base(self, entries: Entries) -> None:
        data = self._encoder.encode(self.version, entries)
        base_key = base_log.write_base(self.path, lambda handle: handle.write(data))
        if base_key is None:
            return
        self._entries, self._stamp = dict(entries), (base_key, stat_key(self.log_path))
        self._base, self._base_size = base_key, base_key[2]
        self._log_follows = False  # it follows the old base: the next append starts it again


def _read_base(path: Path, version: int) -> tuple[Entries, StatKey] | None:
    try:
        data, key = base_log.read_file(path, MAX_BYTES)
        doc = json.loads(data)
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("version") != version:
        return None
    entries = doc.get("entries")
    return (entries, key) if isinstance(entries, dict) else None


def _header(base: StatKey) -> bytes:
    return json.dumps({"base": list(base)}).encode() + b"\n"


def _replay(entries: Entries, log: tuple[bytes, ...], base: StatKey) -> Entries | None:
    """The base's entries with the log's complete lines applied; None if the log does not
    follow this base or is broken (a torn tail, with no newline, is only left out)."""
    lines = base_log.after_header(log, _header(base))
    if lines is None:
        return None
    merged = dict(entries)
    for line in lines:
        try:
            change = json.loads(line)
        except ValueError:
            return None
        if not isinstance(change, dict):
            return None
        sets, drops = change.get("set"), change.get("drop")
        if not isinstance(sets, dict) or not isinstance(drops, list):
            return None
        merged.update({k: v for k, v in sets.items() if isinstance(v, dict)})
        for name in drops:
            if isinstance(name, str):
                merged.pop(name, None)
    return merged


def entries_text(entries: Mapping[str, Any]) -> str:
    """The entries in one canonical text (tests compare a replayed catalog with a rebuilt one)."""
    return json.dumps(entries, sort_keys=True)
