"""The viewer's stats page: memories by kind and state, the index, the daemon's last work, and
today's extraction spend against the budget (`[extraction] daily_max_calls/daily_max_tokens`)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from local_recall.capture.budget import BUDGET_FILENAME, load_daily_spend
from local_recall.capture.health import ExtractionHealth, describe, read_health, warning_line
from local_recall.lifecycle.staleness import Stale
from local_recall.memory.model import Memory
from local_recall.recall import Recall
from local_recall.web.shapes import provenance

DAEMON_STATUS = "daemon.json"


def memory_counts(memories: Sequence[Memory], stale: Mapping[str, Stale]) -> dict[str, Any]:
    """How many memories of each kind, and in each state (a memory may be in several)."""
    by_kind = Counter(m.kind for m in memories)
    states: Counter[str] = Counter()
    for memory in memories:
        prov = provenance(memory)
        states["unreviewed" if prov["unreviewed"] else "reviewed"] += 1
        if memory.id in stale:
            states["stale"] += 1
        if prov["superseded_by"]:
            states["superseded"] += 1
    return {"total": len(memories), "by_kind": dict(by_kind), "by_state": dict(states)}


def gather_stats(
    recall: Recall, memories: Sequence[Memory], stale: Mapping[str, Stale]
) -> dict[str, Any]:
    health = recall.searcher.health()
    today = recall.settings.clock().date()
    spend = load_daily_spend(recall.layout.state_dir / BUDGET_FILENAME, today)
    spent_today = spend.date == today
    limits = recall.config.extraction
    return {
        "memories": memory_counts(memories, stale),
        "problems": len(recall.problems()),
        "index": {
            "embedder": health.embedder,
            "embedder_error": health.embedder_error,
            "indexed": health.indexed,
            "files": health.files,
            "index_error": health.index_error,
            "last_fallback": health.last_fallback,
        },
        "daemon": _daemon_status(recall),
        "extraction": _extraction(recall),
        "budget": {
            "date": today.isoformat(),
            "calls": spend.calls if spent_today else 0,
            "tokens": spend.input_tokens + spend.output_tokens if spent_today else 0,
            "max_calls": limits.daily_max_calls,
            "max_tokens": limits.daily_max_tokens,
        },
        # Hooks do not record their latency yet (docs/ui.md#stats); the page says so.
        "hook_latency": None,
    }


def _daemon_status(recall: Recall) -> dict[str, Any] | None:
    """The parts of state/daemon.json a person reads: when it last re-indexed and extracted."""
    try:
        data = json.loads((recall.layout.state_dir / DAEMON_STATUS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    keep = ("state", "started", "last_sync", "last_pass", "counts", "last_errors")
    result = {key: data.get(key) for key in keep}
    for key in ("last_sync", "last_pass"):
        item = result.get(key)
        if isinstance(item, dict):  # the whole pass report is long: when and how long suffice
            result[key] = {"at": item.get("at"), "seconds": item.get("seconds")}
    return result


def extraction_warning(recall: Recall) -> str:
    """The line a session start shows while extraction has been failing for a while, else "":
    the viewer shows it on every page, by the same rule (capture/health.py)."""
    now = recall.settings.clock()
    health = read_health(recall.layout.state_dir, now)
    return warning_line(health, now) if health is not None else ""


def _extraction(recall: Recall) -> dict[str, Any]:
    """Is extraction failing (capture/health.py): what, since when, what waits for a retry."""
    now = recall.settings.clock()
    health = read_health(recall.layout.state_dir, now) or ExtractionHealth()
    return {**health.to_json(), "summary": describe(health)}
