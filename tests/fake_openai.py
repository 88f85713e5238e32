"""A local stand-in for the OpenAI API, as the Codex CLI and the Copilot CLI (BYOK) call it.

Two wire protocols, both streamed as server-sent events when the request says ``"stream": true``
(plain JSON otherwise), both recorded:

* ``POST /v1/responses`` -- the Responses API. Codex 0.169 speaks only this one (a custom
  provider with ``wire_api = "chat"`` is refused at start-up: "`wire_api = "chat"` is no longer
  supported"). Events: ``response.created``, ``response.in_progress``,
  ``response.output_item.added``, ``response.content_part.added``, ``response.output_text.delta``
  / ``response.function_call_arguments.delta``, their ``.done``, ``response.output_item.done``,
  ``response.completed`` (with usage), each with a ``sequence_number``.
* ``POST /v1/chat/completions`` -- Chat Completions: ``chat.completion.chunk`` deltas (text,
  then ``tool_calls`` with the arguments split over chunks), a last chunk with
  ``finish_reason``, a usage chunk when ``stream_options.include_usage`` asks for it, then
  ``data: [DONE]``. The Copilot CLI's BYOK default (``COPILOT_PROVIDER_WIRE_API=completions``).

``GET /v1/models`` lists the model names the responder was asked about (clients probe it).
Anything else is a 404 in OpenAI's error envelope.

What the model "says" is scripted by a responder: ``(ModelCall) -> Turn``::

    with FakeOpenAI(lambda call: say("hi")) as api:
        ...   # base_url = api.url + "/v1"
        assert "hello" in api.calls()[0].visible_text
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JSONDict = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    arguments: Mapping[str, Any]
    call_id: str = field(default_factory=lambda: f"call_{uuid.uuid4().hex[:20]}")
    # Responses API: the namespace a tool was offered in (Codex puts each MCP server's tools
    # in a `{"type": "namespace", "name": "mcp__<server>", "tools": [...]}` entry)
    namespace: str | None = None


@dataclass(frozen=True, slots=True)
class Turn:
    """One scripted answer: text, tool calls, or an HTTP error (``status`` != 200)."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    status: int = 200
    error_message: str = ""
    hang_seconds: float = 0.0


def say(text: str) -> Turn:
    return Turn(text=text)


def call_tool(name: str, arguments: Mapping[str, Any], *, namespace: str | None = None) -> Turn:
    return Turn(tool_calls=(ToolCall(name, dict(arguments), namespace=namespace),))


