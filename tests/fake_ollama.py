"""A small local HTTP server speaking Ollama's wire protocol, for tests that cannot run Ollama.

Implements what local-recall uses, with Ollama's real shapes (docs/api.md of ollama/ollama):
  POST /api/embed  {"model", "input": str | [str], "truncate"?, "options"?, "keep_alive"?,
                    "dimensions"?}
                -> {"model", "embeddings": [[float]], "total_duration", "load_duration",
                    "prompt_eval_count"}
                   unknown model -> 404 {"error": "model \"x\" not found, try pulling it first"}
  GET  /api/tags -> {"models": [{"name", "model", "modified_at", "size", "digest", "details"}]}

Vectors are deterministic hashed bags of words (so texts sharing words are close), computed
after removing nomic's task prefixes as the real model would interpret them. Every request is
recorded; the server can be told to fail with an HTTP status or to hang.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

_WORD = re.compile(r"[a-z0-9]+")
_TASK_PREFIX = re.compile(r"^(search_document|search_query|clustering|classification): ")


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    method: str
    path: str
    body: Mapping[str, Any]


def hashed_vector(text: str, dim: int) -> list[float]:
    """Bag of words hashed into `dim` signed buckets, L2-normalised; never all zero."""
    vector = [0.0] * dim
    vector[0] = 0.01
    for word in _WORD.findall(_TASK_PREFIX.sub("", text).lower()):
        digest = hashlib.sha256(word.encode()).digest()
        bucket = int.from_bytes(digest[:4], "big") % dim
        vector[bucket] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(value * value for value in vector))
    return [value / norm for value in vector]


def _canonical(model: str) -> str:
    return model if ":" in model.rsplit("/", 1)[-1] else model + ":latest"


class FakeOllama:
    """`with FakeOllama() as server:` serves on 127.0.0.1:<free port> until the block ends."""

    def __init__(self, models: Mapping[str, int] | None = None) -> None:
        # name:tag -> embedding dimension
        self.models: dict[str, int] = dict(models or {"nomic-embed-text:latest": 768})
        self.requests: list[RecordedRequest] = []
        self._failure: tuple[int, str] | None = None
        self._hanging = False
        self._release = threading.Event()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def embed_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == "/api/embed"]

    def fail_with(self, status: int, message: str) -> None:
        """Every following request gets `status` and {"error": message}."""
        self._failure = (status, message)

    def recover(self) -> None:
        """Requests are answered again (after `fail_with`)."""
        self._failure = None

    def hang(self) -> None:
        """Every following request waits (without answering) until the server stops."""
        self._hanging = True

    def __enter__(self) -> FakeOllama:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep pytest output clean

            def do_GET(self) -> None:
                fake._serve(self, "GET", {})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    fake._reply(self, 400, {"error": "invalid character in request body"})
                    return
                fake._serve(self, "POST", body if isinstance(body, dict) else {"_": body})

        return Handler

    def _serve(self, handler: BaseHTTPRequestHandler, method: str, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(RecordedRequest(method=method, path=handler.path, body=body))
        if self._hanging:
            self._release.wait(timeout=30)
            return
        if self._failure is not None:
            status, message = self._failure
            self._reply(handler, status, {"error": message})
        elif (method, handler.path) == ("POST", "/api/embed"):
            self._embed(handler, body)
        elif (method, handler.path) == ("GET", "/api/tags"):
            self._reply(handler, 200, {"models": [self._tag(name) for name in self.models]})
        else:
            self._reply(handler, 404, {"error": "404 page not found"})

    def _embed(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        model = body.get("model")
        if not isinstance(model, str) or not model:
            self._reply(handler, 400, {"error": "model is required"})
            return
        dim = self.models.get(_canonical(model))
        if dim is None:
            error = f"model {json.dumps(model)} not found, try pulling it first"
            self._reply(handler, 404, {"error": error})
            return
        raw_input = body.get("input", [])
        texts = [raw_input] if isinstance(raw_input, str) else raw_input
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            self._reply(handler, 400, {"error": "invalid input type"})
            return
        self._reply(
            handler,
            200,
            {
                "model": model,
                "embeddings": [hashed_vector(text, dim) for text in texts],
                "total_duration": 14143917,
                "load_duration": 1019500,
                "prompt_eval_count": sum(len(_WORD.findall(text)) + 2 for text in texts),
            },
        )

    def _tag(self, name: str) -> dict[str, Any]:
        family = "nomic-bert" if name.startswith("nomic") else "bert"
        return {
            "name": name,
            "model": name,
            "modified_at": "2025-01-10T09:32:18.757212583Z",
            "size": 274302450,
            "digest": hashlib.sha256(name.encode()).hexdigest(),
            "details": {
                "parent_model": "",
                "format": "gguf",
                "family": family,
                "families": [family],
                "parameter_size": "137M",
                "quantization_level": "F16",
            },
        }

    @staticmethod
    def _reply(handler: BaseHTTPRequestHandler, status: int, payload: Mapping[str, Any]) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json; charset=utf-8")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)


@pytest.fixture(name="fake_ollama")
def fake_ollama_fixture() -> Iterator[FakeOllama]:
    """A running FakeOllama serving nomic-embed-text:latest (768 dims)."""
    with FakeOllama() as server:
        yield server
