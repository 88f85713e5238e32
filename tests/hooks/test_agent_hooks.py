"""Each agent's hook command fed that agent's own recorded payload (tests/fixtures/<agent>/) prints
that agent's output shape with the matching memory; our Claude Code hooks fed VS Code's and
Cursor's payloads print only what those accept; every hook fails open. Real subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from local_recall.codex.hooks import render as codex_render
from local_recall.copilot.hooks import render as copilot_render
from local_recall.gemini.hooks import render as gemini_render
from local_recall.recall import Recall
from local_recall.settings import Settings
from tests.conftest import clean_env

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SUBJECT = "Deploys use the blue-green switch script"
# the first prompt of every recording asks about this
BODY = (
    "We deploy with scripts/bluegreen.sh because the load balancer drains connections first; "
    "never restart pods directly."
)


@pytest.fixture
def memory_repo(repo: Path) -> Path:
    Recall.open(settings=Settings(root=repo, environ=clean_env())).add(
        subject=SUBJECT, body=BODY, scope="global"
    )
    return repo


def _env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = clean_env(
        {"LOCAL_RECALL_HOOKS_START_DAEMON": "false", "LOCAL_RECALL_EXTRACTION_ENABLED": "false"}
    )
    for name in ("COPILOT_CLI", "COPILOT_HOOK_DIR", "GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"):
        env.pop(name, None)
    env.update(extra or {})
    return env


def _payload(agent: str, name: str, cwd: Path) -> bytes:
    data = json.loads((FIXTURES / agent / f"hook-{name}.json").read_text())
    data["cwd"] = str(cwd)
    return json.dumps(data).encode()


def _hook(args: list[str], stdin: bytes, cwd: Path, env: Mapping[str, str]) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "local_recall", "hook", *args],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        env=dict(env),
        timeout=60,
    )
    assert done.stderr == b""
    return done.returncode, done.stdout.decode()


PROMPT_HOOKS = {
    "codex": ("UserPromptSubmit-1", "user-prompt-submit"),
    "gemini": ("BeforeAgent-1", "before-agent"),
    "copilot": ("userPromptSubmitted-1", "user-prompt-submitted"),
}


def _context_of(agent: str, out: str) -> str:
    data: dict[str, Any] = json.loads(out)
    if agent == "copilot":
        assert set(data) == {"additionalContext"}
        return str(data["additionalContext"])
    # Codex refuses any key its schema does not list; Gemini reads the same shape
    assert set(data) == {"hookSpecificOutput"}
    inner = data["hookSpecificOutput"]
    assert set(inner) == {"hookEventName", "additionalContext"}
    event = {"codex": "UserPromptSubmit", "gemini": "BeforeAgent"}[agent]
    assert inner["hookEventName"] == event
    return str(inner["additionalContext"])


@pytest.mark.parametrize("agent", PROMPT_HOOKS)
def test_an_agents_own_prompt_payload_gets_its_own_shape_with_the_memory(
    agent: str, memory_repo: Path, tmp_path: Path
) -> None:
    recorded, event = PROMPT_HOOKS[agent]
    elsewhere = tmp_path / "elsewhere"  # the hook finds the repository from the payload's cwd
    elsewhere.mkdir()
    code, out = _hook(
        ["--agent", agent, event], _payload(agent, recorded, memory_repo), elsewhere, _env()
    )
    assert code == 0
    context = _context_of(agent, out)
    assert SUBJECT in context and "bluegreen.sh" in context
    assert context.startswith("<local-recall-context>")


@pytest.mark.parametrize(
    ("agent", "recorded", "event"),
    [
        ("codex", "SessionStart-1", "session-start"),
        ("gemini", "SessionStart-1", "session-start"),
        ("copilot", "sessionStart-1", "session-start"),
    ],
)
def test_session_start_lists_the_memories(
    agent: str, recorded: str, event: str, memory_repo: Path
) -> None:
    payload = _payload(agent, recorded, memory_repo)
    code, out = _hook(["--agent", agent, event], payload, memory_repo, _env())
    assert code == 0
    data = json.loads(out)
    context = (
        data["additionalContext"]
        if agent == "copilot"
        else data["hookSpecificOutput"]["additionalContext"]
    )
    assert SUBJECT in context


@pytest.mark.parametrize("agent", PROMPT_HOOKS)
def test_nothing_to_add_prints_nothing(agent: str, memory_repo: Path) -> None:
    """Every agent reads empty stdout as "no context" (an empty additionalContext would add an
    empty item in Codex; plain text is shown to the user in Gemini)."""
    recorded, event = PROMPT_HOOKS[agent]
    data = json.loads(_payload(agent, recorded, memory_repo))
    data["prompt"] = "thanks!"
    code, out = _hook(["--agent", agent, event], json.dumps(data).encode(), memory_repo, _env())
    assert (code, out) == (0, "")


@pytest.mark.parametrize("agent", PROMPT_HOOKS)
@pytest.mark.parametrize(
    "stdin", [b"", b"not json", b"[1, 2]", b'{"prompt": 5}', b"\xff\xfe" + b"x" * 2_000_000]
)
def test_agent_hooks_fail_open(agent: str, stdin: bytes, memory_repo: Path) -> None:
    _, event = PROMPT_HOOKS[agent]
    code, out = _hook(["--agent", agent, event], stdin, memory_repo, _env())
    assert (code, out) == (0, "")


@pytest.mark.parametrize("agent", PROMPT_HOOKS)
def test_a_broken_local_recall_fails_open(agent: str, memory_repo: Path) -> None:
    """An index that cannot be read, a memory file that is garbage, a config that does not
    parse: the prompt goes on, nothing is printed, the problem is logged."""
    (memory_repo / "local-recall" / "config.toml").write_text("[hooks\nthis is not toml")
    (memory_repo / "local-recall" / "index").mkdir(exist_ok=True)
    (memory_repo / "local-recall" / "index" / "garbage.lance").write_text("x")
    recorded, event = PROMPT_HOOKS[agent]
    code, out = _hook(
        ["--agent", agent, event], _payload(agent, recorded, memory_repo), memory_repo, _env()
    )
    assert code == 0
    if out:  # defaults still answer from the files: then in the agent's shape
        assert SUBJECT in _context_of(agent, out)


def test_copilots_hook_file_run_by_vscode_stays_silent(memory_repo: Path) -> None:
    """VS Code loads .github/hooks/local-recall.json too, with its own payload."""
    payload = json.dumps({**VSCODE_PROMPT, "cwd": str(memory_repo)}).encode()
    args = ["--agent", "copilot", "user-prompt-submitted"]
    assert _hook(args, payload, memory_repo, _env()) == (0, "")


def test_unknown_agent_or_event_does_nothing(memory_repo: Path) -> None:
    assert _hook(["--agent", "nope", "x"], b"{}", memory_repo, _env()) == (0, "")
    assert _hook(["--agent", "codex", "nope"], b"{}", memory_repo, _env()) == (0, "")
    assert _hook(["--agent", "claude", "nope"], b"{}", memory_repo, _env()) == (0, "")


def test_renders_are_only_the_documented_keys() -> None:
    assert codex_render("UserPromptSubmit", "") == ""
    assert gemini_render("BeforeAgent", "") == ""
    assert copilot_render("userPromptSubmitted", "") == ""
    assert json.loads(codex_render("SessionStart", "x")) == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "x"}
    }
    assert json.loads(copilot_render("sessionStart", "x")) == {"additionalContext": "x"}


# --- our Claude Code hooks under VS Code, Cursor and Copilot CLI (.claude/settings.json) ---------

VSCODE_PROMPT = {
    "timestamp": "2026-02-09T10:30:00.000Z",
    "sessionId": "session-identifier",
    "hookEventName": "UserPromptSubmit",
    "transcript_path": "/tmp/transcript.json",
    "prompt": "why do we deploy with scripts/bluegreen.sh?",
}
VSCODE_START = {**VSCODE_PROMPT, "hookEventName": "SessionStart", "source": "new"}
CURSOR_PROMPT = {
    "conversation_id": "conv-123",
    "generation_id": "gen-456",
    "hook_event_name": "beforeSubmitPrompt",
    "cursor_version": "2.0.77",
    "prompt": "why do we deploy with scripts/bluegreen.sh?",
    "attachments": [],
}
CURSOR_START = {
    "conversation_id": "conv-123",
    "hook_event_name": "sessionStart",
    "cursor_version": "2.0.77",
    "is_background_agent": False,
}


def _claude(event: str, payload: Mapping[str, Any], repo: Path, **env: str) -> str:
    data = dict(payload)
    if "cwd" not in data and "workspace_roots" not in data:
        data["cwd"] = str(repo)
    if data.get("hook_event_name") in ("beforeSubmitPrompt", "sessionStart"):
        data["workspace_roots"] = [str(repo)]
        data.pop("cwd", None)
    code, out = _hook([event], json.dumps(data).encode(), repo, _env(env))
    assert code == 0
    return out


def test_vscode_prompt_gets_nothing_session_start_gets_context(memory_repo: Path) -> None:
    """VS Code's UserPromptSubmit accepts the common output only (no context)."""
    assert _claude("user-prompt-submit", VSCODE_PROMPT, memory_repo) == ""
    out = json.loads(_claude("session-start", VSCODE_START, memory_repo))
    assert set(out) == {"hookSpecificOutput"}
    assert SUBJECT in out["hookSpecificOutput"]["additionalContext"]


