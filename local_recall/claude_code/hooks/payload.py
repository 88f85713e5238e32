"""A hook's input: Claude Code's stdin JSON, read with a bound and parsed into plain values.

Values are typed NamedTuples, not dataclasses: cheaper to create at import (see events.py)."""

# No `from __future__ import annotations` here: NamedTuple turns string annotations into
# ForwardRefs, compiling each one at import (~0.25 ms a field) on every prompt.

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

# What we read from stdin and parse: a 10 MB prompt is drained, not loaded (the search only
# uses the start of a prompt anyway; see salvage_string_field).
MAX_INPUT_BYTES = 1_000_000


class HookInput(NamedTuple):
    cwd: str | None = None
    prompt: str | None = None
    source: str | None = None
    transcript_path: str | None = None
    session_id: str | None = None
    truncated: bool = False


def _text(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return _clean(value) if isinstance(value, str) else None


def parse_hook_input(raw: bytes, *, truncated: bool = False) -> HookInput:
    """Claude Code's stdin JSON as plain values; fields of the wrong type are treated as absent.
    Input cut at MAX_INPUT_BYTES is not valid JSON: the fields before the cut are salvaged."""
    if truncated:
        text = raw.decode("utf-8", errors="ignore")
        return _hook_input(lambda key: salvage_string_field(text, key), truncated=True)
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than ~1000
        return HookInput()
    if not isinstance(data, dict):
        return HookInput()
    return _hook_input(lambda key: _text(data, key))


def _hook_input(field: Callable[[str], str | None], *, truncated: bool = False) -> HookInput:
    """A HookInput whose string fields are `field(key)`, key by key."""
    return HookInput(
        cwd=field("cwd"),
        prompt=field("prompt"),
        source=field("source"),
        transcript_path=field("transcript_path"),
        session_id=field("session_id"),
        truncated=truncated,
    )


_ESCAPE_TAIL = re.compile(r"(\\+)(u[0-9a-fA-F]{0,3})?$")


def _drop_partial_escape(text: str) -> str:
    """A JSON string body cut mid-escape (`\\`, `\\u12`) loses that unfinished escape."""
    match = _ESCAPE_TAIL.search(text)
    if match is None or len(match.group(1)) % 2 == 0:
        return text
    return text[: match.end(1) - 1]


def _clean(text: str) -> str:
    """Drop lone surrogates (`"\\ud800"` is valid JSON but cannot be encoded as UTF-8)."""
    return text.encode("utf-8", "ignore").decode("utf-8")


def salvage_string_field(text: str, key: str) -> str | None:
    """The value of a top-level string field from the start of a JSON object that was cut
    short; a value cut in the middle yields its beginning. None when the key is not there."""
    match = re.search(r'"' + re.escape(key) + r'"\s*:\s*"', text)
    if match is None:
        return None
    rest = text[match.end() :]
    end = re.search(r'(?<!\\)(?:\\\\)*"', rest)
    body = rest[: end.end() - 1] if end else _drop_partial_escape(rest)
    try:
        value = json.loads('"' + body + '"')
    except ValueError:
        return None
    return _clean(value) if isinstance(value, str) else None


def read_stdin(stream: Any, limit: int = MAX_INPUT_BYTES) -> tuple[bytes, bool]:
    """Up to `limit` bytes of stdin, and whether there was more. The rest is read and dropped
    in small chunks so Claude Code never blocks on a full pipe; memory stays bounded."""
    chunks: list[bytes] = []
    size = 0
    truncated = False
    while True:
        chunk = stream.read(65536)
        if not chunk:
            break
        if size < limit:
            chunks.append(chunk[: limit - size])
            truncated = truncated or len(chunk) > limit - size
        else:
            truncated = True
        size += len(chunk)
    return b"".join(chunks), truncated
