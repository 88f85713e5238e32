"""A local stand-in for the Anthropic Messages API, as Claude Code uses it, for end-to-end tests.

The real `claude` CLI is pointed at it with ``ANTHROPIC_BASE_URL`` (see ``claude_cli.py``). It
answers ``POST /v1/messages`` (streamed as SSE when ``"stream": true``, plain JSON otherwise) and
``POST /v1/messages/count_tokens``; anything else is a 404 JSON error. Every request is recorded.

What the model "says" is scripted by a responder: ``(request_body) -> Reply``.

    with FakeAnthropic(lambda body: text_reply("hi")) as api:
        env = offline_env(tmp_path, api.url)          # from claude_cli
        ...
        assert "hello" in visible_text(api.message_requests()[0].body)
"""

from __future__ import annotations

import itertools
import json
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JSONDict = dict[str, Any]

# The tool Claude Code adds when run with `--json-schema`; the model must call it to answer.
STRUCTURED_OUTPUT_TOOL = "StructuredOutput"


@dataclass(frozen=True, slots=True)
class TextBlock:
    text: str


@dataclass(frozen=True, slots=True)
class ToolUseBlock:
    name: str
    input: Mapping[str, Any]
    id: str = field(default_factory=lambda: f"toolu_{uuid.uuid4().hex[:24]}")


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    """Extended thinking, streamed as `thinking_delta`s then one `signature_delta`."""

    thinking: str
    signature: str = "fakesig"


Block = TextBlock | ToolUseBlock | ThinkingBlock


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted answer.

    ``status`` 200 sends ``blocks``; any other status sends the Anthropic error envelope
    ``{"type": "error", "error": {"type": error_type, "message": error_message}}``.
    ``hang_seconds`` delays the answer (the connection stays open, nothing is written) — enough
    to exercise client timeouts; the server cuts hangs short when it shuts down.
    ``input_tokens`` None means "estimate from the request size" (~4 characters a token).
    """

    blocks: tuple[Block, ...] = ()
    stop_reason: str | None = None  # None: "tool_use" if a block is a tool call, else "end_turn"
    status: int = 200
    error_type: str = ""
    error_message: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    hang_seconds: float = 0.0
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


Responder = Callable[[JSONDict], Reply]


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    method: str
    path: str
    headers: Mapping[str, str]  # lower-cased names
    body: Any  # parsed JSON, or None when the body was empty / not JSON


# ---------------------------------------------------------------------------------------------
# Reply helpers


def text_reply(text: str, **kwargs: Any) -> Reply:
    return Reply(blocks=(TextBlock(text),), **kwargs)


def tool_use_reply(name: str, input: Mapping[str, Any], **kwargs: Any) -> Reply:
    return Reply(blocks=(ToolUseBlock(name, dict(input)),), **kwargs)


def blocks_reply(blocks: Sequence[Block], **kwargs: Any) -> Reply:
    return Reply(blocks=tuple(blocks), **kwargs)


def error_reply(
    status: int,
    error_type: str,
    message: str = "",
    *,
    retry_after: float | None = None,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    """An API error, e.g. ``error_reply(429, "rate_limit_error", retry_after=0)``,
    ``error_reply(500, "api_error")``, ``error_reply(529, "overloaded_error")``."""
    all_headers = dict(headers or {})
    if retry_after is not None:
        all_headers["retry-after"] = f"{retry_after:g}"
    return Reply(
        status=status,
        error_type=error_type,
        error_message=message or error_type.replace("_", " "),
        headers=all_headers,
    )


def hang_reply(seconds: float = 3600.0) -> Reply:
    """Never answers within a test's lifetime (the server ends the hang when it closes)."""
    return Reply(blocks=(TextBlock("too late"),), hang_seconds=seconds)


def tool_names(body: Mapping[str, Any]) -> list[str]:
    return [str(t.get("name")) for t in body.get("tools") or () if isinstance(t, dict)]


def tool_schema(body: Mapping[str, Any], name: str) -> JSONDict | None:
    for tool in body.get("tools") or ():
        if isinstance(tool, dict) and tool.get("name") == name:
            schema = tool.get("input_schema")
            return schema if isinstance(schema, dict) else None
    return None


def default_responder(
    structured: Callable[[JSONDict], Mapping[str, Any]] | None = None,
    text: str = "OK",
) -> Responder:
    """Answer like a cooperative model.

    If the request offers the ``StructuredOutput`` tool (what ``claude -p --json-schema`` adds)
    and the conversation has not called it yet, call it with ``structured(body)`` (default:
    ``{}``); otherwise answer ``text``.
    """

    def respond(body: JSONDict) -> Reply:
        if STRUCTURED_OUTPUT_TOOL in tool_names(body) and not _has_tool_result(body):
            payload = structured(body) if structured is not None else {}
            return tool_use_reply(STRUCTURED_OUTPUT_TOOL, payload)
        return text_reply(text)

    return respond


def _has_tool_result(body: Mapping[str, Any]) -> bool:
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        ):
            return True
    return False


# ---------------------------------------------------------------------------------------------
# What the model sees


def visible_text(body: Mapping[str, Any]) -> str:
    """All text the model would read in a Messages request: system prompt, then every message's
    text, tool calls (as JSON) and tool results, in order, joined by newlines."""
    parts: list[str] = []
    _collect(body.get("system"), parts)
    for message in body.get("messages") or ():
        if isinstance(message, dict):
            _collect(message.get("content"), parts)
    return "\n".join(parts)


def system_text(body: Mapping[str, Any]) -> str:
    parts: list[str] = []
    _collect(body.get("system"), parts)
    return "\n".join(parts)


