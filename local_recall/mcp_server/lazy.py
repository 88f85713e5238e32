"""The MCP server's Recall, opened on first use, and the index warm-up after the handshake."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from local_recall.recall import Recall
    from local_recall.settings import Settings

log = logging.getLogger(__name__)
WARM_UP_NICENESS = 10


class LazyRecall:
    """Opens `Recall` on first use and warms the index in a background thread, so neither
    delays the MCP handshake. Tool calls run in worker threads: the open is guarded by a lock,
    and index work (search, sync) is serialised by another."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._recall: Recall | None = None
        self._open_lock = threading.Lock()
        self.index_lock = threading.Lock()
        self._warm_up: threading.Thread | None = None

    def get(self) -> Recall:
        with self._open_lock:
            if self._recall is None:
                from local_recall.logs import log_to_repo
                from local_recall.recall import Recall

                self._recall = Recall.open(settings=self.settings)
                log_to_repo(self._recall)
            return self._recall

    def start_warm_up(self) -> None:
        with self._open_lock:
            if self._warm_up is not None:
                return
            self._warm_up = threading.Thread(
                target=self._warm, name="local-recall-warm-up", daemon=True
            )
        self._warm_up.start()

    def _warm(self) -> None:
        # Below the prompt hook's calls (claude_code/hooks/mcp_tool.py) and Claude Code itself:
        # a prompt typed while the index warms up must not wait for it. Linux sets a thread's
        # niceness by its id (and the threads it starts inherit it); elsewhere a no-op.
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WARM_UP_NICENESS)
        try:
            recall = self.get()
            with self.index_lock:
                report = recall.sync_index()
            log.info("MCP warm-up: index ready (%s)", report)
        except Exception:  # warm-up is an optimisation: a failure shows again at the first call
            log.warning("MCP warm-up failed", exc_info=True)
