"""A pointer line works as printed in the other agents too (docs/hooks.md#three-tiers): the real
Codex and Gemini CLIs (pinned, tests/agent_clis.py) offline against the local fake servers, on
what `local-recall init --agent <agent>` wrote. The prompt hook can only point at the memory
here (no score reaches full text); the model, scripted to call the MCP tool `get_memories` with
the short id it reads in the pointer line, gets the memory's text back."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.agent_clis import (
    GEMINI_MODEL,
    agent_cli_or_fail,
    codex_env,
    gemini_env,
    requires_node,
    run_cli,
    trust_codex_project,
)
from tests.agents.test_clis_e2e import PROMPT, _init, _repo
from tests.fake_gemini import FakeGemini, GeminiCall
from tests.fake_openai import FakeOpenAI, ModelCall, Turn, call_tool, say

pytestmark = [pytest.mark.slow, requires_node]

POINTER = re.compile(r"^- ([0-9a-f]{8}) Deploys use the blue-green", re.MULTILINE)
BODY = "the load balancer drains connections first"
ONLY_POINTERS = {"LOCAL_RECALL_HOOKS_PROMPT_MIN_SCORE": "1.0"}


def _contexts(visible: str) -> str:
    """Every <local-recall-context> block hooks injected (HTML-escaped by Gemini), joined."""
    text = visible.replace("&lt;", "<").replace("&gt;", ">")
    blocks = re.findall(r"<local-recall-context>.*?</local-recall-context>", text, re.DOTALL)
    return "\n".join(blocks)


def _follows_pointers(call: ModelCall | GeminiCall) -> Turn:
    outputs = call.function_responses if isinstance(call, GeminiCall) else call.tool_outputs
    found = POINTER.search(_contexts(call.visible_text))
    if outputs or found is None:
        return say("answered: " + json.dumps(outputs)[:2000])
    if isinstance(call, ModelCall) and "get_memories" in call.namespaced_tools:
        namespace = call.namespaced_tools["get_memories"]
        return call_tool("get_memories", {"ids": [found.group(1)]}, namespace=namespace)
    for name in call.tool_names:
        if name.endswith("get_memories"):
            return call_tool(name, {"ids": [found.group(1)]})
    return say("no get_memories tool offered")


def _pointed_then_read(calls: list[Any], stdout: str) -> None:
    first = _contexts(calls[0].visible_text)
    assert POINTER.search(first), first[-1500:]  # a pointer line, as printed
    assert BODY not in first  # not the text
    assert "answered:" in stdout and BODY in stdout  # get_memories returned it


def test_codex_reads_a_pointed_at_memory(tmp_path: Path) -> None:
    codex = agent_cli_or_fail("codex")
    repo = _repo(tmp_path)
    _init(repo, "codex")
    home = tmp_path / "home"
    args = [
        "exec",
        "--dangerously-bypass-hook-trust",
        "-c",
        "mcp_servers.local-recall.required=true",
    ]
    with FakeOpenAI(_follows_pointers) as api:
        env = codex_env(home, api.url, extra=ONLY_POINTERS)
        trust_codex_project(home, repo)
        done = run_cli(codex, [*args, PROMPT], cwd=repo, env=env)
        calls = api.calls()
    assert done.returncode == 0, done.stderr[-2000:]
    _pointed_then_read(calls, done.stdout)


def test_gemini_reads_a_pointed_at_memory(tmp_path: Path) -> None:
    gemini = agent_cli_or_fail("gemini")
    repo = _repo(tmp_path)
    _init(repo, "gemini")
    with FakeGemini(_follows_pointers) as api:
        env = gemini_env(tmp_path / "home", api.url, extra=ONLY_POINTERS)
        done = run_cli(gemini, ["-m", GEMINI_MODEL, "-p", PROMPT], cwd=repo, env=env)
        calls = api.chat_calls()
    assert done.returncode == 0, done.stderr[-2000:]
    _pointed_then_read(calls, done.stdout)
