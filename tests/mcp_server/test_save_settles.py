"""An MCP save is quick in a small store, where every change of size moves the background
(search/background.py): the save's paraphrase check syncs the new memory's row only, and the
server settles the background in a low-priority thread once the saves stop (mcp_server/lazy.py).
The real `local-recall mcp` subprocess, driven by the real MCP client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client

from local_recall.mcp_server.lazy import SETTLE_AFTER_SECONDS
from local_recall.recall import Recall
from local_recall.search.background import BACKGROUND_JSON
from local_recall.settings import Settings
from tests.conftest import clean_env
from tests.daemon_runs import daemon_env, lr, stop_and_reap, wait_for
from tests.hook_runs import log_text
from tests.mcp_session import call, run_session
from tests.waiting import HANG_CEILING_SECONDS, Ceiling

SEEDED = 12


def background_size(recall: Recall) -> int:
    found = json.loads((recall.layout.state_dir / BACKGROUND_JSON).read_text("utf-8"))
    return int(found["memories"])


@pytest.mark.slow  # a real index with the embedded MiniLM model, and ~100 probe searches
def test_saves_leave_the_background_to_the_idle_server(repo: Path) -> None:
    recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
    for i in range(SEEDED):
        recall.save(f"Module {i} owns table {i}", f"Only module_{i}.py writes to table_{i}.")
    recall.sync_index()
    assert background_size(recall) == SEEDED

    async def body(client: Client) -> None:
        first = await call(
            client,
            "save_memory",
            {"subject": "Wheels are built by hatch", "content": "`hatch build` makes the wheel."},
        )
        assert first["created"] is True
        # the save returned without the ~100 probe searches of a recomputed background
        assert background_size(recall) == SEEDED
        second = await call(
            client,
            "save_memory",
            {"subject": "Docs are built by mkdocs", "content": "`mkdocs build` writes site/."},
        )
        assert second["created"] is True
        found = await call(client, "search_memories", {"query": "how is the wheel built"})
        assert found["results"][0]["id"] == first["id"]
        # once the saves stop, the idle server settles it exactly (the session still open)
        ceiling = Ceiling(SETTLE_AFTER_SECONDS + HANG_CEILING_SECONDS)
        while background_size(recall) != SEEDED + 2 and not ceiling.passed():
            await anyio.sleep(0.5)
        assert background_size(recall) == SEEDED + 2

    run_session(repo, body)


@pytest.mark.slow  # a real index with the embedded MiniLM model
def test_a_save_leaves_the_background_to_the_next_sync(repo: Path) -> None:
    """Even far off (2 → 3 memories: a third), a save's paraphrase check does not recompute
    the background; the search after it does (a sync someone waits on, far off)."""
    recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
    recall.save("Wheels are built by hatch", "`hatch build` makes the wheel.")
    recall.save("Docs are built by mkdocs", "`mkdocs build` writes site/.")
    recall.sync_index()
    assert background_size(recall) == 2
    created = recall.save(
        "Releases are tagged by CI", "A tag vX.Y.Z on main publishes.", unless_paraphrase=True
    )
    assert created.created and not created.paraphrase
    assert background_size(recall) == 2
    assert recall.search("how is a release published")[0].id == created.memory.id
    assert background_size(recall) == 3


@pytest.fixture
def daemon(repo: Path) -> Iterator[None]:
    env = daemon_env(repo)
    started = lr(repo, "daemon", "start", env=env)
    assert started.returncode == 0, started.stderr
    wait_for(lambda: "re-indexed (start)" in log_text(repo), what="the daemon never synced")
    try:
        yield
    finally:
        stop_and_reap(repo)


@pytest.mark.slow  # a real daemon, a real index with the embedded MiniLM model
def test_beside_a_daemon_a_save_is_synced_once_by_its_watcher(repo: Path, daemon: None) -> None:
    """The daemon's watcher syncs after every change to the memory files: the server leaves
    its settle to it rather than make a second full sync of the same save."""
    recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
    seen = {"before": len(log_text(repo))}

    async def body(client: Client) -> None:
        saved = await call(
            client,
            "save_memory",
            {"subject": "Wheels are built by hatch", "content": "`hatch build` makes the wheel."},
        )
        assert saved["created"] is True
        ceiling = Ceiling(SETTLE_AFTER_SECONDS + HANG_CEILING_SECONDS)
        while "MCP settle" not in log_text(repo):  # the session still open
            ceiling.check("the server never settled")
            await anyio.sleep(0.2)

    run_session(repo, body)
    wait_for(
        lambda: "re-indexed (memory files" in log_text(repo)[seen["before"] :],
        what="the daemon never synced the save",
    )
    assert background_size(recall) == 1
    after = log_text(repo)[seen["before"] :]
    assert "MCP settle: left to the daemon" in after
    syncs = after.count("MCP settle: index ready") + after.count("re-indexed (memory files")
    assert syncs == 1
