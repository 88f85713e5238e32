"""Gemini CLI hooks (0.61): `local-recall hook --agent gemini session-start | before-agent`.

Stdin: `session_id`, `transcript_path`, `cwd`, `hook_event_name`, `timestamp`, plus `source`
(SessionStart) or `prompt` (BeforeAgent, its prompt event). Stdout must be JSON only: plain text
is shown to the user as a "Hook system message". Out: `hookSpecificOutput.additionalContext`
(Gemini wraps it in `<hook_context>` after the prompt, SessionStart's before it), or nothing.
Gemini names the project in $GEMINI_PROJECT_DIR. docs/agents.md.
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
    agent="gemini",
    events={"session-start": "SessionStart", "before-agent": "BeforeAgent"},
    kinds={"SessionStart": "session_start", "BeforeAgent": "prompt"},
    prompt_keys=("prompt",),
    source_keys=("source",),
    session_keys=("session_id",),
    cwd_keys=("cwd",),
    project_env="GEMINI_PROJECT_DIR",
    sources={"startup": "startup", "resume": "resume", "clear": "clear"},
    render=render,
)


def run_hook(args: list[str]) -> int:
    return run_agent_hook(HOOKS, args)
