"""Writing a JSON file someone else owns in its own style: `init` adds its entries to a
settings file and `uninstall` takes them out again, and the file must come back byte for byte
as it was — its indentation (spaces, tabs, one line) and whatever follows its closing brace
(no newline, blank lines) are the file's, not ours."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_FIRST_MEMBER = re.compile(r"\{[ \t]*\r?\n([ \t]+)\S")


def render_json_like(document: Mapping[str, Any], original: str | None) -> str:
    """`document` as JSON indented as `original` is, with its leading and trailing
    whitespace; two spaces and a final newline when there is no original (or it is empty)."""
    if original is None or not original.strip():
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    body = original.strip()
    lead = original[: len(original) - len(original.lstrip())]
    tail = original[len(original.rstrip()) :]
    return lead + json.dumps(document, indent=_indent_of(body), ensure_ascii=False) + tail


def _indent_of(body: str) -> int | str | None:
    if "\n" not in body:
        return None  # written on one line
    found = _FIRST_MEMBER.match(body)
    if found is None:
        return 2
    unit = found.group(1)
    return len(unit) if set(unit) == {" "} else unit
