"""The prompt hook's two handlers end to end, with the real Claude Code CLI offline (against
FakeAnthropic), in Claude Code's default environment (MCP servers connect in the background;
`claude -p` does not wait for them), on the settings `local-recall init` writes.

A marker memory must reach the model exactly once for the prompts that ask for it: on the
first prompt of a session (typed before the MCP server is connected: the command answers), on
a later one (the server answers; the guard keeps the command from starting), in a single
`claude -p`, with the daemon down, and with an MCP server slow to start. Each prompt of one
session asks for a different marker: a memory shown in full is not shown again in the same
session (docs/hooks.md#once-per-session; tests/claude_code/test_pointer_e2e.py).
docs/hooks.md#two-handlers-one-answer."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local_recall.claude_code.hooks.events import GUARD_MISSED
from local_recall.claude_code.hooks.guard import marker_dir
from local_recall.daemon.control import stop_daemon
from local_recall.repo.layout import Layout
from tests.claude_cli import claude_or_fail, offline_env, requires_claude, run_claude
from tests.conftest import clean_env, git_init
from tests.fake_anthropic import FakeAnthropic, default_responder
from tests.waiting import Ceiling

pytestmark = [pytest.mark.slow, requires_claude]

CODEWORD = "QUINCE-7731"
ASK = "How does the nightly export job retry failed uploads before it pages on-call?"
CODEWORD_2 = "MEDLAR-4410"
ASK_2 = "Which port does the staging metrics gateway listen on behind the VPN?"
CODEWORD_3 = "SLOE-2958"
ASK_3 = "Why do invoice PDFs render with the Tuscan font fallback in dark mode?"
BASE = {"LOCAL_RECALL_EXTRACTION_ENABLED": "false"}


def lr(repo: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "local_recall", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with local-recall, the marker memory among others, and an index."""
    repo = git_init(tmp_path_factory.mktemp("template") / "repo")
    env = clean_env(BASE)
    lr(repo, env, "init", "--no-claude")
    body = (
        "The nightly export job retries failed uploads with the quince backoff table (1, 4, "
        f"16 minutes) and then pages the on-call. Codeword {CODEWORD}."
    )
    lr(repo, env, "add", "-s", "Nightly export retries use the quince backoff table", "-b", body)
    lr(
        repo,
        env,
        "add",
        "-s",
        "The staging metrics gateway listens on port 9188 behind the VPN",
        "-b",
        f"Staging's metrics gateway binds port 9188, reachable only through the VPN. {CODEWORD_2}.",
    )
    lr(
        repo,
        env,
        "add",
        "-s",
        "Invoice PDFs in dark mode fall back to the Tuscan font",
        "-b",
        "Invoice PDF rendering in dark mode falls back to the Tuscan font because the brand "
        f"font lacks a dark-mode glyph table. {CODEWORD_3}.",
    )
    lr(repo, env, "add", "-s", "Release checklist", "-b", "Bump, tag, push, publish the wheel.")
    lr(repo, env, "add", "-s", "Ruff line length", "-b", "pyproject sets line-length = 100.")
    lr(repo, env, "index")
    return repo


@pytest.fixture
def project(template: Path, tmp_path: Path) -> Iterator[Path]:
    """A copy of the template in which `local-recall init` installed hooks and MCP server."""
    repo = tmp_path / "repo"
    shutil.copytree(template, repo, ignore=shutil.ignore_patterns("state", "recall.log*"))
    lr(repo, clean_env({**BASE, "CLAUDE_CONFIG_DIR": str(tmp_path / "home" / ".claude")}), "init")
    try:
        yield repo
    finally:
        result = stop_daemon(Layout(repo), wait_seconds=20)
        if not result.stopped and result.pid:
            os.kill(result.pid, 9)


