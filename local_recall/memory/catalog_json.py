"""The catalog file's bytes (store.py), encoded without re-encoding what did not change.

The catalog holds every memory's parsed fields (~0.9 KB each): at 5,000 memories a save wrote
4.4 MB of JSON encoded from scratch, ~40 ms quiet and ~150 ms under load, once per memory
written. Entries are never mutated once made (a changed file gets a new entry), so an entry
still the same object as at the last save is still the same text. The bytes are exactly
`json.dumps({"version": v, "entries": entries})`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


class CatalogEncoder:
    """Remembers each entry's JSON text, keyed by file name and the entry object itself."""

    def __init__(self) -> None:
        self._texts: dict[str, tuple[Mapping[str, Any], str]] = {}
        self._encoded = False

    def encode(self, version: int, entries: Mapping[str, Mapping[str, Any]]) -> bytes:
        if not self._texts and not self._encoded:
            # the first encoding (a first scan's; a CLI process makes no second): one call of
            # the C encoder, ~30 % faster than one per entry; the next keeps each entry's text
            self._encoded = True
            return json.dumps({"version": version, "entries": entries}).encode()
        texts: dict[str, tuple[Mapping[str, Any], str]] = {}
        parts: list[str] = []
        for name, entry in entries.items():
            known = self._texts.get(name)
            text = known[1] if known is not None and known[0] is entry else json.dumps(entry)
            texts[name] = (entry, text)
            parts.append(f"{json.dumps(name)}: {text}")
        self._texts = texts
        return f'{{"version": {json.dumps(version)}, "entries": {{{", ".join(parts)}}}}}'.encode()
