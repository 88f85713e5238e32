"""A store's background, `state/background.json`: how well prompts that no memory should answer
match this store. Written by the indexer after a sync, read by every search (decision.py).

    background = compute_background(best_relevance, memories=len(store), embedder=fp)
    write_background(state_dir, background)
    background = read_background(state_dir)   # None: missing, stale or not of the right shape

The indexer searches the store with each of background_probes.PROBES, exactly as a prompt is
searched (the same candidates and relevance), and keeps each probe's best relevance. It is
recomputed when the probe set, the embedder or the store's size has changed by more than
RECOMPUTE_SHARE since (a store under RECOMPUTE_BELOW memories: any change of size): a memory
more or less in a store of thousands does not move the distribution, and ~100 searches cost a
few seconds of CPU in a fresh process (docs/search.md). A sync that someone waits on (a
search's) only recomputes a background that is far off (WAITING_SHARE), and a save's paraphrase
check skips it: a save must not cost a second in a small store, where every change counts; the
syncs nobody waits on (the daemon's, `index`, a capture pass, the MCP server when idle) settle
it exactly.

The state folder is gitignored but could be planted by a hostile repository: the file is read
without following symlinks, capped in size, and validated field by field; anything wrong reads
as "no background" (the decision then uses relevance alone, and `why` says so).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Final

from local_recall.errors import EmbedderUnavailable, IndexUnavailable
from local_recall.repo import base_log
from local_recall.search.background_probes import PROBES, PROBES_VERSION
from local_recall.search.decision import Background, background_from_json

BACKGROUND_JSON: Final = "background.json"
MAX_BACKGROUND_BYTES: Final = 1 << 20
RECOMPUTE_SHARE: Final = 0.02
RECOMPUTE_BELOW: Final = 200
WAITING_SHARE: Final = 0.25

log = logging.getLogger(__name__)


def read_background(state_dir: Path) -> Background | None:
    found = background_from_json(
        base_log.read_json(state_dir / BACKGROUND_JSON, MAX_BACKGROUND_BYTES)
    )
    if found is None or found.version != PROBES_VERSION:
        return None
    return found


def write_background(state_dir: Path, background: Background) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    text = json.dumps(background.to_json())
    base_log.write_base(state_dir / BACKGROUND_JSON, lambda handle: handle.write(text.encode()))


def needs_background(
    current: Background | None, *, memories: int, embedder: str, waiting: bool = False
) -> bool:
    """Whether the background must be (re)computed for a store of `memories` memories;
    `waiting`: someone waits on this sync, so only a background that is far off."""
    if current is None or current.version != PROBES_VERSION or current.embedder != embedder:
        return True
    if waiting:
        return abs(memories - current.memories) > WAITING_SHARE * max(memories, current.memories)
    if memories < RECOMPUTE_BELOW or current.memories < RECOMPUTE_BELOW:
        return memories != current.memories
    return abs(memories - current.memories) > RECOMPUTE_SHARE * max(memories, current.memories)


def compute_background(
    best_relevance: Callable[[str], float], *, memories: int, embedder: str
) -> Background:
    """Each probe's best relevance in the store (`best_relevance(probe)`: the search's)."""
    tops = sorted(max(0.0, min(1.0, best_relevance(probe))) for probe in PROBES)
    return Background(tuple(tops), memories, PROBES_VERSION, embedder)


def refresh_background(
    state_dir: Path,
    current: Background | None,
    *,
    memories: int,
    embedder: Callable[[], str],
    best_relevance: Callable[[str], float],
    waiting: bool = False,
) -> Background | None:
    """Recompute and write the background when `needs_background` says so (the indexer calls
    this after every sync; `embedder` gives the embedder's fingerprint). Never raises: a store
    without one decides by relevance alone."""
    if memories == 0:
        return current
    try:
        name = embedder()
        if not needs_background(current, memories=memories, embedder=name, waiting=waiting):
            return current
        background = compute_background(best_relevance, memories=memories, embedder=name)
        write_background(state_dir, background)
    except (OSError, ValueError, IndexUnavailable, EmbedderUnavailable) as exc:
        log.warning("background not written: %s", exc)
        return current
    return background