def http_error(status: int, message: str = "error") -> Turn:
    return Turn(status=status, error_message=message)


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One model request, whichever wire protocol carried it."""

    api: str  # "responses" | "chat"
    body: JSONDict

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def tool_names(self) -> list[str]:
        names = []
        for tool in self.body.get("tools") or ():
            if not isinstance(tool, dict):
                continue
            function = tool.get("function") if isinstance(tool.get("function"), dict) else tool
            if isinstance(function.get("name"), str):
                names.append(function["name"])
        return names

    @property
    def namespaced_tools(self) -> dict[str, str]:
        """Tools offered inside a Responses `namespace` entry: name -> namespace."""
        found: dict[str, str] = {}
        for tool in self.body.get("tools") or ():
            if isinstance(tool, dict) and tool.get("type") == "namespace":
                for inner in tool.get("tools") or ():
                    if isinstance(inner, dict) and isinstance(inner.get("name"), str):
                        found[inner["name"]] = str(tool.get("name"))
        return found

    @property
    def visible_text(self) -> str:
        """Everything the model reads, in order: instructions, messages, tool outputs."""
        parts: list[str] = []
        if isinstance(self.body.get("instructions"), str):
            parts.append(self.body["instructions"])
        items = self.body.get("input") if self.api == "responses" else self.body.get("messages")
        if isinstance(items, str):
            parts.append(items)
        for item in items if isinstance(items, list) else ():
            _collect(item, parts)
        return "\n".join(parts)

    @property
    def tool_outputs(self) -> list[str]:
        """The results of tool calls the client sends back (function_call_output / role tool)."""
        found: list[str] = []
        items = self.body.get("input") if self.api == "responses" else self.body.get("messages")
        for item in items if isinstance(items, list) else ():
            if not isinstance(item, dict):
                continue
            if item.get("type") == "function_call_output" or item.get("role") == "tool":
                text: list[str] = []
                _collect(item.get("output", item.get("content")), text)
                found.append("\n".join(text))
        return found

    def last_user_text(self) -> str:
        items = self.body.get("input") if self.api == "responses" else self.body.get("messages")
        for item in reversed(items if isinstance(items, list) else []):
            if isinstance(item, dict) and item.get("role") == "user":
                parts: list[str] = []
                _collect(item.get("content"), parts)
                return "\n".join(parts)
        return ""


def _collect(value: Any, parts: list[str]) -> None:
    if isinstance(value, str):
        parts.append(value)
    elif isinstance(value, list):
        for item in value:
            _collect(item, parts)
    elif isinstance(value, dict):
        for key in ("text", "content", "output", "arguments"):
            if key in value:
                _collect(value[key], parts)


Responder = Callable[[ModelCall], Turn]


def default_responder(text: str = "OK") -> Responder:
    return lambda call: say(text)


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    method: str
    path: str
    headers: Mapping[str, str]  # lower-cased names
    body: Any


class FakeOpenAI:
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

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def calls(self) -> list[ModelCall]:
        """The model requests (Responses and Chat Completions), in arrival order."""
        found = []
        for request in self.requests:
            api = _API_PATHS.get(request.path)
            if api is not None and isinstance(request.body, dict):
                found.append(ModelCall(api, request.body))
        return found

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next_id(self, prefix: str) -> str:
        return f"{prefix}_fake{next(self._ids):06d}"


_API_PATHS = {"/v1/responses": "responses", "/v1/chat/completions": "chat"}


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients drop connections; not a test failure


def _make_handler(api: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._handle()

        def do_POST(self) -> None:
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
            kind = _API_PATHS.get(path)
            if self.command == "POST" and kind is not None and isinstance(body, dict):
                self._answer(ModelCall(kind, body))
            elif self.command == "GET" and path == "/v1/models":
                models = sorted({c.model for c in api.calls() if c.model} | {"gpt-fake"})
                self._json(
                    200,
                    {
                        "object": "list",
                        "data": [
                            {"id": m, "object": "model", "created": 0, "owned_by": "fake"}
                            for m in models
                        ],
                    },
                )
            else:
                self._json(404, _error(f"{self.command} {path} is not served", "not_found"))

        def _read_body(self) -> bytes:
            if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
                data = b""
                while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                    data += self.rfile.read(size)
                    self.rfile.readline()
                self.rfile.readline()
                return data
            length = int(self.headers.get("content-length") or 0)
            return self.rfile.read(length) if length > 0 else b""

        def _answer(self, call: ModelCall) -> None:
            try:
                turn = api.responder(call)
            except Exception as exc:  # a broken test responder must be visible, not a hang
                self._json(500, _error(f"responder raised {exc!r}", "server_error"))
                return
            if turn.hang_seconds > 0 and api._closing.wait(turn.hang_seconds):
                self.close_connection = True
                return
            if turn.status != 200:
                self._json(turn.status, _error(turn.error_message, "api_error"))
                return
            if call.api == "responses":
                response = _response_object(api._next_id("resp"), call, turn)
                events = _responses_events(response)
            else:
                response = _chat_completion(api._next_id("chatcmpl"), call, turn)
                events = _chat_events(response, call.body)
            if call.body.get("stream"):
                self._sse(events, named=call.api == "responses")
            else:
                self._json(200, response)

        def _json(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("x-request-id", f"req_{uuid.uuid4().hex[:16]}")
            self.end_headers()
            self.wfile.write(data)

        def _sse(self, events: Iterator[JSONDict | str], *, named: bool) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("x-request-id", f"req_{uuid.uuid4().hex[:16]}")
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                for event in events:
                    if isinstance(event, str):
                        self.wfile.write(f"data: {event}\n\n".encode())
                    elif named:
                        line = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                        self.wfile.write(line.encode())
                    else:
                        self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler


def _error(message: str, code: str) -> JSONDict:
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}


def estimate_tokens(call: ModelCall) -> int:
    size = len(call.visible_text) + len(json.dumps(call.body.get("tools") or []))
    return max(1, size // 4)


def _chunks(text: str, size: int = 48) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


# --- Responses API ------------------------------------------------------------------------------


def _response_object(response_id: str, call: ModelCall, turn: Turn) -> JSONDict:
    output: list[JSONDict] = []
    if turn.text:
        output.append(
            {
                "id": f"msg_{uuid.uuid4().hex[:24]}",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
            }
        )
    for tool in turn.tool_calls:
        item = {
            "id": f"fc_{uuid.uuid4().hex[:24]}",
            "type": "function_call",
            "status": "completed",
            "call_id": tool.call_id,
            "name": tool.name,
            "arguments": json.dumps(dict(tool.arguments)),
        }
        if tool.namespace is not None:
            item["namespace"] = tool.namespace
        output.append(item)
    input_tokens = estimate_tokens(call)
    output_tokens = max(1, len(json.dumps(output)) // 4)
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": call.model,
        "output": output,
        "parallel_tool_calls": True,
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens,
        },
    }


def _responses_events(response: JSONDict) -> Iterator[JSONDict]:
    seq = itertools.count()
    pending = {**response, "status": "in_progress", "output": [], "usage": None}
    yield {"type": "response.created", "sequence_number": next(seq), "response": pending}
    yield {"type": "response.in_progress", "sequence_number": next(seq), "response": pending}
    for index, item in enumerate(response["output"]):
        if item["type"] == "message":
            yield from _message_events(item, index, seq)
        else:
            yield from _function_call_events(item, index, seq)
    yield {"type": "response.completed", "sequence_number": next(seq), "response": response}


def _message_events(item: JSONDict, index: int, seq: Iterator[int]) -> Iterator[JSONDict]:
    text = item["content"][0]["text"]
    base = {"item_id": item["id"], "output_index": index, "content_index": 0}
    added = {**item, "status": "in_progress", "content": []}
    yield {
        "type": "response.output_item.added",
        "sequence_number": next(seq),
        "output_index": index,
        "item": added,
    }
    empty_part = {"type": "output_text", "text": "", "annotations": []}
    yield {
        "type": "response.content_part.added",
        "sequence_number": next(seq),
        **base,
        "part": empty_part,
    }
    for chunk in _chunks(text):
        yield {
            "type": "response.output_text.delta",
            "sequence_number": next(seq),
            **base,
            "delta": chunk,
        }
    yield {"type": "response.output_text.done", "sequence_number": next(seq), **base, "text": text}
    yield {
        "type": "response.content_part.done",
        "sequence_number": next(seq),
        **base,
        "part": item["content"][0],
    }
    yield {
        "type": "response.output_item.done",
        "sequence_number": next(seq),
        "output_index": index,
        "item": item,
    }


def _function_call_events(item: JSONDict, index: int, seq: Iterator[int]) -> Iterator[JSONDict]:
    yield {
        "type": "response.output_item.added",
        "sequence_number": next(seq),
        "output_index": index,
        "item": {**item, "status": "in_progress", "arguments": ""},
    }
    for chunk in _chunks(item["arguments"]):
        yield {
            "type": "response.function_call_arguments.delta",
            "sequence_number": next(seq),
            "item_id": item["id"],
            "output_index": index,
            "delta": chunk,
        }
    yield {
        "type": "response.function_call_arguments.done",
        "sequence_number": next(seq),
        "item_id": item["id"],
        "output_index": index,
        "arguments": item["arguments"],
    }
    yield {
        "type": "response.output_item.done",
        "sequence_number": next(seq),
        "output_index": index,
        "item": item,
    }


# --- Chat Completions ---------------------------------------------------------------------------


def _chat_completion(completion_id: str, call: ModelCall, turn: Turn) -> JSONDict:
    message: JSONDict = {"role": "assistant", "content": turn.text or None}
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "id": tool.call_id,
                "type": "function",
                "function": {"name": tool.name, "arguments": json.dumps(dict(tool.arguments))},
            }
            for tool in turn.tool_calls
        ]
    prompt_tokens = estimate_tokens(call)
    completion_tokens = max(1, len(json.dumps(message)) // 4)
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": call.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if turn.tool_calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _chat_events(completion: JSONDict, body: Mapping[str, Any]) -> Iterator[JSONDict | str]:
    head = {k: completion[k] for k in ("id", "created", "model")}
    head["object"] = "chat.completion.chunk"
    choice = completion["choices"][0]
    message = choice["message"]

    def chunk(delta: JSONDict, finish: str | None = None) -> JSONDict:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    for piece in _chunks(message["content"] or "") if message["content"] else ():
        yield chunk({"content": piece})
    for index, tool in enumerate(message.get("tool_calls") or ()):
        function = tool["function"]
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": tool["id"],
                        "type": "function",
                        "function": {"name": function["name"], "arguments": ""},
                    }
                ]
            }
        )
        for piece in _chunks(function["arguments"]):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, choice["finish_reason"])
    options = body.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage"):
        yield {**head, "choices": [], "usage": completion["usage"]}
    yield "[DONE]"


def tool_names_of(calls: Sequence[ModelCall]) -> set[str]:
    return {name for call in calls for name in call.tool_names}
