"""A store's catalog entry (store.py): every field of a parsed memory file in JSON form, and the
memory built back from one. The catalog (catalog_file.py) keeps one per file, keyed by stat."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from local_recall.memory.dispute import Dispute
from local_recall.memory.model import Memory
from local_recall.memory.timestamps import exact_time, written_times


def entry_from_memory(memory: Memory) -> dict[str, Any]:
    written, exact = written_times(memory.occurred_at)
    return {
        "id": memory.id,
        "subject": memory.subject,
        "body": memory.body,
        "keywords": list(memory.keywords),
        "applies_to": memory.applies_to,
        "occurred_at": written,
        "occurred_at_exact": exact,
        "content_hash": memory.content_hash,
        "source": memory.source,
        # provenance, each key spelled out: a first scan builds one entry per file
        "commit": memory.commit,
        "branch": memory.branch,
        "session": memory.session,
        "unreviewed": memory.unreviewed,
        "superseded_by": memory.superseded_by,
        "superseded_reason": memory.superseded_reason,
        "disputed": list(astuple_dispute(memory.disputed)) if memory.disputed else None,
        "files": list(memory.files),
        "extra": json_safe(dict(memory.extra)) if memory.extra else {},
        "stale_hash": memory.stale_hash,
    }


def memory_from_entry(entry: Mapping[str, Any], path: Path, kind: str) -> Memory:
    return Memory(
        id=entry["id"],
        subject=entry["subject"],
        body=entry["body"],
        keywords=tuple(entry["keywords"]),
        applies_to=entry["applies_to"],
        occurred_at=exact_time(entry["occurred_at_exact"]),
        content_hash=entry["content_hash"],
        source=entry["source"],
        kind=kind,
        commit=entry["commit"],
        branch=entry["branch"],
        session=entry["session"],
        unreviewed=entry["unreviewed"],
        superseded_by=entry["superseded_by"],
        superseded_reason=entry["superseded_reason"],
        disputed=Dispute(*entry["disputed"]) if entry["disputed"] else None,
        files=tuple(entry["files"]),
        extra=MappingProxyType(entry["extra"]),
        path=path,
        stale_hash=entry["stale_hash"],
    )


def astuple_dispute(dispute: Dispute) -> tuple[str, str | None, str | None]:
    return (dispute.reason, dispute.date, dispute.session)


def json_safe(value: Any) -> Any:
    """Person-added frontmatter may hold dates; the catalog stores them as ISO strings."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def entry_and_memory(memory: Memory) -> tuple[dict[str, Any], Memory]:
    """`memory`'s entry, and the memory a scan through the catalog builds back from it: `memory`
    itself when the entry holds it exactly (its person-added keys are JSON already, no dates),
    so a first scan does not build each memory twice (~10 % of a file's CPU)."""
    entry = entry_from_memory(memory)
    if not memory.extra or entry["extra"] == dict(memory.extra):
        return entry, memory
    return entry, memory_from_entry(entry, memory.path or Path(), memory.kind)
