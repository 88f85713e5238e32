"""Watching folders for the daemon: the only module that imports watchdog."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from local_recall.daemon.schedule import CHANGE_EVENTS, repo_transcript_dirs

log = logging.getLogger(__name__)


class _Handler(FileSystemEventHandler):
    def __init__(self, notify: Callable[[str], None]) -> None:
        self._notify = notify

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in CHANGE_EVENTS or event.is_directory:
            return
        for path in (event.src_path, getattr(event, "dest_path", "")):
            if path:
                self._notify(os.fsdecode(path))


class Watches:
    """watchdog observers for folders that come and go (created after the daemon started)."""

    def __init__(self) -> None:
        self._observer = Observer()
        self._watched: dict[str, Any] = {}

    def start(self) -> None:
        self._observer.start()

    def refresh(self, targets: Sequence[tuple[Path, Callable[[str], None]]]) -> list[str]:
        """Watch the target folders that exist, drop the ones that went; return those added."""
        wanted = {str(path): notify for path, notify in targets if path.is_dir()}
        for key in list(self._watched):
            if key not in wanted:
                with contextlib.suppress(Exception):
                    self._observer.unschedule(self._watched.pop(key))
        added = []
        for key, notify in wanted.items():
            if key in self._watched:
                continue
            try:
                self._watched[key] = self._observer.schedule(_Handler(notify), key, recursive=True)
                added.append(key)
            except OSError as exc:  # inotify limits, a folder removed meanwhile
                log.warning("cannot watch %s: %s", key, exc)
        return added

    @property
    def folders(self) -> list[str]:
        return sorted(self._watched)

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._observer.stop()
            self._observer.join(timeout=2.0)


def transcript_dirs(configs: Sequence[Path], roots: Sequence[str]) -> list[Path]:
    """This repository's transcript folders under each Claude config folder (`roots`: the
    repository's encoded forms, schedule.repo_transcript_dirs)."""
    found: list[Path] = []
    for config in dict.fromkeys(configs):
        projects = config / "projects"
        try:
            names = [entry.name for entry in os.scandir(projects) if entry.is_dir()]
        except OSError:
            names = []
        found += [projects / name for name in repo_transcript_dirs(names, roots)]
    return found
