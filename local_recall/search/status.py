"""What `local-recall doctor` learns about search: the last degraded search or sync
(`state/search-status.json`) and the state of the embedder and the index (`IndexHealth`).

The status file is for a person reading doctor's report later, from another process. A caller
that needs to know whether *its* search was degraded reads `SearchResult.degraded_reason`: the
file is shared by every process and thread of the repository.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from local_recall.errors import ConfigError, EmbedderUnavailable, IndexUnavailable, StorageError
from local_recall.memory.timestamps import format_timestamp
from local_recall.repo.files import read_bytes_nofollow, write_text_atomic
from local_recall.search.embedders import Embedder, embedder_fingerprint
from local_recall.search.index.rows import MemoryIndex
from local_recall.search.index.sync import embedder_identity

log = logging.getLogger(__name__)

STATUS_FILE: Final = "search-status.json"


@dataclass(frozen=True, slots=True)
class SearchStatus:
    """The state of the last search or sync, for `doctor` and `Recall.search_status()`."""

    fallback: str | None  # why search ran degraded, None when everything worked
    at: str | None  # ISO time it was recorded
    embedder: str | None = None  # provider:model the search used

    def to_json(self) -> dict[str, Any]:
        return {"fallback": self.fallback, "at": self.at, "embedder": self.embedder}


@dataclass(frozen=True, slots=True)
class IndexHealth:
    """What `local-recall doctor` reports about search (gathered by `Searcher.health()`)."""

    embedder: str  # provider:model as configured
    embedder_fingerprint: str | None  # None when it cannot be loaded or reached
    embedder_error: str | None
    index_embedder: str | None  # the fingerprint the index was built with (None: text-only)
    index_exists: bool
    indexed: int | None  # rows in the index; None when it cannot be read
    index_error: str | None
    files: int  # readable memory files of both kinds
    has_ann: bool
    last_fallback: str | None


class StatusFile:
    """`state/search-status.json`, rewritten only when the reason changes (searches are
    frequent; the reason rarely changes)."""

    def __init__(self, path: Path, clock: Callable[[], datetime]) -> None:
        self.path = path
        self._clock = clock
        self._status: SearchStatus | None = None

    def record(self, fallback: str | None, embedder: str | None) -> None:
        previous = self._status if self._status is not None else self.read()
        if previous.fallback == fallback:
            return
        status = SearchStatus(fallback, format_timestamp(self._clock()), embedder)
        self._status = status
        try:
            write_text_atomic(self.path, json.dumps(status.to_json()) + "\n")
        except StorageError as exc:  # read-only checkout: the status is informational
            log.debug("search status not saved: %s", exc)

    def read(self) -> SearchStatus:
        if self._status is not None:
            return self._status
        try:
            data = json.loads(read_bytes_nofollow(self.path))
            return SearchStatus(data.get("fallback"), data.get("at"), data.get("embedder"))
        except (OSError, ValueError, AttributeError):
            return SearchStatus(None, None)


def index_health(
    embedder: Callable[[], Embedder], index: MemoryIndex, files: int, last_fallback: str | None
) -> IndexHealth:
    """Load the embedder (`embedder()` may raise ConfigError), read the index. Never raises."""
    fingerprint: str | None = None
    error: str | None = None
    identity = "?"
    try:
        loaded = embedder()
        identity = embedder_identity(loaded)
        loaded.embed_query("local-recall doctor")  # loads MiniLM / reaches Ollama
        fingerprint = embedder_fingerprint(loaded)
    except (EmbedderUnavailable, ConfigError) as exc:
        error = str(exc)
    meta = index.read_meta()
    indexed: int | None = None
    index_error: str | None = None
    has_ann = False
    exists = index.exists()
    if exists:
        try:
            indexed = index.count()
            has_ann = index.has_ann()
        except IndexUnavailable as exc:
            index_error = str(exc)
    return IndexHealth(
        embedder=identity,
        embedder_fingerprint=fingerprint,
        embedder_error=error,
        index_embedder=None if meta is None else meta.embedder,
        index_exists=exists,
        indexed=indexed,
        index_error=index_error,
        files=files,
        has_ann=has_ann,
        last_fallback=last_fallback,
    )
