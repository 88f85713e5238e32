"""A server started in a repository without local-recall/ (the plugin's starts in every
session of every repository): it lists its tools, answers each call with a clear error, and
writes nothing there — no index, no log, no daemon. The real `local-recall mcp` subprocess."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
from mcp import Client

from tests.conftest import git_init
from tests.mcp_session import call_error, run_session


def test_a_repository_without_local_recall_is_left_untouched(tmp_path: Path) -> None:
    root = git_init(tmp_path / "someone else's repo")
    before = sorted(p.name for p in root.iterdir())

    async def body(client: Client) -> None:
        tools = await client.list_tools()  # starts the warm-up, which has nothing to warm
        assert "search_memories" in [t.name for t in tools.tools]
        for tool, arguments in (
            ("search_memories", {"query": "filelock"}),
            ("recent_memories", {}),
            ("save_memory", {"subject": "A fact", "content": "Saved where nobody asked."}),
        ):
            message = await call_error(client, tool, arguments)
            assert "has no local-recall/ folder: run `local-recall init`" in message, message
        started = time.monotonic()
        while time.monotonic() - started < 2:  # a warm-up would have written by now
            await anyio.sleep(0.2)

    run_session(root, body)
    assert sorted(p.name for p in root.iterdir()) == before
