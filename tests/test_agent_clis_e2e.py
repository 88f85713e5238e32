"""The real Codex, Gemini and Copilot CLIs (pinned, tests/agent_clis.py) run offline against the
local fake servers: a prompt in, an answer out, the project's prompt hook fired with the agent's
own payload and its output reaching the model, and a search answered by `local-recall mcp`
configured at project scope. These pin the ground truth docs/agents.md states for each CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agent_clis import (
    GEMINI_MODEL,
    agent_cli_or_fail,
    codex_env,
    copilot_env,
    gemini_env,
    requires_node,
    run_cli,
    trust_codex_project,
    trust_copilot_folder,
)
from tests.fake_gemini import FakeGemini, GeminiCall
from tests.fake_openai import FakeOpenAI, ModelCall, Turn, call_tool, say

pytestmark = [pytest.mark.slow, requires_node]

LOCAL_RECALL = str(Path(sys.executable).with_name("local-recall"))
SUBJECT = "Deploys use the blue-green switch script"
MARKER = "HOOK-CONTEXT-7d1f"


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([LOCAL_RECALL, "init", "--no-claude"], cwd=repo, check=True, capture_output=True)
    subprocess.run(
        [
            LOCAL_RECALL,
            "add",
            "--subject",
            SUBJECT,
            "--scope",
            "global",
            "--body",
            "We deploy with scripts/bluegreen.sh: the load balancer drains connections first.",
        ],
        cwd=repo,
        check=True,
        capture_output=True,
    )
    return repo


def _hook(out: Path, output: dict[str, Any]) -> str:
    """A hook command that saves its stdin to `out` and prints `output`."""
    script = (
        "import sys,pathlib;pathlib.Path(sys.argv[1]).write_bytes(sys.stdin.buffer.read());"
        "sys.stdout.write(sys.argv[2])"
    )
    return f"{sys.executable} -c '{script}' {out} '{json.dumps(output)}'"


def _searching(namespaced: bool) -> Any:
    """Call the search tool as soon as it is offered, then answer with what it returned. Until
    it is offered (Copilot connects MCP servers while the turn runs), wait with a shell call:
    as a model would keep working, at most three times."""

    def respond(call: ModelCall | GeminiCall) -> Turn:
        outputs = call.function_responses if isinstance(call, GeminiCall) else call.tool_outputs
        searched = any("results" in json.dumps(o) for o in outputs)
        if not searched:
            if isinstance(call, ModelCall) and namespaced:
                names = call.namespaced_tools
                if "search_memories" in names:
                    namespace = names["search_memories"]
                    return call_tool("search_memories", {"query": "deploy"}, namespace=namespace)
            for name in call.tool_names:
                if name.endswith("search_memories"):
                    return call_tool(name, {"query": "deploy"})
            if isinstance(call, ModelCall) and "bash" in call.tool_names and len(outputs) < 3:
                return call_tool("bash", {"command": "sleep 2", "description": "wait"})
        return say("answered: " + json.dumps(outputs)[:2000])

    return respond


def test_codex_offline_hook_and_mcp(tmp_path: Path) -> None:
    codex = agent_cli_or_fail("codex")
    repo = _repo(tmp_path)
    payload = tmp_path / "payload.json"
    (repo / ".codex").mkdir()
    output = {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": MARKER}
    }
    hooks = {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": _hook(payload, output)}]}]
    }
    (repo / ".codex" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    (repo / ".codex" / "config.toml").write_text(
        f'[mcp_servers.local-recall]\ncommand = "{LOCAL_RECALL}"\nargs = ["mcp"]\n'
    )
    with FakeOpenAI(_searching(namespaced=True)) as api:
        env = codex_env(tmp_path / "home", api.url)
        trust_codex_project(tmp_path / "home", repo)
        # `codex exec` starts MCP servers without waiting; `required` (a session flag here,
        # never in the project config: a broken server would then stop Codex) makes the first
        # request carry the tools. Hooks need persisted trust; the bypass flag stands for it.
        done = run_cli(
            codex,
            [
                "exec",
                "--dangerously-bypass-hook-trust",
                "-c",
                "mcp_servers.local-recall.required=true",
                "how do we deploy?",
            ],
            cwd=repo,
            env=env,
        )
        calls = api.calls()
    assert done.returncode == 0, done.stderr[-2000:]
    assert "answered:" in done.stdout and SUBJECT in done.stdout
    sent = json.loads(payload.read_text())
    assert sent["hook_event_name"] == "UserPromptSubmit" and sent["prompt"] == "how do we deploy?"
    assert MARKER in calls[0].visible_text
    assert calls[0].namespaced_tools.get("search_memories") == "mcp__local_recall"


def test_gemini_offline_hook_and_mcp(tmp_path: Path) -> None:
    gemini = agent_cli_or_fail("gemini")
    repo = _repo(tmp_path)
    payload = tmp_path / "payload.json"
    output = {"hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": MARKER}}
    settings = {
        "hooks": {
            "BeforeAgent": [{"hooks": [{"type": "command", "command": _hook(payload, output)}]}]
        },
        "mcpServers": {"local-recall": {"command": LOCAL_RECALL, "args": ["mcp"]}},
        # `gemini -p` offers only tools that need no confirmation
        "tools": {"allowed": ["mcp_local-recall_search_memories"]},
    }
    (repo / ".gemini").mkdir()
    (repo / ".gemini" / "settings.json").write_text(json.dumps(settings))
    with FakeGemini(_searching(namespaced=False)) as api:
        env = gemini_env(tmp_path / "home", api.url)
        done = run_cli(gemini, ["-m", GEMINI_MODEL, "-p", "how do we deploy?"], cwd=repo, env=env)
        calls = api.chat_calls()
    assert done.returncode == 0, done.stderr[-2000:]
    assert "answered:" in done.stdout and SUBJECT in done.stdout
    sent = json.loads(payload.read_text())
    assert sent["hook_event_name"] == "BeforeAgent" and sent["prompt"] == "how do we deploy?"
    assert f"<hook_context>{MARKER}</hook_context>" in calls[0].visible_text
    # the MCP server's instructions reach the model too
    assert "local-recall is this repository's memory" in calls[0].visible_text


def test_copilot_offline_hook_and_mcp(tmp_path: Path) -> None:
    copilot = agent_cli_or_fail("copilot")
    repo = _repo(tmp_path)
    payload = tmp_path / "payload.json"
    hooks = {
        "userPromptSubmitted": [
            {"type": "command", "bash": _hook(payload, {"additionalContext": MARKER})}
        ]
    }
    (repo / ".github" / "hooks").mkdir(parents=True)
    (repo / ".github" / "hooks" / "probe.json").write_text(
        json.dumps({"version": 1, "hooks": hooks})
    )
    server = {"type": "stdio", "command": LOCAL_RECALL, "args": ["mcp"]}
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"local-recall": server}}))
    with FakeOpenAI(_searching(namespaced=False)) as api:
        home = tmp_path / "home"
        env = copilot_env(home, api.url)
        trust_copilot_folder(home, repo)
        done = run_cli(copilot, ["-p", "how do we deploy?", "--allow-all-tools"], cwd=repo, env=env)
        calls = api.calls()
    assert done.returncode == 0, done.stderr[-2000:]
    assert SUBJECT in done.stdout, (calls[0].tool_names, done.stdout[-1500:])
    sent = json.loads(payload.read_text())
    assert sent["prompt"] == "how do we deploy?" and "sessionId" in sent
    # 1.0.102 injects a userPromptSubmitted hook's top-level additionalContext (the issue's
    # github/copilot-cli#2142 described 1.0.8)
    assert MARKER in calls[0].visible_text
    assert "local-recall-search_memories" in calls[0].tool_names
    # server instructions are left out unless --allow-all-mcp-server-instructions
    assert "local-recall is this repository's memory" not in calls[0].visible_text
