"""`<private>` spans: text a user marked as not-for-memory, in any spelling of the tag.

`<private>`, `<PRIVATE>`, `< private >`, `<Private\n>`, `<private reason="...">` open a span;
`</private>` in any case or spacing closes it. An unclosed span hides everything after it (fail
closed); a stray closing tag is removed. `private_texts` collects what the spans of a session
held, so that `remove_private(text, also=...)` can remove exact repeats of it elsewhere in the
same session (the assistant quoting what the user marked private).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

# `private` must end the tag name: `<private-key>` or `<privateData>` are other tags.
_OPEN = re.compile(r"<[ \t\r\n]{0,40}+private(?![\w-])(?P<attrs>[^<>]{0,2000}+)(?P<end>>?)", re.I)
_CLOSE = re.compile(r"<[ \t\r\n]{0,40}+/[ \t\r\n]{0,40}+private[ \t\r\n]{0,40}+>", re.I)
# A tag or a repeat shorter than this is kept: removing every "yes" of a session would eat text.
MIN_REPEAT = 8
_MIN_LINE = 12


def _spans(text: str) -> Iterator[tuple[int, int, int, int]]:
    """(span start, inner start, inner end, span end) of each private span, in order."""
    at = 0
    while True:
        m = _OPEN.search(text, at)
        if m is None:
            return
        if m.group("attrs").rstrip().endswith("/") and m.group("end"):
            yield m.start(), m.end(), m.end(), m.end()  # `<private/>`: an empty span
            at = m.end()
            continue
        close = _CLOSE.search(text, m.end())
        if close is None:
            yield m.start(), m.end(), len(text), len(text)
            return
        yield m.start(), m.end(), close.start(), close.end()
        at = close.end()


def remove_private(text: str, also: Iterable[str] = ()) -> str:
    """Remove `<private>` spans (and stray closing tags), then every exact repeat of the texts
    in `also` (see `private_texts`)."""
    parts: list[str] = []
    cursor = 0
    for start, _, _, end in _spans(text):
        parts.append(text[cursor:start])
        cursor = end
    parts.append(text[cursor:])
    kept = _CLOSE.sub("", "".join(parts))
    for repeat in sorted(set(also), key=len, reverse=True):
        if len(repeat) >= MIN_REPEAT:
            kept = kept.replace(repeat, "")
    return kept


def private_texts(texts: Iterable[str]) -> frozenset[str]:
    """What the private spans in `texts` held: each span's text, stripped, and each of its lines
    long enough to be recognised (`MIN_REPEAT`, lines 12 characters)."""
    found: set[str] = set()
    for text in texts:
        for _, inner_start, inner_end, _ in _spans(text):
            inner = text[inner_start:inner_end].strip()
            if len(inner) >= MIN_REPEAT:
                found.add(inner)
            found.update(
                line.strip() for line in inner.splitlines() if len(line.strip()) >= _MIN_LINE
            )
    return frozenset(found)


def private_tags(text: str) -> Iterator[int]:
    """Offsets of every opening or closing private tag (what `scan` reports)."""
    tags = [m.start() for m in _OPEN.finditer(text)] + [m.start() for m in _CLOSE.finditer(text)]
    yield from sorted(tags)
