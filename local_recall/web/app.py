"""The viewer's HTTP side (Starlette): the page and its static files, a JSON API over `Viewer`,
and the event stream. Every request passes `guard.refuse` first; library errors become JSON
`{"error": ...}` with a status (400 bad input, 404 not found, 409 edit conflict)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from importlib.resources import files
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from local_recall.errors import DuplicateMemoryId, InvalidInput, MemoryNotFound, RecallError
from local_recall.web.admission import Limits
from local_recall.web.curation import Curation
from local_recall.web.events import ChangeFeed
from local_recall.web.guard import SECURITY_HEADERS, refuse
from local_recall.web.viewer import EditConflict, Viewer

log = logging.getLogger(__name__)

LIMITS = Limits()
MAX_BODY_BYTES = LIMITS.max_body_bytes
STATIC = files("local_recall.web") / "static"

Endpoint = Callable[[Request], Awaitable[Response]]
POST = ["POST"]


class Guard:
    """ASGI middleware: refuse what `guard.refuse` refuses; add the security headers."""

    def __init__(
        self, app: ASGIApp, token: str, hosts: frozenset[str], on_request: Callable[[], None]
    ) -> None:
        self.app, self.token, self.hosts, self.on_request = app, token, hosts, on_request

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        refusal = refuse(
            request.method,
            request.url.path,
            {k.lower(): v for k, v in request.headers.items()},
            request.query_params.get("token"),
            token=self.token,
            hosts=self.hosts,
        )
        if refusal is not None:
            response: Response = JSONResponse({"error": refusal.reason}, refusal.status)
            await self._secured(response)(scope, receive, send)
            return
        self.on_request()

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_secured)

    @staticmethod
    def _secured(response: Response) -> Response:
        response.headers.update(SECURITY_HEADERS)
        return response


def _error(exc: Exception) -> JSONResponse:
    if isinstance(exc, TooLarge):
        return JSONResponse({"error": str(exc)}, 413, headers={"connection": "close"})
    if isinstance(exc, EditConflict | DuplicateMemoryId):
        return JSONResponse({"error": str(exc)}, 409)
    if isinstance(exc, MemoryNotFound):
        return JSONResponse({"error": str(exc)}, 404)
    if isinstance(exc, RecallError):
        return JSONResponse({"error": str(exc)}, 400)
    log.exception("viewer request failed")
    return JSONResponse({"error": f"internal error: {type(exc).__name__} (see recall.log)"}, 500)


class TooLarge(InvalidInput):
    """A request body over the cap: refused by its Content-Length, or as soon as the bytes
    streamed in pass it — never read whole first (a 300 MB body once cost the daemon 564 MB)."""


async def _read_capped(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise TooLarge(f"request too large (over {limit} bytes)")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise TooLarge(f"request too large (over {limit} bytes)")
        chunks.append(chunk)
    return b"".join(chunks)


async def _json_body(request: Request) -> dict[str, Any]:
    try:
        raw = await asyncio.wait_for(_read_capped(request, MAX_BODY_BYTES), LIMITS.body_seconds)
    except TimeoutError:
        raise InvalidInput("the request body did not arrive in time") from None
    try:
        data = json.loads(raw or b"{}")
    except ValueError:
        raise InvalidInput("the request body is not JSON") from None
    if not isinstance(data, dict):
        raise InvalidInput("the request body must be a JSON object")
    return data


def create_app(
    viewer: Viewer,
    feed: ChangeFeed,
    *,
    token: str,
    hosts: frozenset[str],
    on_request: Callable[[], None] = lambda: None,
) -> ASGIApp:
    """The viewer as an ASGI app, for uvicorn (server.py) or a test client. `on_request` is
    told of each admitted request (the daemon counts it as activity)."""

    def api(work: Callable[[Request, dict[str, Any]], Any]) -> Endpoint:
        async def endpoint(request: Request) -> Response:
            try:
                body = await _json_body(request) if request.method == "POST" else {}
                result = await run_in_threadpool(work, request, body)
            except Exception as exc:
                return _error(exc)
            return JSONResponse(result)

        return endpoint

    def memory_id(request: Request) -> str:
        return str(request.path_params["memory_id"])

    curation = Curation(viewer)

    async def index(_: Request) -> Response:
        return FileResponse(str(STATIC / "index.html"), media_type="text/html")

    async def events(_: Request) -> Response:
        return StreamingResponse(
            feed.stream(), media_type="text/event-stream", headers={"x-accel-buffering": "no"}
        )

    routes = [
        Route("/", index),
        Route("/api/memories", api(lambda r, _: viewer.memories(dict(r.query_params)))),
        Route("/api/memories/new", api(lambda r, b: curation.create(b)), methods=["POST"]),
        Route("/api/memories/{memory_id}", api(lambda r, _: viewer.memory(memory_id(r)))),
        Route(
            "/api/memories/{memory_id}",
            api(lambda r, b: viewer.update(memory_id(r), b)),
            methods=["POST"],
        ),
        Route(
            "/api/memories/{memory_id}/transcript",
            api(lambda r, _: viewer.transcript(memory_id(r))),
        ),
        Route(
            "/api/memories/{memory_id}/delete",
            api(lambda r, _: viewer.delete(memory_id(r))),
            methods=["POST"],
        ),
        Route("/api/review", api(lambda r, _: curation.review_queue())),
        Route(
            "/api/review/merge", api(lambda r, b: curation.merge(b.get("ids"))), methods=["POST"]
        ),
        Route("/api/sessions", api(lambda r, _: curation.sessions(dict(r.query_params)))),
        Route("/api/sessions/{memory_id}", api(lambda r, _: curation.session(memory_id(r)))),
        Route(
            "/api/review/accept", api(lambda r, b: viewer.accept(b.get("ids"))), methods=["POST"]
        ),
        Route(
            "/api/review/reject", api(lambda r, b: viewer.reject(b.get("ids"))), methods=["POST"]
        ),
        Route("/api/stale", api(lambda r, _: viewer.stale_list())),
        Route(
            "/api/stale/still-true",
            api(lambda r, b: viewer.still_true(str(b.get("id", "")))),
            methods=["POST"],
        ),
        Route("/api/consolidation", api(lambda r, _: viewer.consolidation())),
        Route(
            "/api/consolidation/apply",
            api(lambda r, b: viewer.consolidate(str(b.get("keep", "")), b.get("group") or [])),
            methods=["POST"],
        ),
        Route("/api/stats", api(lambda r, _: viewer.stats())),
        Route("/api/counts", api(lambda r, _: viewer.counts())),
        Route("/api/file", api(lambda r, _: viewer.file(r.query_params.get("path", "")))),
        Route("/api/events", events),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]
    app = Starlette(routes=routes)
    return Guard(app, token, hosts, on_request)
