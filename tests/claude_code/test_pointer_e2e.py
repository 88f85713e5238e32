"""Tiers and once-per-session end to end, with the real Claude Code CLI offline (against
FakeAnthropic) on the settings `local-recall init` writes (docs/hooks.md#three-tiers,
docs/hooks.md#once-per-session):

- a pointer line works as printed: the model, scripted to call `get_memories` with the short id
  it reads in the pointer, gets the memory's full text back;
- in one session a memory is shown in full once: asked again, the prompt gets one line saying it
  was shown, answered by the MCP server (which must know the session: `${session_id}`).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.claude_cli import claude_or_fail, offline_env, requires_claude, run_claude
from tests.claude_code.test_prompt_hook_e2e import (  # the same repository and session driver
    ASK,
    BASE,
    CODEWORD,
    Session,
    context_after,
    default_env,
    project,
    start_daemon,
    template,
)
from tests.fake_anthropic import (
    FakeAnthropic,
    JSONDict,
    Reply,
    text_reply,
    tool_names,
    tool_use_reply,
    visible_text,
)

pytestmark = [pytest.mark.slow, requires_claude]
__all__ = ["project", "template"]  # fixtures

GET = "mcp__local-recall__get_memories"
POINTER = re.compile(r"^- ([0-9a-f]{8}) Nightly export retries", re.MULTILINE)
ASK_AGAIN = "Remind me: what retry schedule does the nightly export use for uploads?"


def follows_pointers(body: JSONDict) -> Reply:
    """A model that reads the pointer line for the nightly export memory and asks for it."""
    text = visible_text(body)
    if '"tool_result"' in json.dumps(body.get("messages")) or GET not in tool_names(body):
        return text_reply("OK")
    found = POINTER.search(text)
    return tool_use_reply(GET, {"ids": [found.group(1)]}) if found else text_reply("OK")


def test_the_model_reads_a_pointed_at_memory_by_its_short_id(project: Path, tmp_path: Path) -> None:
    start_daemon(project)
    # Nothing is sure enough for full text here: the marker memory can only come as a pointer.
    extra = {**BASE, "LOCAL_RECALL_HOOKS_PROMPT_MIN_SCORE": "1.0"}
    with FakeAnthropic(follows_pointers) as api:
        env = offline_env(tmp_path / "home", api.url, extra=extra)
        done = run_claude(
            claude_or_fail(), ["-p", ASK, "--allowedTools", GET], cwd=project, env=env, timeout=240
        )
        bodies: list[Any] = [r.body for r in api.message_requests()]
        why = subprocess.run(
            [sys.executable, "-m", "local_recall", "why", ASK, "--json"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    first = context_after(bodies[0], ASK)
    assert POINTER.search(first.replace("\\n", "\n")), first  # a pointer line, as printed
    assert CODEWORD not in first  # not the text
    # the first prompt of `claude -p` is the command's: the block says how to read a pointer
    # should the MCP tools not be offered yet
    assert "local-recall show ID" in first
    # nothing is sure: the line came by rank, as `why` (the hook's own selection) says
    assert why.returncode == 0, why.stderr
    reasons = {c["subject"]: c["tier_reason"] for c in json.loads(why.stdout)["candidates"]}
    assert any(
        subject.startswith("Nightly export retries") and reason.startswith("a pointer: rank")
        for subject, reason in reasons.items()
    ), reasons
    later = [visible_text(body) for body in bodies[1:]]
    assert any(CODEWORD in text for text in later), "get_memories did not return the memory"


def test_a_memory_is_shown_in_full_once_per_session(project: Path, tmp_path: Path) -> None:
    start_daemon(project)
    with FakeAnthropic(lambda body: text_reply("OK")) as api:
        session = Session(project, default_env(tmp_path / "home", api.url), api)
        try:
            _, first = session.send(ASK)
            session.until_connected()
            connected, again = session.send(ASK_AGAIN)
        finally:
            session.close()
    assert first.count(CODEWORD) == 1, first
    assert connected  # the MCP server answered, knowing the session the command recorded
    assert CODEWORD not in again, again
    assert "shown in full earlier in this session" in again, again
