"""What `init --agent gemini` writes (pure, over the file's text): `.gemini/settings.json` with

* hooks SessionStart (no matcher: Gemini matches lifecycle events by exact string) and
  BeforeAgent running `local-recall hook --agent gemini …`, timeouts in milliseconds;
* `mcpServers.local-recall` (a server of that name that is not ours is left alone) with
  `trust: true`, and our writing tools in `tools.confirmationRequired`: Gemini's policy engine
  then allows the read-only tools without a prompt (`gemini -p` runs only tools that need no
  confirmation) while `save_memory` / `delete_memory` keep asking (the confirmation rule
  outranks the trusted server's; in `-p` they answer that they need a confirmation).
  `tools.allowed` did the same but Gemini warns on every run that it is deprecated (removed in
  1.0); `init` takes our names out of it.

Project settings apply in a trusted folder. Every other key is kept where it was.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from local_recall.agents.plan import (
    AgentHookSpec,
    is_our_mcp_server,
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
WRITING_TOOLS = tuple(f"mcp_{SERVER}_{tool}" for tool in ("save_memory", "delete_memory"))
# What earlier versions of `init` put in the deprecated `tools.allowed`: taken out again.
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


CONFIRMATION_REQUIRED = ("tools", "confirmationRequired")


def our_server(document: Mapping[str, object]) -> bool:
    servers = document.get("mcpServers")
    return isinstance(servers, dict) and is_our_mcp_server(servers.get(SERVER))


def plan(texts: Mapping[str, str | None], launcher: Sequence[str] | None) -> dict[str, str | None]:
    text = texts.get(SETTINGS_FILE)
    loaded = json.loads(text) if text and text.strip() else {}
    current: dict[str, object] = loaded if isinstance(loaded, dict) else {}
    new = plan_list_remove(current, ("tools", "allowed"), READ_ONLY_TOOLS)
    if launcher is None:
        new = plan_hooks_uninstall(new, AGENT)
        new = plan_mcp_server_uninstall(new, SERVER)
        new = plan_list_remove(new, CONFIRMATION_REQUIRED, WRITING_TOOLS)
    else:
        new = plan_hooks_install(new, HOOKS, launcher, AGENT)
        server = {"command": launcher[0], "args": [*launcher[1:], "mcp"], "trust": True}
        new = plan_mcp_server_install(new, SERVER, server)
        if our_server(new):  # a server of our name that is someone else's is not trusted
            new = plan_list_add(new, CONFIRMATION_REQUIRED, WRITING_TOOLS)
    if new == current:
        return {SETTINGS_FILE: text}
    return {SETTINGS_FILE: render_json_like(new, text) if new else None}
