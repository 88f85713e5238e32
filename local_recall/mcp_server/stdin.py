"""The MCP server's stdin: every request gets an answer, even one the SDK cannot decode.

JSON allows a lone UTF-16 surrogate (`"\\ud800"`); pydantic's JSON parser, which the mcp SDK's
stdio transport uses, refuses it, and the transport then drops the line without a reply: the
client waits for its timeout. Here each such request is rewritten, before the SDK reads it,
into the same request (same id and method) with parameters every method refuses, so the SDK
answers it with JSON-RPC error -32602 (invalid params). A notification with one is dropped, as
the SDK would do. Everything else passes unchanged. No `mcp` import: server.py wires it in.
"""

from __future__ import annotations

import io
import json
import os
import re
from typing import Any

# A \uD800-\uDFFF escape: only then can the line hold a lone surrogate (valid pairs also match)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
REFUSAL = "a string in this request is not valid Unicode (it holds a lone surrogate)"


def answerable_line(line: bytes) -> bytes | None:
    """The line the SDK should read instead of `line` (None: drop it)."""
    if not _SURROGATE_ESCAPE.search(line):
        return line
    try:
        message = json.loads(line)
    except ValueError:
        return line  # not JSON: the SDK's own handling
    if not _has_lone_surrogate(message):
        return line
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return None  # a notification or a response: nothing to answer
    method, request_id = message["method"], message["id"]
    if _has_lone_surrogate(method) or _has_lone_surrogate(request_id):
        return None  # cannot be named in a reply either
    refused = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {"_meta": REFUSAL}}
    return json.dumps(refused).encode()


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(item) for item in value)
    return False


class AnswerableStdin(io.RawIOBase):
    """A raw stream over `fd` that hands out whole lines passed through `answerable_line`.
    It has no `fileno()`, so the SDK reads through it rather than from the descriptor."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._pending = b""  # the start of a line not yet complete
        self._ready = b""  # lines ready to be read

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._ready:
            chunk = os.read(self._fd, 65536)
            if not chunk:  # end of input: the last line, even without its newline
                self._ready, self._pending = answerable_line(self._pending) or b"", b""
                if not self._ready:
                    return 0
                break
            *lines, self._pending = (self._pending + chunk).split(b"\n")
            kept = (answerable_line(line) for line in lines)
            self._ready = b"".join(line + b"\n" for line in kept if line is not None)
        size = min(len(buffer), len(self._ready))
        buffer[:size] = self._ready[:size]
        self._ready = self._ready[size:]
        return size


def answerable_stdin() -> io.TextIOWrapper:
    """Take over fd 0: the protocol is read from a private copy through `AnswerableStdin`, and
    fd 0 points at the null device, so a child process cannot read protocol bytes."""
    private = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    reader = io.BufferedReader(AnswerableStdin(private))
    return io.TextIOWrapper(reader, encoding="utf-8", errors="replace")
