"""Live updates: `ChangeFeed` tells every open page that the memories changed (the daemon
publishes after each re-index — a hand edit, a new memory from the pipeline, the viewer's own
edit), as server-sent events. Published from any thread; read in the server's event loop.

A stream is a request that never ends, so it holds one of the viewer's few connections for
good: 300 streams opened with the token used to fill them all and every API request was
refused. At most `max_streams` are open; a new one ends the oldest (a page that
reconnects gets its own again, a closed tab's stream goes), and the connection it held is idle
again, which the admission closes first when the viewer is full."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import AsyncIterator

KEEPALIVE_SECONDS = 15.0  # a comment line now and then keeps proxies and browsers connected


MAX_STREAMS = 16  # open pages (tabs) that get live updates at once


class _Waiter:
    """One open stream: its loop and event, and whether a newer stream ended it."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.event = asyncio.Event()
        self.ended = False

    def wake(self) -> None:
        with contextlib.suppress(RuntimeError):  # that loop is closed: nobody listens
            self.loop.call_soon_threadsafe(self.event.set)


class ChangeFeed:
    def __init__(self, max_streams: int = MAX_STREAMS) -> None:
        self._lock = threading.Lock()
        self._version = 0
        self._closed = False
        self._max_streams = max(1, max_streams)
        self._waiters: dict[_Waiter, None] = {}  # oldest first

    @property
    def version(self) -> int:
        with self._lock:
            return self._version

    def publish(self) -> None:
        with self._lock:
            self._version += 1
            waiters = list(self._waiters)
        for waiter in waiters:
            waiter.wake()

    def close(self) -> None:
        """End every stream (the server is shutting down)."""
        with self._lock:
            self._closed = True
        self.publish()

    async def stream(self) -> AsyncIterator[str]:
        """`event: changed` lines for one client, starting with the current version."""
        waiter = _Waiter(asyncio.get_running_loop())
        with self._lock:
            self._waiters[waiter] = None
            seen = self._version
            oldest = list(self._waiters)[: max(0, len(self._waiters) - self._max_streams)]
            for ended in oldest:
                ended.ended = True
        for ended in oldest:
            ended.wake()
        try:
            yield _message("hello", seen)
            while True:
                try:
                    await asyncio.wait_for(waiter.event.wait(), KEEPALIVE_SECONDS)
                except TimeoutError:
                    yield ": keepalive\n\n"
                    continue
                waiter.event.clear()
                with self._lock:
                    closed, version = self._closed, self._version
                if closed or waiter.ended:
                    return
                if version != seen:
                    seen = version
                    yield _message("changed", version)
        finally:
            with self._lock:
                self._waiters.pop(waiter, None)


def _message(kind: str, version: int) -> str:
    return f"event: {kind}\ndata: {json.dumps({'version': version})}\n\n"
