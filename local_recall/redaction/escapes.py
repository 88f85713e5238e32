"""JSON-escaped text (a transcript line, a tool result quoted in a note) hides word boundaries:
in `\\nTOKEN=` a rule's `\\b` or lookbehind sees "nTOKEN". Rules scan a copy where each escape
is blanked out, at the same length so that offsets still hold."""

from __future__ import annotations

import re
from functools import lru_cache

_ESCAPE = re.compile(r"\\[nrt\"]")


def _blank(m: re.Match[str]) -> str:
    return ' "' if m.group() == '\\"' else "  "


@lru_cache(maxsize=1)  # three finders scan the same text in a row
def blank_json_escapes(text: str) -> str:
    """`text` with `\\n`, `\\r`, `\\t` as two spaces and `\\"` as a space and a quote."""
    return _ESCAPE.sub(_blank, text) if "\\" in text else text
