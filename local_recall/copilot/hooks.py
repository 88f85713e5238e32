"""Copilot CLI hooks (1.0.102): `local-recall hook --agent copilot session-start |
user-prompt-submitted`, from `.github/hooks/local-recall.json`.

Stdin (camelCase): `sessionId`, `timestamp` (epoch ms), `cwd`, plus `source` (`new`, `resume`)
and `initialPrompt` (sessionStart) or `prompt` (userPromptSubmitted). Out: a top-level
`additionalContext` — Copilot 1.0.102 injects it for both events (sessionStart's into the
system prompt, the prompt's as a system reminder); it ignores `hookSpecificOutput`. Copilot names
the project in $COPILOT_PROJECT_DIR. docs/agents.md.
"""

# No `from __future__ import annotations`: NamedTuple string annotations cost at import.

import json
from collections.abc import Mapping
from typing import Any

from local_recall.hooks.agent_hook import AgentHooks, run_agent_hook


def from_vscode(payload: Mapping[str, Any]) -> bool:
    """VS Code loads .github/hooks/*.json too and sends its own payload (camelCase
    `hookEventName`, which Copilot's never has); its prompt hook cannot take context and its
    session start wants another shape: stay silent there."""
    return "hookEventName" in payload


def render(event: str, context: str) -> str:
    return json.dumps({"additionalContext": context}, ensure_ascii=False) if context else ""


HOOKS = AgentHooks(
    agent="copilot",
    events={"session-start": "sessionStart", "user-prompt-submitted": "userPromptSubmitted"},
    kinds={"sessionStart": "session_start", "userPromptSubmitted": "prompt"},
    prompt_keys=("prompt",),
    source_keys=("source",),
    session_keys=("sessionId", "session_id"),
    cwd_keys=("cwd",),
    project_env="COPILOT_PROJECT_DIR",
    sources={"new": "startup", "startup": "startup", "resume": "resume"},
    render=render,
    foreign=from_vscode,
)


def run_hook(args: list[str]) -> int:
    return run_agent_hook(HOOKS, args)
