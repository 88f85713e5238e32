"""The prompt marker under attack and after a crash, with the real Claude Code CLI:
another local user's `local-recall-mcp-<pid>` directory must not make both handlers answer, and
a dead server's marker whose pid was reused must not silence the command. On the fixtures and
session driver of test_prompt_hook_e2e.py."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from local_recall.claude_code.hooks.guard import marker_dir
from local_recall.claude_code.hooks.handoff import ServedMarker
from tests.claude_cli import requires_claude
from tests.claude_code.test_prompt_hook_e2e import (  # noqa: F401 - fixtures used by name
    ASK,
    CODEWORD,
    Session,
    default_env,
    log_text,
    mcp_tool_calls,
    project,
    template,
)
from tests.fake_anthropic import FakeAnthropic, default_responder
from tests.local_users import make_dirs_as_another_user, sticky_folder

pytestmark = [pytest.mark.slow, requires_claude]

# A prompt hook's answer, not SessionStart's: full text ("Memories that may bear on this
# prompt") or pointers alone ("Memory pointers (…"), each block opened by one of them.
BLOCK = re.compile(r"may bear on this prompt|Memory pointers \(")
NO_DAEMON = {"LOCAL_RECALL_HOOKS_START_DAEMON": "false"}  # both handlers search in-process


def test_another_users_marker_directory_leaves_one_answer_per_prompt(
    project: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Another local user made this session's marker directory first, as anyone can in /tmp:
    the command answers every prompt and the server, asked too, none."""
    home = tmp_path / "home"
    with sticky_folder() as shared, FakeAnthropic(default_responder(text="OK")) as api:
        env = default_env(home, api.url, {"XDG_RUNTIME_DIR": str(shared), **NO_DAEMON})
        session = Session(project, env, api)
        try:
            marker = marker_dir(env, session.process.pid)
            assert marker is not None
            make_dirs_as_another_user(marker)  # long before Claude Code asks anything
            _, first = session.send(ASK)
            session.until_connected()
            calls_before = mcp_tool_calls(home)
            connected, later = session.send(ASK)
        finally:
            session.close()
    assert first.count(CODEWORD) == 1 and len(BLOCK.findall(first)) == 1, first
    assert connected and len(BLOCK.findall(later)) == 1, later  # was 2: both handlers answered
    assert mcp_tool_calls(home) > calls_before  # the server was asked, and stayed silent
    assert "prompts left to the command" in log_text(project)


def test_a_dead_servers_marker_whose_pid_was_reused_does_not_silence_the_command(
    project: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    """The marker a SIGKILLed server left, its pid now another process's: the command still
    answers the prompts the server (not connected yet) cannot."""
    home = tmp_path / "home"
    reused = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        with sticky_folder() as shared, FakeAnthropic(default_responder(text="OK")) as api:
            env = default_env(home, api.url, {"XDG_RUNTIME_DIR": str(shared), **NO_DAEMON})
            session = Session(project, env, api)
            try:
                stale = ServedMarker(env, claude_pid=session.process.pid, pid=reused.pid)
                stale.ensure()
                connected, first = session.send(ASK)
            finally:
                session.close()
    finally:
        reused.kill()
        reused.wait()
    # was 0: `live` named /proc/<pid>, alive again, and the guard kept the command silent
    assert first.count(CODEWORD) == 1, (connected, first)
