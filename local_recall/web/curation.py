"""The viewer's writing and browsing beyond one memory's page: a new memory (through the same
library write path as `local-recall add`: validated, redacted), the review queue with each
memory's look-alike and its merge, and the session summaries (listed newest first, searched by
their words). Calls the library under the `Viewer`'s lock, as viewer.py does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from local_recall.errors import InvalidInput, RecallError
from local_recall.memory.id_prefix import resolve_id
from local_recall.memory.model import Memory
from local_recall.recall import look_alikes
from local_recall.redaction.findings import redacted_kinds
from local_recall.web.shapes import memory_row, split_keywords
from local_recall.web.viewer import Viewer

MAX_SESSIONS = 200
MAX_QUERY_CHARS = 200


class Curation:
    def __init__(self, viewer: Viewer) -> None:
        self.viewer = viewer
        self.recall = viewer.recall

    def create(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """A new memory written by a person (reviewed), as `add` writes it; `redacted` names the
        kinds of secret the file holds a marker for instead (never the value)."""
        subject, body = _text(fields, "subject"), _text(fields, "body")
        keywords = split_keywords(_text(fields, "keywords"))
        scope = _text(fields, "scope").strip() or "global"
        with self.viewer.writing():
            result = self.recall.save(
                subject, body, keywords=keywords or None, scope=scope, source="viewer"
            )
            memory = result.memory
            detail = self.viewer.detail(memory, None)
        kinds = redacted_kinds(
            [subject, body, *keywords], [memory.subject, memory.body, *memory.keywords]
        )
        return {**detail, "created": result.created, "redacted": sorted(kinds)}

    def review_queue(self) -> list[dict[str, Any]]:
        """Unreviewed memories, oldest first, each with the memory it looks like (the same fact
        in other words: memory/likeness.py), if any."""
        rows = self.viewer.review_queue()
        with self.viewer.lock:
            alike = look_alikes(self.recall, [row["id"] for row in rows])
            for row in rows:
                twin = alike.get(row["id"])
                row["looks_like"] = None if twin is None else self._brief(twin)
        return rows

    def _brief(self, memory_id: str) -> dict[str, str]:
        try:
            return {"id": memory_id, "subject": self.recall.get(memory_id).subject}
        except RecallError:  # deleted or broken meanwhile: named by its id alone
            return {"id": memory_id, "subject": ""}

    def merge(self, ids: object) -> dict[str, Any]:
        """Merge two wordings of one fact, as `review merge` and `consolidate` do."""
        if not isinstance(ids, list) or len(ids) != 2:
            raise InvalidInput("give the two memory ids to merge")
        with self.viewer.writing():
            resolved = [self.recall.get(str(memory_id)).id for memory_id in ids]
            applied = self.recall.lifecycle.merge(resolved)
        return {"kept": applied.kept[0].id, "removed": list(applied.removed)}

    def sessions(self, params: Mapping[str, str]) -> dict[str, Any]:
        """Session summaries, newest first; `q`: only those holding every word of it."""
        text = (params.get("q") or "").strip()[:MAX_QUERY_CHARS]
        words = text.casefold().split()
        with self.viewer.lock:
            found = self.recall.session_summaries()
        hits = [m for m in found if all(word in _haystack(m) for word in words)]
        rows = [{**memory_row(m), "body": m.body[:400]} for m in hits[:MAX_SESSIONS]]
        return {"total": len(hits), "rows": rows, "q": text}

    def session(self, session_id: str) -> dict[str, Any]:
        """One session summary, as a memory's page shows it (not editable)."""
        store = self.recall.summaries
        with self.viewer.lock:
            memory = store.get(resolve_id(session_id, lambda: store.scan().memories))
            return self.viewer.detail(memory, None)


def _haystack(memory: Memory) -> str:
    return f"{memory.subject}\n{memory.body}\n{memory.branch or ''}".casefold()


def _text(fields: Mapping[str, Any], name: str) -> str:
    value = fields.get(name, "")
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be text")
    return value
