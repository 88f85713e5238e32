"""The real Codex, Gemini and Copilot CLIs (pinned, tests/agent_clis.py) run offline against the
local fake servers: a prompt in, an answer out, the project's prompt hook fired with the agent's
own payload and its output reaching the model, and a search answered by `local-recall mcp`
configured at project scope — all as `local-recall init --agent <agent>` wrote them; then the same
with local-recall broken: the agent answers as if there were no memory. These pin what
docs/agents.md states for each CLI."""

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
PROMPT = "why do we deploy with the blue-green switch script?"


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


def _searching(namespaced: bool) -> Any:
    """Call the search tool as soon as it is offered, then answer with what it returned. Until
    it is offered (Copilot connects MCP servers while the turn runs), wait with a shell call, as
    a model would keep working: at most three times."""

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


def _init(repo: Path, agent: str) -> None:
    """What a user runs: `local-recall init --agent <agent>` writes the agent's project config."""
    done = subprocess.run(
        [LOCAL_RECALL, "init", "--agent", agent], cwd=repo, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def _break(repo: Path) -> None:
    """local-recall broken: a config that does not parse, memory files that are garbage, an
    index that is not one. The agent must go on as if there were no memory."""
    (repo / "local-recall" / "config.toml").write_text("[hooks\nnot toml")
    for memory in (repo / "local-recall" / "episodic-memory").glob("*.md"):
        memory.write_text("---\n{{{{ not yaml\n")
    (repo / "local-recall" / "index").mkdir(exist_ok=True)
    (repo / "local-recall" / "index" / "broken.lance").write_text("x")


def _context_of(visible: str) -> str:
    """The <local-recall-context> block a hook injected (HTML-escaped by Gemini)."""
    text = visible.replace("&lt;", "<").replace("&gt;", ">")
    start = text.find("<local-recall-context>")
    return text[start : text.find("</local-recall-context>", start)] if start >= 0 else ""


def test_codex_with_what_init_wrote(tmp_path: Path) -> None:
    codex = agent_cli_or_fail("codex")
    repo = _repo(tmp_path)
    _init(repo, "codex")
    home = tmp_path / "home"
    # Hooks need persisted trust (the TUI's /hooks): the bypass flag stands for it. `codex exec`
    # starts MCP servers without waiting; `required` (a session flag here, never in the project
    # config: a broken server would then stop Codex) makes the first request carry the tools.
    args = [
        "exec",
        "--dangerously-bypass-hook-trust",
        "-c",
        "mcp_servers.local-recall.required=true",
    ]
    with FakeOpenAI(_searching(namespaced=True)) as api:
        env = codex_env(home, api.url)
        trust_codex_project(home, repo)
        done = run_cli(codex, [*args, PROMPT], cwd=repo, env=env)
        calls = api.calls()
    assert done.returncode == 0, done.stderr[-2000:]
    assert "answered:" in done.stdout and SUBJECT in done.stdout  # the MCP search
    assert SUBJECT in _context_of(calls[0].visible_text)  # SessionStart/prompt hook context
    assert calls[0].namespaced_tools.get("search_memories") == "mcp__local_recall"
    assert "local-recall is this repository's memory" in json.dumps(calls[0].body["tools"])

    _break(repo)
    with FakeOpenAI(lambda call: say("still here")) as api:
        done = run_cli(
            codex,
            ["exec", "--dangerously-bypass-hook-trust", PROMPT],
            cwd=repo,
            env=codex_env(home, api.url),
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert "still here" in done.stdout
        assert "hook: UserPromptSubmit Failed" not in done.stderr


def test_gemini_with_what_init_wrote(tmp_path: Path) -> None:
    gemini = agent_cli_or_fail("gemini")
    repo = _repo(tmp_path)
    _init(repo, "gemini")
    home = tmp_path / "home"
    with FakeGemini(_searching(namespaced=False)) as api:
        done = run_cli(
            gemini, ["-m", GEMINI_MODEL, "-p", PROMPT], cwd=repo, env=gemini_env(home, api.url)
        )
        calls = api.chat_calls()
    assert done.returncode == 0, done.stderr[-2000:]
    assert "answered:" in done.stdout and SUBJECT in done.stdout  # the MCP search
    assert SUBJECT in _context_of(calls[0].visible_text)  # hook context in <hook_context>
    assert "local-recall is this repository's memory" in calls[0].visible_text  # instructions
    # the read-only tools without the deprecated tools.allowed (its warning on every run)
    assert "deprecated" not in done.stderr, done.stderr
    assert "project-level hooks have been detected" in done.stderr  # once: then trusted

    _break(repo)
    with FakeGemini(lambda call: say("still here")) as api:
        done = run_cli(
            gemini, ["-m", GEMINI_MODEL, "-p", PROMPT], cwd=repo, env=gemini_env(home, api.url)
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert "still here" in done.stdout
        assert "Hook system message" not in done.stdout + done.stderr
        assert "project-level hooks" not in done.stderr and "deprecated" not in done.stderr


def test_gemini_save_memory_still_asks(tmp_path: Path) -> None:
    """The server is trusted (its read-only tools run in `gemini -p`), the writing tools are in
    tools.confirmationRequired: `-p` cannot ask, so a save is refused and nothing is written."""
    gemini = agent_cli_or_fail("gemini")
    repo = _repo(tmp_path)
    _init(repo, "gemini")
    folder = repo / "local-recall" / "episodic-memory"
    before = sorted(folder.glob("*.md"))

    def respond(call: GeminiCall) -> Turn:
        if not call.function_responses:
            saving = {"subject": "Saved without asking", "content": "Nobody confirmed this."}
            return call_tool("mcp_local-recall_save_memory", saving)
        return say("result: " + json.dumps(call.function_responses)[:1000])

    with FakeGemini(respond) as api:
        env = gemini_env(tmp_path / "home", api.url)
        done = run_cli(gemini, ["-m", GEMINI_MODEL, "-p", PROMPT], cwd=repo, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "requires user confirmation" in done.stdout, done.stdout[-1000:]
    assert sorted(folder.glob("*.md")) == before


def test_gemini_prompt_context_reaches_the_model(tmp_path: Path) -> None:
    """Gemini 0.61 hands BeforeAgent a `prompt` that starts with the SessionStart context it
    injected (our block, HTML-escaped, in <hook_context>) and ends with the user's words: the
    prompt hook must search the words, and its memories follow them in the request."""
    gemini = agent_cli_or_fail("gemini")
    repo = _repo(tmp_path)
    _init(repo, "gemini")
    with FakeGemini(lambda call: say("ok")) as api:
        env = gemini_env(tmp_path / "home", api.url)
        done = run_cli(gemini, ["-m", GEMINI_MODEL, "-p", PROMPT], cwd=repo, env=env)
        calls = api.chat_calls()
    assert done.returncode == 0, done.stderr[-2000:]
    asked = calls[0].last_user_text()
    before_prompt, after_prompt = asked[: asked.rindex(PROMPT)], asked[asked.rindex(PROMPT) :]
    assert SUBJECT in _context_of(before_prompt)  # SessionStart's, in what BeforeAgent was given
    assert SUBJECT in _context_of(after_prompt), asked[-2000:]  # the prompt hook's answer


def test_copilot_with_what_init_wrote(tmp_path: Path) -> None:
    copilot = agent_cli_or_fail("copilot")
    repo = _repo(tmp_path)
    _init(repo, "copilot")
    home = tmp_path / "home"
    trust_copilot_folder(home, repo)
    # Copilot 1.0.102's MCP client and our server (mcp SDK 2.3, protocol 2026-07-28) can fail
    # their handshake ("-32022 ... the initialize handshake is not accepted", in Copilot's log);
    # Copilot then remembers the protocol and the next session connects (docs/agents.md). Only
    # that failure earns another session, at most two more; anything else fails the test.
    for _ in range(3):
        with FakeOpenAI(_searching(namespaced=False)) as api:
            env = copilot_env(home, api.url)
            done = run_cli(copilot, ["-p", PROMPT, "--allow-all-tools"], cwd=repo, env=env)
            calls = api.calls()
        if any("local-recall-search_memories" in call.tool_names for call in calls):
            break
        logs = "".join(p.read_text() for p in (home / ".copilot" / "logs").glob("*.log"))
        assert "-32022" in logs, "no local-recall MCP tools, and not the known handshake race"
    assert done.returncode == 0, done.stderr[-2000:]
    assert SUBJECT in done.stdout, (calls[0].tool_names, done.stdout[-1500:])  # MCP search
    assert SUBJECT in _context_of(calls[0].visible_text)  # hook context (1.0.102 injects it)
    assert "local-recall-search_memories" in calls[0].tool_names
    # server instructions are left out without --allow-all-mcp-server-instructions: the
    # instructions file init wrote is what tells the model
    assert "local-recall is this repository's memory" not in calls[0].visible_text
    assert "Repository memory (local-recall)" in calls[0].visible_text

    _break(repo)
    with FakeOpenAI(lambda call: say("still here")) as api:
        done = run_cli(copilot, ["-p", PROMPT], cwd=repo, env=copilot_env(home, api.url))
        assert done.returncode == 0, done.stderr[-2000:]
        assert "still here" in done.stdout


def test_copilot_loads_claude_codes_settings_in_a_repository_wired_for_both(
    tmp_path: Path,
) -> None:
    """Copilot CLI loads .claude/settings.json too and drops the whole file over a
    handler type it does not know (`mcp_tool`: "Invalid hook type"), so a team's other Claude
    Code hooks stopped running in Copilot. Wired for both, the file loads: no warning, the
    team's hook runs, and our own memories still reach the model."""
    copilot = agent_cli_or_fail("copilot")
    repo = _repo(tmp_path)
    ran = tmp_path / "team-hook-ran"
    team_hook = {"type": "command", "command": f"touch {ran}", "timeout": 5}
    settings = {"hooks": {"UserPromptSubmit": [{"hooks": [team_hook]}]}}
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps(settings))
    _init(repo, "claude")
    _init(repo, "copilot")
    home = tmp_path / "home"
    trust_copilot_folder(home, repo)
    with FakeOpenAI(lambda call: say("ok")) as api:
        done = run_cli(copilot, ["-p", PROMPT], cwd=repo, env=copilot_env(home, api.url))
        calls = api.calls()
    assert done.returncode == 0, done.stderr[-2000:]
    assert "could not be loaded" not in done.stderr, done.stderr[-2000:]
    assert ran.exists()  # the team's own hook, from .claude/settings.json
    assert SUBJECT in _context_of(calls[0].visible_text)


EXTRACTED = {
    "memories": [
        {
            "subject": "Never restart pods directly: deploy through bluegreen.sh",
            "body": "The load balancer must drain connections first, so deploys go through "
            "scripts/bluegreen.sh.",
            "keywords": ["deploy", "load balancer"],
            "applies_to": "global",
        }
    ]
}


def test_a_codex_session_becomes_memories_through_codex_exec(tmp_path: Path) -> None:
    """Capture end to end with no Claude Code anywhere: a Codex session in a repository opted
    in with `init --agent codex`, then `local-recall sync` extracting with `codex exec`."""
    codex = agent_cli_or_fail("codex")
    repo = _repo(tmp_path)
    _init(repo, "codex")
    home = tmp_path / "home"
    sent: list[str] = []

    def respond(call: ModelCall) -> Turn:
        if isinstance(call.body.get("text"), dict) and "format" in call.body["text"]:
            sent.append(call.visible_text)  # the extraction request (structured output)
            return say(json.dumps(EXTRACTED))
        return say("We deploy through scripts/bluegreen.sh so the load balancer can drain.")

    with FakeOpenAI(respond) as api:
        env = codex_env(home, api.url)
        trust_codex_project(home, repo)
        prompt = "Remember: never restart pods directly <private>badge 4471</private>"
        done = run_cli(codex, ["exec", prompt], cwd=repo, env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        sync = subprocess.run(
            [LOCAL_RECALL, "sync", "--json"],
            cwd=repo,
            env={
                **env,
                "LOCAL_RECALL_EXTRACTION_EXTRACTOR": "codex",
                "LOCAL_RECALL_EXTRACTION_CLI_PATH": codex,
            },
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert sync.returncode == 0, sync.stderr[-2000:]
    report = json.loads(sync.stdout)
    assert report["memories_created"] == 1, report
    assert "never restart pods directly" in sent[0] and "4471" not in sent[0]
    files = [p.read_text() for p in (repo / "local-recall" / "episodic-memory").glob("*.md")]
    memory = next(text for text in files if "Never restart pods directly" in text)
    assert "source: codex:" in memory  # provenance names the agent
