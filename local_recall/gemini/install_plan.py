"""What `init --agent gemini` writes (pure, over the file's text): `.gemini/settings.json` with

* hooks SessionStart (no matcher: Gemini matches lifecycle events by exact string) and
  BeforeAgent running `local-recall hook --agent gemini …`, timeouts in milliseconds;
* `mcpServers.local-recall` (a server of that name that is not ours is left alone);
* our read-only MCP tools in `tools.allowed`: `gemini -p` offers only tools that need no
  confirmation, and `save_memory` / `delete_memory` keep asking.

Project settings apply in a trusted folder. Every other key is kept where it was.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from local_recall.agents.plan import (
    AgentHookSpec,
    plan_hooks_install,
    plan_hooks_uninstall,
    plan_list_add,
    plan_list_remove,
    plan_mcp_server_install,
    plan_mcp_server_uninstall,
)
from local_recall.repo.json_text import render_json_like

AGENT = "gemini"
SETTINGS_FILE = ".gemini/settings.json"
FILES = [SETTINGS_FILE]
SERVER = "local-recall"
HOOKS = (
    AgentHookSpec(
        "SessionStart", "session-start", {"name": "local-recall-session-start", "timeout": 15000}
    ),
    AgentHookSpec(
        "BeforeAgent", "before-agent", {"name": "local-recall-before-agent", "timeout": 10000}
    ),
)
READ_ONLY_TOOLS = tuple(
    f"mcp_{SERVER}_{tool}"
    for tool in (
        "search_memories",
        "get_memories",
        "memory_timeline",
        "recent_memories",
        "session_summaries",
    )
)


def plan(texts: Mapping[str, str | None], launcher: Sequence[str] | None) -> dict[str, str | None]:
    text = texts.get(SETTINGS_FILE)
    loaded = json.loads(text) if text and text.strip() else {}
    current: dict[str, object] = loaded if isinstance(loaded, dict) else {}
    if launcher is None:
        new = plan_hooks_uninstall(current, AGENT)
        new = plan_mcp_server_uninstall(new, SERVER)
        new = plan_list_remove(new, ("tools", "allowed"), READ_ONLY_TOOLS)
    else:
        new = plan_hooks_install(current, HOOKS, launcher, AGENT)
        server = {"command": launcher[0], "args": [*launcher[1:], "mcp"]}
        new = plan_mcp_server_install(new, SERVER, server)
        new = plan_list_add(new, ("tools", "allowed"), READ_ONLY_TOOLS)
    if new == current:
        return {SETTINGS_FILE: text}
    return {SETTINGS_FILE: render_json_like(new, text) if new else None}
