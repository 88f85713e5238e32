"""Serving the viewer (uvicorn, in a background thread of the daemon): bound to 127.0.0.1 on a
port the kernel picks, behind a fresh random token. The only module that imports uvicorn.

Any local user can connect to that port, token or not: `_GuardedProtocol` keeps the number of
connections bounded and closes those that do not send a request in time (admission.py), so a
flood of half-sent requests cannot use up the daemon's file descriptors — and with them the
query socket the hooks depend on."""

from __future__ import annotations

import asyncio
import logging
import secrets
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from local_recall.recall import Recall
from local_recall.web.admission import REFUSE, Limits, make_room
from local_recall.web.app import create_app
from local_recall.web.events import ChangeFeed
from local_recall.web.guard import allowed_hosts
from local_recall.web.viewer import Search, Viewer

log = logging.getLogger(__name__)

HOST = "127.0.0.1"  # loopback only, never configurable: the token is the only other lock
LIMITS = Limits()


class _GuardedProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, plus: at most `max_connections` open (the longest-waiting
    idle one is closed to make room), and a deadline for each request's headers — uvicorn has
    none, and its keep-alive timer is reset by any byte, so a connection dribbling a header
    line would stay open forever."""

    limits = LIMITS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.waiting_since: float | None = None
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        # (an aborted connection stays in the set until the loop has closed it: not counted)
        others = [c for c in self.connections if c is not self and not c.transport.is_closing()]
        waiting = [getattr(c, "waiting_since", None) for c in others]
        choice = make_room(waiting, self.limits)
        if choice == REFUSE:
            log.warning("viewer: %d connections all busy; refused one", len(others))
            transport.abort()
            return
        if choice is not None:
            log.warning("viewer: %d connections open; closed the longest idle one", len(others))
            others[choice].transport.abort()
        self._wait_for_request()

    def _wait_for_request(self) -> None:
        self.waiting_since = time.monotonic()
        self._cancel_deadline()
        self._deadline = self.loop.call_later(self.limits.header_seconds, self._too_slow)

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        if self.waiting_since is not None and not self.transport.is_closing():
            log.warning("viewer: closed a connection that sent no request in time")
            self.transport.abort()

    def handle_events(self) -> None:
        before = self.cycle
        super().handle_events()
        if self.cycle is not None and self.cycle is not before:  # a whole request arrived
            self.waiting_since = None
            self._cancel_deadline()

    def on_response_complete(self) -> None:
        self._wait_for_request()  # before: a pipelined request started below clears it
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_deadline()
        self.waiting_since = None
        super().connection_lost(exc)


class WebServer:
    """`start()` binds and serves; `url` holds the token; `changed()` tells open pages;
    `close()` ends the streams and stops the server."""

    def __init__(
        self,
        recall: Recall,
        search: Search | None = None,
        on_request: Callable[[], None] = lambda: None,
        limits: Limits = LIMITS,
    ) -> None:
        self._on_request = on_request
        self.limits = limits
        self.token = secrets.token_urlsafe(32)
        self.feed = ChangeFeed(max_streams=min(limits.max_streams, limits.max_connections // 2))
        self.viewer = Viewer(recall, search)
        self._socket: socket.socket | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/?token={self.token}"

    def start(self) -> str:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind((HOST, 0))
        sock.listen(self.limits.max_connections)
        sock.setblocking(False)
        self._socket = sock
        self.port = sock.getsockname()[1]
        app = create_app(
            self.viewer,
            self.feed,
            token=self.token,
            hosts=allowed_hosts(self.port),
            on_request=self._on_request,
        )
        config = uvicorn.Config(
            app,
            log_config=None,  # the daemon configured logging already (recall.log)
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=2,
            http=type("GuardedProtocol", (_GuardedProtocol,), {"limits": self.limits}),
            timeout_keep_alive=max(1, int(self.limits.idle_seconds)),
            backlog=self.limits.max_connections,  # asyncio listens again with this
        )
        server = self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=lambda: asyncio.run(server.serve(sockets=[sock])), name="web", daemon=True
        )
        self._thread.start()
        log.info("viewer serving on http://%s:%d/", HOST, self.port)
        return self.url

    def changed(self) -> None:
        self.viewer.changed()  # first: a page told of the change must read the new state
        self.feed.publish()

    def close(self) -> None:
        self.feed.close()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        if self._socket is not None:
            self._socket.close()
