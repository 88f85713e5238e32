"""A session with the real MCP server over stdio (`python -m local_recall mcp`) through the
official client, and its tool calls."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from tests.conftest import clean_env


def run_session(
    root: Path, body: Callable[[Client], Awaitable[None]], *, cwd: Path | None = None
) -> None:
    """Start `python -m local_recall mcp` for `root` (via LOCAL_RECALL_ROOT, from `cwd`)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "local_recall", "mcp"],
        env=clean_env({"LOCAL_RECALL_ROOT": str(root)}),
        cwd=str(cwd or root),
    )

    async def main() -> None:
        async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
            await body(client)

    anyio.run(main)


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def call_error(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    text = result.content[0].text  # type: ignore[union-attr]
    assert isinstance(text, str)
    return text
