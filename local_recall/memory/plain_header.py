"""A memory header in the one shape local-recall writes, read without PyYAML's constructor.

A first scan parses every memory file's header. Through PyYAML (libyaml's parser, then its
pure-Python constructor and resolver) that was ~80 µs a header, a quarter of what a file cost:
~8 s of CPU at 100,000 memories. The renderer (format.py) writes one shape:
`key: text` lines, and `- text` lines under a key with no value. `plain_header` reads exactly
that shape and returns what the safe loader returns for it; for anything else (a comment, a
flow collection, an anchor, an alias, a tag, a block scalar, an indented line, a quote with an
escape, a duplicate key, a character outside the plain printable set, a value YAML would read
as a number, a date, a boolean or null) it answers None and the caller loads the header through
the guard (yaml_guard.py) as before. A hostile header therefore takes the same path as before;
tests/memory/test_plain_header.py compares both readers on generated headers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

# libyaml's loader resolves plain scalars with these rules (first character -> [(tag, regex)])
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):(?: (.+))?")
# YAML's printable characters minus tab, NEL, the line and paragraph separators and the BOM
_PRINTABLE = re.compile(
    r"[\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]*"
)
_PLAIN_START = frozenset("-?:,[]{}#&*!|>'\"%@` ")  # indicators: a plain scalar cannot start so


def plain_header(header: str) -> dict[str, Any] | None:
    """The header's mapping (values: text, None, or lists of text), or None when the header is
    not in the written shape and must go through the YAML loader."""
    if not header or not _PRINTABLE.fullmatch(header):
        return None
    resolvers = _Loader.yaml_implicit_resolvers  # the loader's own rules, read at call time
    data: dict[str, Any] = {}
    items: list[str] | None = None  # the list being filled, under the last key without a value
    for line in header.split("\n"):
        if line[:2] == "- " and len(line) > 2:  # an item: what `- (.+)` matches in a line
            if items is None or (text := _text(line[2:], resolvers)) is None:
                return None
            items.append(text)
            continue
        entry = _KEY_LINE.fullmatch(line)
        if entry is None:
            return None
        key, raw = entry.groups()
        if key in data or not _is_text(key, resolvers):
            return None
        if raw is None:
            items = []
            data[key] = items
            continue
        items = None
        if (value := _text(raw, resolvers)) is None:
            return None
        data[key] = value
    return {key: (value if value != [] else None) for key, value in data.items()}


def _text(raw: str, resolvers: Mapping[str | None, Any]) -> str | None:
    """A one-line scalar as the safe loader reads it, when that is text; else None."""
    first, last = raw[0], raw[-1]
    if first == '"':  # without escapes, its text is what is between the quotes
        inner = raw[1:-1]
        return None if len(raw) < 2 or last != first or '"' in inner or "\\" in inner else inner
    if first == "'":  # how the renderer quotes a text holding ': ' or ' #'; '' is one quote
        inner = raw[1:-1]
        if len(raw) < 2 or last != first or "'" in inner.replace("''", ""):
            return None
        return inner.replace("''", "'")
    if first in _PLAIN_START or last in ": " or ": " in raw or " #" in raw:
        return None
    return raw if _is_text(raw, resolvers) else None


def _is_text(plain: str, resolvers: Mapping[str | None, Any]) -> bool:
    """Does YAML's implicit typing leave this plain scalar a string (not a number, a date, a
    boolean, null, `=` or `<<`)? `resolvers`: the loader's rules by first character."""
    for first in (plain[0], None):  # None: rules for any first character (none by default)
        rules = resolvers.get(first)
        if rules:
            for _tag, regex in rules:
                if regex.match(plain):
                    return False
    return True
