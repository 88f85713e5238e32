"""The MCP server's hidden prompt tool, asked through the real `mcp` client as Claude Code's
`mcp_tool` hook asks it: the server's parameters and one prompt at a time, each with its own
prompt id."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters

from tests.hook_runs import hook_env


def prompt_server(repo: Path, runtime: Path) -> StdioServerParameters:
    """`local-recall mcp` for `repo`, its hand-off marker under `runtime`."""
    env = hook_env(repo, {"XDG_RUNTIME_DIR": str(runtime), "LOCAL_RECALL_ROOT": str(repo)})
    return StdioServerParameters(
        command=sys.executable, args=["-m", "local_recall", "mcp"], env=env, cwd=str(repo)
    )


class PromptTool:
    """Calls `user_prompt_submit`; its hook output as text."""

    def __init__(self) -> None:
        self._ids = itertools.count()

    async def __call__(self, client: Client, prompt: str) -> str:
        result = await client.call_tool(
            "user_prompt_submit", {"prompt": prompt, "prompt_id": f"p-{next(self._ids)}"}
        )
        assert not result.is_error
        return str(result.content[0].text)  # type: ignore[union-attr]