def default_env(home: Path, url: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """offline_env, but in Claude Code's default MCP mode: servers connect in the background."""
    env = offline_env(home, url, extra={**BASE, **(extra or {})})
    env.pop("MCP_CONNECTION_NONBLOCKING")
    env.pop("MCP_CONNECT_TIMEOUT_MS")
    return env


def start_daemon(repo: Path) -> None:
    lr(repo, clean_env(BASE), "daemon", "start")
    status = repo / "local-recall" / "state" / "daemon.json"
    ceiling = Ceiling()
    while not ceiling.passed():
        try:
            data = json.loads(status.read_text())
            if data.get("state") == "running" and data.get("last_pass"):
                return
        except (OSError, ValueError):
            pass
        time.sleep(0.2)
    pytest.fail("the daemon did not become ready")


def log_text(repo: Path) -> str:
    path = repo / "local-recall" / "recall.log"
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def context_after(body: dict[str, Any], prompt: str) -> str:
    """What Claude Code added to the request from `prompt` on: the hooks' context for it."""
    messages = body.get("messages") or []
    last = max(i for i, m in enumerate(messages) if prompt in json.dumps(m))
    return json.dumps(messages[last:])


class Session:
    """One `claude -p --input-format stream-json` session, prompts sent one at a time."""

    def __init__(self, repo: Path, env: dict[str, str], api: FakeAnthropic) -> None:
        self.api = api
        args = ["-p", "--input-format", "stream-json", "--output-format", "stream-json"]
        self.process = subprocess.Popen(
            [claude_or_fail(), *args, "--verbose", "--debug", "hooks"],
            cwd=repo,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                self.events.put(json.loads(line))
            except ValueError:
                continue
        self.events.put(None)

    def send(self, prompt: str) -> tuple[bool, str]:
        """Whether our MCP server was connected for this prompt, and the context that reached
        the model with it."""
        assert self.process.stdin is not None
        before = len(self.api.message_requests())
        message = {"type": "user", "message": {"role": "user", "content": prompt}}
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        connected = False
        while True:
            event = self.events.get(timeout=180)
            assert event is not None, "claude ended early"
            if event.get("subtype") == "init":
                servers = event.get("mcp_servers") or []
                connected = any(
                    s.get("name") == "local-recall" and s.get("status") == "connected"
                    for s in servers
                )
            if event.get("type") == "result":
                assert event.get("is_error") is False, event
                break
        requests = self.api.message_requests()[before:]
        assert requests, "no model request for the prompt"
        return connected, context_after(requests[-1].body, prompt)

    def until_connected(self) -> None:
        """Bare go-aheads (no search) until Claude Code reports our server connected."""
        ceiling = Ceiling()
        while not ceiling.passed():
            connected, _ = self.send("thanks")
            if connected:
                return
            time.sleep(1)
        pytest.fail("the local-recall MCP server never connected")

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        finally:
            if self.process.poll() is None:
                self.process.kill()


def mcp_tool_calls(home: Path) -> int:
    """How often Claude Code's debug log shows it calling our hidden tool."""
    logs = (home / ".claude" / "debug").glob("*.txt")
    text = "".join(p.read_text(errors="replace") for p in logs)
    return text.count("mcp_tool calling local-recall/user_prompt_submit")


def run_two_prompts(repo: Path, home: Path, extra: dict[str, str] | None = None) -> None:
    """A marker question first thing (before the server is connected), another once it is:
    both reach the model with their marker memory, once each."""
    with FakeAnthropic(default_responder(text="OK")) as api:
        env = default_env(home, api.url, extra)
        session = Session(repo, env, api)
        try:
            connected, first = session.send(ASK)
            session.until_connected()
            time.sleep(1.5)  # a person's pause (and the marker is older than this prompt)
            calls_before = mcp_tool_calls(home)
            connected_later, later = session.send(ASK_2)
            marker = marker_dir(env, session.process.pid)
            assert marker is not None and (marker / "live").exists()
        finally:
            session.close()
    assert first.count(CODEWORD) == 1, first
    assert connected_later
    assert later.count(CODEWORD_2) == 1, later  # the server answered, the command did not too
    assert mcp_tool_calls(home) > calls_before
    # Had the guard let the command run, it would have said so (and lost the claim).
    assert GUARD_MISSED not in log_text(repo)
    assert not marker.exists()  # the server removed it at the end of the session
    if not connected:  # the usual case: the command answered the first prompt
        assert "local-recall-context" in first


def test_marker_on_the_first_and_a_later_prompt_of_one_session(
    project: Path, tmp_path: Path
) -> None:
    start_daemon(project)
    run_two_prompts(project, tmp_path / "home")
    assert "searching in-process" not in log_text(project)


def test_a_single_claude_p_gets_the_marker(project: Path, tmp_path: Path) -> None:
    start_daemon(project)
    with FakeAnthropic(default_responder(text="OK")) as api:
        env = default_env(tmp_path / "home", api.url)
        done = run_claude(claude_or_fail(), ["-p", ASK], cwd=project, env=env, timeout=180)
        bodies = [r.body for r in api.message_requests()]
    assert done.returncode == 0, done.stderr
    assert context_after(bodies[0], ASK).count(CODEWORD) == 1


def test_with_the_daemon_down_both_handlers_search_in_process(
    project: Path, tmp_path: Path
) -> None:
    run_two_prompts(project, tmp_path / "home", {"LOCAL_RECALL_HOOKS_START_DAEMON": "false"})
    assert not (project / "local-recall" / "state" / "daemon.json").exists()


def test_an_mcp_server_slow_to_start(project: Path, tmp_path: Path) -> None:
    """Prompts before it connects are the command's; after, the server's."""
    start_daemon(project)
    mcp_file = project / ".mcp.json"
    servers = json.loads(mcp_file.read_text())
    entry = servers["mcpServers"]["local-recall"]
    real = " ".join([entry["command"], *entry["args"]])
    servers["mcpServers"]["local-recall"] = {
        "type": "stdio",
        "command": "/bin/sh",
        "args": ["-c", f"sleep 8; exec {real}"],  # exec: still Claude Code's child
    }
    mcp_file.write_text(json.dumps(servers))
    with FakeAnthropic(default_responder(text="OK")) as api:
        session = Session(project, default_env(tmp_path / "home", api.url), api)
        try:
            early = [session.send(prompt) for prompt in (ASK, ASK_2)]
            session.until_connected()
            connected, later = session.send(ASK_3)
        finally:
            session.close()
    assert not any(up for up, _ in early)
    for (_, context), codeword in zip(early, (CODEWORD, CODEWORD_2), strict=True):
        assert context.count(codeword) == 1, context
    assert connected and later.count(CODEWORD_3) == 1, later
