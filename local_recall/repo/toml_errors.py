"""What a TOML error in config.toml says beyond tomllib's own words: the line it stops at, as
written, and — for a table declared twice (a user appends their own `[learning]` after the one
`init` writes) — where the first one is, so the fix (merge them) is found without counting
lines. Pure: the text and the error's message in, one line out."""

from __future__ import annotations

import re

_AT_LINE = re.compile(r"\(at line (\d+), column \d+\)")
_TWICE = re.compile(r"Cannot declare \(((?:'[^']*',? ?)+)\) twice")
_MAX_SHOWN = 80


def toml_error_detail(text: str, message: str) -> str:
    """`message` (tomllib's), followed by the line it names and the first declaration of a
    table declared twice; `message` alone when it names no line."""
    found = _AT_LINE.search(message)
    lines = text.splitlines()
    if found is None or not 1 <= int(found.group(1)) <= len(lines):
        return message
    number = int(found.group(1))
    shown = lines[number - 1].strip()
    shown = shown if len(shown) <= _MAX_SHOWN else shown[: _MAX_SHOWN - 1] + "…"
    detail = f"{message}: line {number} is `{shown}`"
    twice = _TWICE.search(message)
    if twice is not None:
        keys = re.findall(r"'([^']*)'", twice.group(1))
        header = re.compile(
            r"^\s*\[\s*" + r"\s*\.\s*".join(re.escape(k) for k in keys) + r"\s*\]\s*(#.*)?$"
        )
        first = next(
            (n for n, line in enumerate(lines[: number - 1], 1) if header.match(line)), None
        )
        if first is not None:
            detail += f", already declared at line {first}: keep one [{'.'.join(keys)}] table"
    return detail
