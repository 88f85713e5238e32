"""`state/daemon.json`: what the daemon is doing and did last, for `daemon status` and
`doctor`. Written atomically after each piece of work and on a heartbeat; timestamps come from
the settings' clock."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from local_recall import __version__
from local_recall.repo.files import write_text_atomic
from local_recall.repo.layout import Layout

log = logging.getLogger(__name__)

STATUS_NAME = "daemon.json"
MAX_LAST_ERRORS = 10


def status_path(layout: Layout) -> Path:
    return layout.state_dir / STATUS_NAME


def format_utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _jsonable(value: Any) -> Any:
    """A report (dataclass, Path, datetime, ...) as JSON-safe values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


class StatusFile:
    """state/daemon.json: written atomically after each piece of work and on a heartbeat."""

    def __init__(self, layout: Layout, clock: Callable[[], datetime]) -> None:
        self._path = status_path(layout)
        self._clock = clock
        self._lock = threading.Lock()
        self._data: dict[str, Any] = {
            "pid": os.getpid(),
            "version": __version__,
            "root": str(layout.root),
            "socket": None,
            "state": "starting",
            "started": self._now(),
            "updated": self._now(),
            "last_pass": None,
            "last_sync": None,
            "counts": {"passes": 0, "syncs": 0, "queries": 0, "errors": 0},
            "last_errors": [],
        }
        self._written_queries = 0

    def _now(self) -> str:
        return format_utc(self._clock())

    def set(self, **fields: Any) -> None:
        with self._lock:
            self._data.update(fields)
        self.write()

    def count_query(self) -> None:
        with self._lock:
            self._data["counts"]["queries"] += 1

    def record(
        self,
        kind: Literal["pass", "sync"],
        started: float,
        report: Any,
        *,
        failed: Sequence[str] = (),
    ) -> None:
        """A piece of work done, and the items of it that `failed` (a pass whose extractor
        calls failed: each is retried later), in one write: a reader never sees the work
        without its errors."""
        with self._lock:
            self._data[f"last_{kind}"] = {
                "at": self._now(),
                "seconds": round(time.monotonic() - started, 3),
                "report": _jsonable(report),
            }
            self._data["counts"][kind + "es" if kind == "pass" else kind + "s"] += 1
            self._count_failed(kind, failed)
        self.write()

    def error(self, where: str, exc: BaseException) -> None:
        with self._lock:
            self._data["counts"]["errors"] += 1
            errors = [
                *self._data["last_errors"],
                {"at": self._now(), "where": where, "error": f"{type(exc).__name__}: {exc}"},
            ]
            self._data["last_errors"] = errors[-MAX_LAST_ERRORS:]
        self.write()

    def _count_failed(self, where: str, errors: Sequence[str]) -> None:
        """Failed items counted as errors with their reasons, so that `daemon status` never
        says "errors 0" while nothing gets extracted (under the lock)."""
        if not errors:
            return
        self._data["counts"]["errors"] += len(errors)
        entries = [{"at": self._now(), "where": where, "error": e[:500]} for e in errors]
        self._data["last_errors"] = [*self._data["last_errors"], *entries][-MAX_LAST_ERRORS:]

    def heartbeat(self) -> None:
        with self._lock:
            if self._data["counts"]["queries"] == self._written_queries:
                return
        self.write()

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return json.loads(json.dumps(self._data))  # type: ignore[no-any-return]

    def write(self) -> None:
        with self._lock:
            self._data["updated"] = self._now()
            self._written_queries = self._data["counts"]["queries"]
            text = json.dumps(self._data, indent=2, ensure_ascii=False) + "\n"
            try:
                write_text_atomic(self._path, text)
            except Exception as exc:  # StorageError: the status file is informational
                log.warning("cannot write %s: %s", self._path, exc)
