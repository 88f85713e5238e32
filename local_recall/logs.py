"""Logging to local-recall/recall.log (rotated, gitignored). Never to stdout: for hooks and the
MCP server stdout is a protocol.

Only adapters call this (the CLI, the hooks, the MCP server, the daemon through `daemon run`):
the library logs through `logging` and never configures it, so opening a second repository in
one process does not redirect the first one's log.

The log lives in a folder anyone who can push may have planted things in: it is never opened
through a symbolic link (a committed `recall.log` symlink would make every hook append to a
file of the attacker's choice), and every message is written on one line with control
characters escaped (a file name holding a newline cannot start a line of its own). When the log
cannot be opened (read-only checkout, a symlink), nothing is logged — never stderr, which is a
protocol channel for hooks."""

from __future__ import annotations

import io
import logging
import logging.handlers
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from local_recall.repo.files import open_append_nofollow
from local_recall.repo.layout import Layout

if TYPE_CHECKING:
    from local_recall.recall import Recall

_FORMAT = "%(asctime)s %(process)d %(name)s %(levelname)s %(message)s"
_MAX_BYTES = 1_000_000
_BACKUPS = 3
_handler_for: dict[Path, logging.Handler] = {}


def logging_into(layout: Layout) -> bool:
    """Whether this process's package logger writes into `layout`'s log file now."""
    return layout.log_path in _handler_for


def configure_logging(layout: Layout, level: str) -> None:
    """Attach one rotating file handler per log file to the package logger (idempotent).

    Before `local-recall init` there is no folder to log into; then nothing is written."""
    logger = logging.getLogger("local_recall")
    logger.setLevel(level)
    logger.propagate = False
    if not logger.handlers:
        # without any handler, logging's "last resort" would print warnings on stderr
        logger.addHandler(logging.NullHandler())
    if not layout.recall_dir.is_dir() or layout.log_path in _handler_for:
        return
    for old in list(_handler_for.values()):  # one repo per process; tests open many
        logger.removeHandler(old)
        old.close()
    _handler_for.clear()
    try:
        handler: logging.Handler = _NoFollowFileHandler(
            layout.log_path, maxBytes=_MAX_BYTES, backupCount=_BACKUPS, encoding="utf-8"
        )
    except OSError:
        return  # read-only checkout, a symlink: logging must never be why a command fails
    handler.setFormatter(OneLineFormatter(_FORMAT))
    handler.addFilter(RepeatFilter())
    logger.addHandler(handler)
    _handler_for[layout.log_path] = handler
    # The daemon's web server and event loop log under their own names (an accept that fails
    # for want of descriptors, a connection the server gave up on): into the same file, at
    # WARNING, through the same filter, never to stderr.
    for name in FOREIGN_LOGGERS:
        foreign = logging.getLogger(name)
        for old in [h for h in foreign.handlers if isinstance(h, _NoFollowFileHandler)]:
            foreign.removeHandler(old)
        foreign.addHandler(handler)
        foreign.setLevel(logging.WARNING)
        foreign.propagate = False


def log_to_repo(recall: Recall) -> None:
    """Log into the opened repository's recall.log at its configured level."""
    configure_logging(recall.layout, recall.config.log.level)
    for problem in recall.config.ignored:  # a committed remote host or program
        logging.getLogger("local_recall.config").warning("%s", problem)


class _NoFollowFileHandler(logging.handlers.RotatingFileHandler):
    """Opens (and reopens after rotating) the log without following a symlink."""

    def _open(self) -> io.TextIOWrapper:
        fd = open_append_nofollow(Path(self.baseFilename))
        return open(fd, "a", encoding=self.encoding, errors=self.errors)


FOREIGN_LOGGERS = ("asyncio", "uvicorn", "uvicorn.error")


class RepeatFilter(logging.Filter):
    """Rate-limits repeated warnings: at most `burst` records of one kind (logger, level,
    message template) per `window` seconds; the first record after a suppressed stretch says
    how many were left out. A local flood ("accept failed" ~7,700 times in seconds)
    then costs a few lines, not the log's rotation. INFO and below pass untouched."""

    def __init__(self, window: float = 60.0, burst: int = 5) -> None:
        super().__init__()
        self.window, self.burst = window, burst
        self._seen: dict[tuple[str, int, str], tuple[float, int, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        key = (record.name, record.levelno, str(record.msg))
        start, count, suppressed = self._seen.get(key, (record.created, 0, 0))
        if record.created - start >= self.window:
            start, count = record.created, 0
        if count >= self.burst:
            self._seen[key] = (start, count, suppressed + 1)
            return False
        self._seen[key] = (start, count + 1, 0)
        if len(self._seen) > 1000:  # many distinct messages: forget the oldest kinds
            for old in list(self._seen)[:500]:
                del self._seen[old]
        if suppressed:
            record.msg = f"{record.msg} ({suppressed} like it suppressed)"
        return True


# C0 and C1 controls, DEL, and the Unicode line and paragraph separators
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def escape_controls(text: str) -> str:
    """`text` on one line: each control character written as its escape (`\\n`, `\\x1b`)."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


class OneLineFormatter(logging.Formatter):
    """One line per message, whatever a file name in it holds; a traceback's lines each start
    with `  | ` so that none of them can pass for a line of ours (or of a shell script)."""

    def format(self, record: logging.LogRecord) -> str:
        saved = record.msg, record.args
        record.msg, record.args = escape_controls(record.getMessage()), None
        try:
            return super().format(record)
        finally:
            record.msg, record.args = saved

    def formatException(self, ei: Any) -> str:
        text = super().formatException(ei)
        return "\n".join("  | " + escape_controls(line) for line in text.splitlines())

    def formatStack(self, stack_info: str) -> str:
        return "\n".join("  | " + escape_controls(line) for line in stack_info.splitlines())
