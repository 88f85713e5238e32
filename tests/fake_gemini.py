"""A local stand-in for the Gemini API (generativelanguage v1beta), as the Gemini CLI calls it.

The real `gemini` CLI is pointed at it with ``GOOGLE_GEMINI_BASE_URL`` plus an API key
(``GEMINI_API_KEY``) and ``security.auth.selectedType = "gemini-api-key"`` in its settings
(0.61 refuses the bare base-URL "gateway" auth in non-interactive mode: "Invalid auth method
selected."). Served, and recorded:

* ``POST /v1beta/models/{model}:streamGenerateContent?alt=sse`` -- the chat turns: server-sent
  events, ``data: <GenerateContentResponse>`` per chunk, text split over chunks, a function call
  in one chunk, the last chunk with ``finishReason`` and ``usageMetadata``;
* ``POST /v1beta/models/{model}:generateContent`` -- one JSON GenerateContentResponse (the CLI's
  side requests: routing, next-speaker checks, summaries);
* ``POST /v1beta/models/{model}:countTokens`` -- ``{"totalTokens": n}``.

Anything else is a 404 in Google's error envelope. What the model says is scripted by a
responder ``(GeminiCall) -> Turn`` (the same ``Turn`` values as tests/fake_openai.py).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fake_openai import Turn, say

JSONDict = dict[str, Any]


@dataclass(frozen=True, slots=True)
class GeminiCall:
    model: str
    method: str  # "streamGenerateContent" | "generateContent"
    body: JSONDict

    @property
    def tool_names(self) -> list[str]:
        names = []
        for tool in self.body.get("tools") or ():
            for declaration in (
                (tool.get("functionDeclarations") or ()) if isinstance(tool, dict) else ()
            ):
                if isinstance(declaration, dict) and isinstance(declaration.get("name"), str):
                    names.append(declaration["name"])
        return names

    @property
    def wants_json(self) -> bool:
        """A side request asking for a JSON answer (routing, next-speaker checks)."""
        config = self.body.get("generationConfig") or {}
        return isinstance(config, dict) and config.get("responseMimeType") == "application/json"

    @property
    def visible_text(self) -> str:
        parts: list[str] = []
        _collect(self.body.get("systemInstruction"), parts)
        for content in self.body.get("contents") or ():
            _collect(content, parts)
        return "\n".join(parts)

    @property
    def function_responses(self) -> list[JSONDict]:
        found = []
        for content in self.body.get("contents") or ():
            for part in (content.get("parts") or ()) if isinstance(content, dict) else ():
                if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
                    found.append(part["functionResponse"])
        return found

    def last_user_text(self) -> str:
        for content in reversed(self.body.get("contents") or []):
            if isinstance(content, dict) and content.get("role") == "user":
                parts: list[str] = []
                _collect(content, parts)
                if parts:
                    return "\n".join(parts)
        return ""


def _collect(value: Any, parts: list[str]) -> None:
    if isinstance(value, dict):
        if isinstance(value.get("text"), str):
            parts.append(value["text"])
        for key in ("parts", "functionCall", "functionResponse"):
            if key in value:
                _collect(value[key], parts)
        if "response" in value:
            parts.append(json.dumps(value["response"], ensure_ascii=False))
        if "args" in value:
            parts.append(json.dumps(value["args"], ensure_ascii=False))
    elif isinstance(value, list):
        for item in value:
            _collect(item, parts)


Responder = Callable[[GeminiCall], Turn]


def default_responder(text: str = "OK") -> Responder:
    return lambda call: say(text)


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    method: str
    path: str
    headers: Mapping[str, str]
    body: Any


class FakeGemini:
    """Threaded HTTP server on 127.0.0.1 (ephemeral port). Use as a context manager."""

    def __init__(self, responder: Responder | None = None) -> None:
        self.responder: Responder = responder or default_responder()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server = _QuietServer(("127.0.0.1", 0), _make_handler(self))
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeGemini:
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeGemini:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def calls(self) -> list[GeminiCall]:
        """Model requests (generate and stream), in arrival order."""
        found = []
        for request in self.requests:
            parsed = _parse_path(request.path)
            if parsed and parsed[1] != "countTokens" and isinstance(request.body, dict):
                found.append(GeminiCall(parsed[0], parsed[1], request.body))
        return found

    def chat_calls(self) -> list[GeminiCall]:
        """Only the streamed chat turns (what the agent loop asked)."""
        return [c for c in self.calls() if c.method == "streamGenerateContent"]

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)


def _parse_path(path: str) -> tuple[str, str] | None:
    """`/v1beta/models/gemini-x:streamGenerateContent` -> ("gemini-x", "streamGenerateContent")."""
    prefix = "/v1beta/models/"
    if not path.startswith(prefix) or ":" not in path:
        return None
    model, method = path[len(prefix) :].rsplit(":", 1)
    if method not in ("generateContent", "streamGenerateContent", "countTokens"):
        return None
    return model, method


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


def _make_handler(api: FakeGemini) -> type[BaseHTTPRequestHandler]:
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
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length > 0 else b""
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = None
            headers = {k.lower(): v for k, v in self.headers.items()}
            api._record(RecordedRequest(self.command, path, headers, body))
            parsed = _parse_path(path)
            if self.command != "POST" or parsed is None or not isinstance(body, dict):
                self._json(404, _error(404, f"{self.command} {path} is not served", "NOT_FOUND"))
                return
            model, method = parsed
            if method == "countTokens":
                self._json(200, {"totalTokens": _estimate(body)})
                return
            call = GeminiCall(model, method, body)
            try:
                turn = api.responder(call)
            except Exception as exc:
                self._json(500, _error(500, f"responder raised {exc!r}", "INTERNAL"))
                return
            if turn.hang_seconds > 0 and api._closing.wait(turn.hang_seconds):
                self.close_connection = True
                return
            if turn.status != 200:
                self._json(turn.status, _error(turn.status, turn.error_message, "UNAVAILABLE"))
                return
            if method == "generateContent":
                self._json(200, _response(call, turn, list(_parts(turn)), final=True))
            else:
                self._sse(_stream(call, turn))

        def _json(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json; charset=UTF-8")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _sse(self, chunks: Iterator[JSONDict]) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                for chunk in chunks:
                    self.wfile.write(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler


def _error(code: int, message: str, status: str) -> JSONDict:
    return {"error": {"code": code, "message": message, "status": status}}


def _estimate(body: Mapping[str, Any]) -> int:
    return max(1, len(json.dumps(body)) // 4)


def _parts(turn: Turn) -> Iterator[JSONDict]:
    if turn.text:
        yield {"text": turn.text}
    for tool in turn.tool_calls:
        yield {"functionCall": {"name": tool.name, "args": dict(tool.arguments)}}


def _response(call: GeminiCall, turn: Turn, parts: list[JSONDict], *, final: bool) -> JSONDict:
    candidate: JSONDict = {"content": {"role": "model", "parts": parts}, "index": 0}
    response: JSONDict = {"candidates": [candidate], "modelVersion": call.model}
    if final:
        candidate["finishReason"] = "STOP"
        prompt = _estimate(call.body)
        output = max(1, len(json.dumps(list(_parts(turn)))) // 4)
        response["usageMetadata"] = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": output,
            "totalTokenCount": prompt + output,
        }
        response["responseId"] = uuid.uuid4().hex[:20]
    return response


def _stream(call: GeminiCall, turn: Turn) -> Iterator[JSONDict]:
    """Text in several chunks (clients must concatenate), each function call whole in one."""
    pieces: list[JSONDict] = []
    text = turn.text
    for start in range(0, len(text), 48):
        pieces.append({"text": text[start : start + 48]})
    for tool in turn.tool_calls:
        pieces.append({"functionCall": {"name": tool.name, "args": dict(tool.arguments)}})
    if not pieces:
        pieces.append({"text": ""})
    for index, piece in enumerate(pieces):
        yield _response(call, turn, [piece], final=index == len(pieces) - 1)
