"""Another local user's `local-recall-mcp-<pid>` directory: in /tmp anyone can make
it first, for thousands of pids. The session's MCP server then cannot hold a marker, so it
answers no prompt — the command, which the guard lets through, answers each one, once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from local_recall.claude_code.hooks.handoff import ServedMarker
from local_recall.claude_code.hooks.mcp_tool import PromptHook
from local_recall.settings import Settings
from tests.hook_runs import StandIn, hook_env, log_text, served_as_daemon
from tests.local_users import make_dirs_as_another_user, sticky_folder

PROMPT_ID = "5d2b7c1e-0a4f-4c3e-9b8d-7e6f5a4b3c2d"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="the marker needs /proc")
def test_the_server_answers_nothing_from_another_users_marker_directory(repo: Path) -> None:
    stand_in = StandIn(repo)
    with sticky_folder() as shared:
        environ = hook_env(repo, {"XDG_RUNTIME_DIR": str(shared)})
        claude_pid = os.getpid()
        make_dirs_as_another_user(shared / f"local-recall-mcp-{claude_pid}")
        marker = ServedMarker(environ, claude_pid=claude_pid)
        hook = PromptHook(Settings(root=repo, environ=environ), marker=marker)
        with served_as_daemon(repo, stand_in.handle):
            assert hook.answer("how do we dedupe saves?", PROMPT_ID) == ""
            assert hook.answer("how do we dedupe saves?", "a-later-prompt") == ""
        hook.close()
        assert (shared / f"local-recall-mcp-{claude_pid}").is_dir()  # left to its owner
    assert stand_in.requests == []  # not even asked: the command answers these prompts
    assert log_text(repo).count("prompts left to the command") == 1
