"""Codex CLI hooks (0.169): `local-recall hook --agent codex session-start | user-prompt-submit`.

Stdin: Claude Code's keys (`session_id`, `transcript_path`, `cwd`, `hook_event_name`, `source`,
`prompt`) plus `turn_id`, `model`, `permission_mode`. Out: `hookSpecificOutput` with
`hookEventName` and `additionalContext` only — Codex refuses output with any other key (the
hook fails and its context is dropped) — or nothing at all, which Codex reads as "no context"
(an empty `additionalContext` would add an empty item). docs/agents.md.
"""

# No `from __future__ import annotations`: NamedTuple string annotations cost at import.

import json

from local_recall.hooks.agent_hook import AgentHooks, run_agent_hook


def render(event: str, context: str) -> str:
    if not context:
        return ""
    output = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
    return json.dumps(output, ensure_ascii=False)


HOOKS = AgentHooks(
    agent="codex",
    events={"session-start": "SessionStart", "user-prompt-submit": "UserPromptSubmit"},
    kinds={"SessionStart": "session_start", "UserPromptSubmit": "prompt"},
    prompt_keys=("prompt",),
    source_keys=("source",),
    session_keys=("session_id",),
    cwd_keys=("cwd",),
    project_env="CODEX_PROJECT_DIR",  # not set by 0.169: the payload's cwd decides
    sources={"startup": "startup", "resume": "resume", "clear": "clear"},
    render=render,
)


def run_hook(args: list[str]) -> int:
    return run_agent_hook(HOOKS, args)
