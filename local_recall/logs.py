"""Logging to local-recall/recall.log (rotated, gitignored). Never to stdout: for hooks and the
MCP server stdout is a protocol."""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

from local_recall.repo.layout import Layout

_FORMAT = "%(asctime)s %(process)d %(name)s %(levelname)s %(message)s"
_MAX_BYTES = 1_000_000
_BACKUPS = 3
_handler_for: dict[Path, logging.Handler] = {}


def configure_logging(layout: Layout, level: str) -> None:
    """Attach one rotating file handler per log file to the package logger (idempotent).

    Before `local-recall init` there is no folder to log into; then nothing is written."""
    logger = logging.getLogger("local_recall")
    logger.setLevel(level)
    logger.propagate = False
    if not layout.recall_dir.is_dir() or layout.log_path in _handler_for:
        return
    for old in list(_handler_for.values()):  # one repo per process; tests open many
        logger.removeHandler(old)
        old.close()
    _handler_for.clear()
    try:
        handler: logging.Handler = logging.handlers.RotatingFileHandler(
            layout.log_path, maxBytes=_MAX_BYTES, backupCount=_BACKUPS, encoding="utf-8"
        )
    except OSError:
        return  # read-only checkout: logging must never be the reason a command fails
    handler.setFormatter(logging.Formatter(_FORMAT))
    logger.addHandler(handler)
    _handler_for[layout.log_path] = handler
