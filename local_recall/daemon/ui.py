"""The browser viewer, served by the running daemon (docs/ui.md).

Started on the first `{"op": "ui"}` request on the daemon's private socket (`local-recall ui`
asks it), never before: a daemon nobody opened the viewer of listens on no TCP port. The reply
carries the URL with the token; the socket is the user's own (0600 in a 0700 folder), so only
they learn it. The viewer gets its own `Recall` (sharing the warm embedder) for reading and
editing, and searches through the daemon's query side; the daemon tells it after each re-index
so open pages update live."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from local_recall.daemon.query_client import Reply
from local_recall.recall import Recall

if TYPE_CHECKING:
    from local_recall.daemon.query_service import QueryService
    from local_recall.web.server import WebServer

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], Reply]


class DaemonUi:
    def __init__(self, recall: Recall, service: QueryService, activity: Callable[[], None]) -> None:
        self._recall = recall
        self._activity = activity  # a page in use keeps an idle-exiting daemon alive
        self._service = service
        self._lock = threading.Lock()
        self._server: WebServer | None = None

    def wrap(self, handle: Handler) -> Handler:
        """The socket's handler, answering `ui` itself and everything else as before."""

        def handle_with_ui(request: dict[str, Any]) -> Reply:
            if request.get("op") == "ui":
                return {"ok": True, "url": self.start()}
            return handle(request)

        return handle_with_ui

    def start(self) -> str:
        with self._lock:
            if self._server is None:
                # Imported on first use: a daemon whose viewer nobody opens loads no web stack.
                from local_recall.web.server import WebServer

                embedder = self._recall.searcher.embedder
                settings = replace(self._recall.settings, embedder_factory=lambda _c: embedder)
                viewer_recall = Recall(settings, self._recall.config)
                server = WebServer(viewer_recall, self._service.query, self._activity)
                server.start()
                self._server = server
            return self._server.url

    def changed(self) -> None:
        """The memories changed (a re-index ran): open pages refresh."""
        with self._lock:
            server = self._server
        if server is not None:
            server.changed()

    def close(self) -> None:
        with self._lock:
            server, self._server = self._server, None
        if server is not None:
            server.close()
