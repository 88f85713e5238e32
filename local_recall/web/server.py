"""Serving the viewer (uvicorn, in a background thread of the daemon): bound to 127.0.0.1 on a
port the kernel picks, behind a fresh random token. The only module that imports uvicorn."""

from __future__ import annotations

import asyncio
import logging
import secrets
import socket
import threading
from collections.abc import Callable

import uvicorn

from local_recall.recall import Recall
from local_recall.web.app import create_app
from local_recall.web.events import ChangeFeed
from local_recall.web.guard import allowed_hosts
from local_recall.web.viewer import Search, Viewer

log = logging.getLogger(__name__)

HOST = "127.0.0.1"  # loopback only, never configurable: the token is the only other lock


class WebServer:
    """`start()` binds and serves; `url` holds the token; `changed()` tells open pages;
    `close()` ends the streams and stops the server."""

    def __init__(
        self,
        recall: Recall,
        search: Search | None = None,
        on_request: Callable[[], None] = lambda: None,
    ) -> None:
        self._on_request = on_request
        self.token = secrets.token_urlsafe(32)
        self.feed = ChangeFeed()
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
        sock.listen(64)
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