def _collect(content: Any, parts: list[str]) -> None:
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        for block in content:
            _collect_block(block, parts)


def _collect_block(block: Any, parts: list[str]) -> None:
    if isinstance(block, str):
        parts.append(block)
        return
    if not isinstance(block, dict):
        return
    kind = block.get("type")
    if kind == "text":
        parts.append(str(block.get("text", "")))
    elif kind == "tool_use":
        parts.append(json.dumps(block.get("input", {}), ensure_ascii=False))
    elif kind == "tool_result":
        _collect(block.get("content"), parts)


def estimate_tokens(body: Mapping[str, Any]) -> int:
    """~4 characters a token over everything sent (system, messages and tool schemas)."""
    size = len(visible_text(body)) + len(json.dumps(body.get("tools") or [], ensure_ascii=False))
    return max(1, size // 4)


# ---------------------------------------------------------------------------------------------
# The server


class FakeAnthropic:
    """Threaded HTTP server on 127.0.0.1 (ephemeral port). Use as a context manager."""

    def __init__(self, responder: Responder | None = None) -> None:
        self.responder: Responder = responder or default_responder()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._ids = itertools.count(1)
        self._server = _QuietServer(("127.0.0.1", 0), _make_handler(self))
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()  # releases hanging handlers
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    def message_requests(self) -> list[RecordedRequest]:
        """Only the ``POST /v1/messages`` calls (what the model was asked)."""
        return [r for r in self.requests if r.path == "/v1/messages"]

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()

    # called by the handler ------------------------------------------------------------------
    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next_id(self) -> str:
        return f"msg_fake{next(self._ids):06d}"


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients (the CLI, killed processes) drop connections; that is not a test failure.
        pass


def _make_handler(api: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

        def do_GET(self) -> None:
            self._handle()

        def do_POST(self) -> None:
            self._handle()

        def do_HEAD(self) -> None:
            self._handle()

        def _handle(self) -> None:
            path = self.path.split("?", 1)[0]
            raw = self._read_body()
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = None
            headers = {k.lower(): v for k, v in self.headers.items()}
            api._record(RecordedRequest(self.command, path, headers, body))
            if self.command == "POST" and path == "/v1/messages" and isinstance(body, dict):
                self._messages(body)
            elif self.command == "POST" and path == "/v1/messages/count_tokens":
                count = estimate_tokens(body) if isinstance(body, dict) else 0
                self._json(200, {"input_tokens": count})
            else:
                self._json(
                    404,
                    _error_body("not_found_error", f"{self.command} {path} is not served"),
                )

        def _read_body(self) -> bytes:
            if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
                data = b""
                while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                    data += self.rfile.read(size)
                    self.rfile.readline()
                self.rfile.readline()  # the blank line after the last chunk
                return data
            length = int(self.headers.get("content-length") or 0)
            return self.rfile.read(length) if length > 0 else b""

        def _messages(self, body: JSONDict) -> None:
            try:
                reply = api.responder(body)
            except Exception as exc:  # a broken test responder must be visible, not a hang
                self._json(500, _error_body("api_error", f"responder raised {exc!r}"))
                return
            if reply.hang_seconds > 0 and api._closing.wait(reply.hang_seconds):
                self.close_connection = True
                return
            if reply.status != 200:
                self._json(
                    reply.status,
                    _error_body(reply.error_type or "api_error", reply.error_message),
                    reply.headers,
                )
                return
            message = _message(api._next_id(), body, reply)
            if body.get("stream"):
                self._sse(message, reply)
            else:
                self._json(200, message, reply.headers)

        def _json(self, status: int, payload: Any, extra: Mapping[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("request-id", f"req_fake{uuid.uuid4().hex[:16]}")
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _sse(self, message: JSONDict, reply: Reply) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("request-id", f"req_fake{uuid.uuid4().hex[:16]}")
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                for event, data in _sse_events(message):
                    self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler


def _error_body(error_type: str, message: str) -> JSONDict:
    return {"type": "error", "error": {"type": error_type, "message": message}}


def _content(block: Block) -> JSONDict:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ThinkingBlock):
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    return {"type": "tool_use", "id": block.id, "name": block.name, "input": dict(block.input)}


def _message(message_id: str, body: Mapping[str, Any], reply: Reply) -> JSONDict:
    content = [_content(b) for b in reply.blocks]
    stop = reply.stop_reason or (
        "tool_use" if any(isinstance(b, ToolUseBlock) for b in reply.blocks) else "end_turn"
    )
    output_tokens = reply.output_tokens
    if output_tokens is None:
        output_tokens = max(1, len(json.dumps(content)) // 4)
    input_tokens = reply.input_tokens if reply.input_tokens is not None else estimate_tokens(body)
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": str(body.get("model", "claude-fake")),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": reply.cache_creation_input_tokens,
            "cache_read_input_tokens": reply.cache_read_input_tokens,
        },
    }


def _sse_events(message: JSONDict) -> Iterator[tuple[str, JSONDict]]:
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            for chunk in _chunks(block["text"]):
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": chunk},
                    },
                )
        elif block["type"] == "thinking":
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                },
            )
            for chunk in _chunks(block["thinking"]):
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "thinking_delta", "thinking": chunk},
                    },
                )
            yield (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "signature_delta", "signature": block["signature"]},
                },
            )
        else:
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {**block, "input": {}},
                },
            )
            for chunk in _chunks(json.dumps(block["input"])):
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": chunk},
                    },
                )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _chunks(text: str, size: int = 64) -> list[str]:
    """Split into a few deltas, like the real API does, so clients must concatenate."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
