"""The prompt-hook designs measured side by side (`prompt_latency.py --candidates`): each is
init's settings with another UserPromptSubmit handler, the real search and injection behind it
(the daemon warm), in the same rounds as `none`, `true` and `local-recall` (guard + mcp_tool).
Results and why one was chosen: docs/hooks.md#what-a-prompt-costs-inside-claude-code."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from prompt_latency import MARKER_PROMPT, Config, Setup

HERE = Path(__file__).resolve().parent


def candidate_configs(setup: Setup) -> dict[str, Config]:
    from local_recall.claude_code.install.plan import (
        MCP_SERVER_NAME,
        PROMPT_HOOK_INPUT,
        PROMPT_HOOK_TOOL,
    )

    python = shlex.quote(str(Path(sys.executable).absolute()))
    command = shlex.join([*setup.launcher, "hook", "user-prompt-submit"])
    mcp_tool = {
        "type": "mcp_tool",
        "server": MCP_SERVER_NAME,
        "tool": PROMPT_HOOK_TOOL,
        "input": dict(PROMPT_HOOK_INPUT),
    }

    def with_prompt_hook(*handlers: dict[str, Any]) -> dict[str, Any]:
        hooks = dict(setup.settings.get("hooks") or {})
        hooks["UserPromptSubmit"] = [{"hooks": [{"timeout": 10, **h} for h in handlers]}]
        return {**setup.settings, "hooks": hooks}

    designs = {
        # main's handler: the hook command on every prompt (interpreter + imports + daemon)
        "command": with_prompt_hook({"type": "command", "command": command}),
        # the floor of any Python command: the interpreter without site-packages
        "py-S-pass": with_prompt_hook({"type": "command", "command": f"{python} -S -c pass"}),
        # (b) the smallest Python client: -S -I, json + socket, asks the daemon
        "fast-client": with_prompt_hook(
            {
                "type": "command",
                "command": f"{python} -S -I {shlex.quote(str(HERE / 'prompt_latency_client.py'))}",
            }
        ),
        # (a) without the command: nothing before the server connects
        "mcp-only": with_prompt_hook(mcp_tool),
        # Claude Code's own cost of what is injected: `true`'s shell, printing what our hook
        # answers the marker prompt (~1,000 tokens of memories), with no search behind it
        "cat-injection": with_prompt_hook(
            {"type": "command", "command": f"cat {shlex.quote(str(injection_file(setup)))}"}
        ),
    }
    return {name: Config(name, setup, settings) for name, settings in designs.items()}


def injection_file(setup: Setup) -> Path:
    """What the prompt hook prints for the marker prompt (the daemon warm), saved beside the
    repository for `cat-injection`."""
    payload = {
        "hook_event_name": "UserPromptSubmit",
        "prompt": MARKER_PROMPT,
        "session_id": "prompt-latency-injection",
        "cwd": str(setup.repo),
        "transcript_path": "",
    }
    done = subprocess.run(
        [*setup.launcher, "hook", "user-prompt-submit"],
        input=json.dumps(payload),
        cwd=setup.repo,
        capture_output=True,
        text=True,
        check=True,
    )
    if "additionalContext" not in done.stdout:
        raise SystemExit(f"the prompt hook injected nothing for the marker prompt: {done.stderr}")
    path = setup.repo.parent / f"{setup.repo.name}-injection.json"
    path.write_text(done.stdout)
    return path