def test_cursor_prompt_gets_nothing_session_start_gets_its_key(memory_repo: Path) -> None:
    """Cursor's beforeSubmitPrompt takes only continue/user_message; sessionStart takes
    additional_context."""
    assert _claude("user-prompt-submit", CURSOR_PROMPT, memory_repo) == ""
    out = json.loads(_claude("session-start", CURSOR_START, memory_repo))
    assert set(out) == {"additional_context"} and SUBJECT in out["additional_context"]


def test_copilot_running_claude_hooks_gets_its_top_level_key(memory_repo: Path) -> None:
    payload = {
        "hook_event_name": "UserPromptSubmit",
        "session_id": "s",
        "timestamp": "2026-11-25T16:27:54.459Z",
        "cwd": str(memory_repo),
        "prompt": "why do we deploy with scripts/bluegreen.sh?",
    }
    out = json.loads(_claude("user-prompt-submit", payload, memory_repo, COPILOT_CLI="1"))
    assert set(out) == {"additionalContext"} and SUBJECT in out["additionalContext"]
    # once Copilot has hooks of its own (init --agent copilot), these stay silent
    hooks = memory_repo / ".github" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "local-recall.json").write_text("{}")
    assert _claude("user-prompt-submit", payload, memory_repo, COPILOT_CLI="1") == ""
    # `claude` started from a Copilot shell inherits COPILOT_CLI; its payload still says Claude
    claude = {**payload, "transcript_path": "/tmp/t.jsonl"}
    out = json.loads(_claude("user-prompt-submit", claude, memory_repo, COPILOT_CLI="1"))
    assert set(out) == {"hookSpecificOutput"}


def test_claude_code_itself_still_gets_its_shape(memory_repo: Path) -> None:
    payload = {
        "session_id": "s",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": str(memory_repo),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "why do we deploy with scripts/bluegreen.sh?",
    }
    out = json.loads(_claude("user-prompt-submit", payload, memory_repo))
    assert set(out["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
