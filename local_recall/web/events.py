"""Live updates: `ChangeFeed` tells every open page that the memories changed (the daemon
publishes after each re-index — a hand edit, a new memory from the pipeline, the viewer's own
edit), as server-sent events. Published from any thread; read in the server's event loop."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import AsyncIterator

KEEPALIVE_SECONDS = 15.0  # a comment line now and then keeps proxies and browsers connected


class ChangeFeed:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version = 0
        self._closed = False
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()

    @property
    def version(self) -> int:
        with self._lock:
            return self._version

    def publish(self) -> None:
        with self._lock:
            self._version += 1
            waiters = list(self._waiters)
        for loop, event in waiters:
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody listens
                loop.call_soon_threadsafe(event.set)

    def close(self) -> None:
        """End every stream (the server is shutting down)."""
        with self._lock:
            self._closed = True
        self.publish()

    async def stream(self) -> AsyncIterator[str]:
        """`event: changed` lines for one client, starting with the current version."""
        event = asyncio.Event()
        waiter = (asyncio.get_running_loop(), event)
        with self._lock:
            self._waiters.add(waiter)
            seen = self._version
        try:
            yield _message("hello", seen)
            while True:
                try:
                    await asyncio.wait_for(event.wait(), KEEPALIVE_SECONDS)
                except TimeoutError:
                    yield ": keepalive\n\n"
                    continue
                event.clear()
                with self._lock:
                    closed, version = self._closed, self._version
                if closed:
                    return
                if version != seen:
                    seen = version
                    yield _message("changed", version)
        finally:
            with self._lock:
                self._waiters.discard(waiter)


def _message(kind: str, version: int) -> str:
    return f"event: {kind}\ndata: {json.dumps({'version': version})}\n\n"
