"""The MCP server's prompt hook (the hidden tool `user_prompt_submit`): it answers exactly what
the command hook prints for the same prompt — with a daemon and without one — stays out of the
model's tool list, marks Claude Code as served while the server runs, and fails open.
In process first (a PromptHook on a real repository), then the real server over stdio."""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from local_recall.claude_code.hooks import mcp_tool as mcp_prompt_hook
from local_recall.claude_code.hooks.handoff import ServedMarker
from local_recall.claude_code.hooks.mcp_tool import PromptHook
from local_recall.settings import Settings
from tests.claude_code.test_hooks import add_memories
from tests.conftest import clean_env
from tests.hook_runs import (
    HIT,
    StandIn,
    hook_env,
    log_text,
    prompt_input,
    run_hook,
    served_as_daemon,
)
from tests.mcp_prompts import PromptTool, prompt_server
from tests.waiting import Ceiling

PROMPT_ID = "3c6a1b0e-2f4d-4e8a-8b1c-5d7e9f0a1b2c"
STAND_IN = "What the stand-in daemon answers."


def prompt_hook(
    repo: Path, runtime: Path, *, claude_pid: int = 4242, extra: dict[str, str] | None = None
) -> PromptHook:
    environ = hook_env(repo, {"XDG_RUNTIME_DIR": str(runtime), **(extra or {})})
    marker = ServedMarker(environ, claude_pid=claude_pid)
    return PromptHook(Settings(root=repo, environ=environ), marker=marker)


@pytest.fixture(autouse=True)
def repo_logging_reset() -> Iterator[None]:
    """These tests run the hook in this process: each one logs to its own repository."""
    logger = logging.getLogger("local_recall")

    def reset() -> None:
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
            handler.close()
        logger.propagate = True

    reset()
    yield
    reset()


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    directory = tmp_path / "run"
    directory.mkdir(mode=0o700)
    return directory


def command_output(repo: Path, prompt: str) -> str:
    ran = run_hook("user-prompt-submit", prompt_input(prompt, repo), repo)
    assert ran.returncode == 0 and ran.stderr == ""
    return ran.stdout


# --- in process -------------------------------------------------------------------------------


def test_answers_what_the_command_prints_with_a_daemon(repo: Path, runtime: Path) -> None:
    stand_in = StandIn(repo)
    with served_as_daemon(repo, stand_in.handle):
        expected = command_output(repo, "how do we dedupe saves?")
        got = prompt_hook(repo, runtime).answer("how do we dedupe saves?", PROMPT_ID)
    assert got == expected
    assert str(HIT["body"]) in json.loads(got)["hookSpecificOutput"]["additionalContext"]
    assert stand_in.requests[0] == stand_in.requests[1]  # the same question asked alike


def test_a_busy_daemon_is_waited_for_rather_than_searching_here(repo: Path, runtime: Path) -> None:
    """The command gives up on the daemon after 300 ms; the server waits up to 2 s: its own
    first search would load the model."""
    stand_in = StandIn(repo)

    def slow(request: dict[str, Any]) -> dict[str, Any]:
        time.sleep(0.8)
        return stand_in.handle(request)

    with served_as_daemon(repo, slow):
        got = prompt_hook(repo, runtime).answer("how do we dedupe saves?", PROMPT_ID)
    assert str(HIT["body"]) in got
    assert "searching in-process" not in log_text(repo)


def test_chit_chat_and_empty_prompts_answer_nothing(repo: Path, runtime: Path) -> None:
    stand_in = StandIn(repo)
    hook = prompt_hook(repo, runtime)
    with served_as_daemon(repo, stand_in.handle):
        assert hook.answer("thanks!", PROMPT_ID) == ""
        assert hook.answer("", "") == ""
        assert hook.answer("/compact", "") == ""
    assert stand_in.requests == []


def test_a_repository_without_local_recall_is_left_alone(tmp_path: Path, runtime: Path) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    assert prompt_hook(bare, runtime).answer("how do we dedupe saves?", PROMPT_ID) == ""
    assert not (bare / "local-recall").exists()


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="the marker needs /proc")
def test_the_first_answer_marks_and_claims_then_answers_alone(repo: Path, runtime: Path) -> None:
    stand_in = StandIn(repo)
    hook = prompt_hook(repo, runtime)
    marker = runtime / "local-recall-mcp-4242"
    with served_as_daemon(repo, stand_in.handle):
        # the command handler of the same prompt finished first and claimed it
        marker.mkdir(mode=0o700)
        (marker / PROMPT_ID).touch()
        assert hook.answer("how do we dedupe saves?", PROMPT_ID) == ""
        assert os.readlink(marker / "live") == hook.marker.target
        assert str(hook.marker.target).startswith(f"/proc/{os.getpid()}/fd/")
        # from now on the guard stops the command; the server still claims what it answers
        assert hook.answer("how do we dedupe saves?", "next-prompt") != ""
        assert sorted(p.name for p in marker.iterdir() if not p.name.startswith(".")) == sorted(
            [PROMPT_ID, "live", "next-prompt"]
        )
        assert hook.answer("how do we dedupe saves?", "next-prompt") == ""  # answered once
    hook.close()
    assert not marker.exists()


def test_a_stuck_search_gives_up_at_the_deadline(
    repo: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()

    def stuck(*_args: Any, **_kwargs: Any) -> str:
        release.wait(600)  # past the test's own timeout: only the deadline gets the answer out
        return "too late"

    monkeypatch.setattr(mcp_prompt_hook, "answer_prompt", stuck)
    hook = prompt_hook(repo, runtime, extra={"LOCAL_RECALL_HOOK_DEADLINE_SECONDS": "0.5"})
    assert hook.answer("how do we dedupe saves?", PROMPT_ID) == ""
    release.set()
    assert "no answer in time" in log_text(repo)


def test_an_error_answers_nothing_and_is_logged(
    repo: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: Any, **_kwargs: Any) -> str:
        raise RuntimeError("index exploded")

    monkeypatch.setattr(mcp_prompt_hook, "answer_prompt", broken)
    assert prompt_hook(repo, runtime).answer("how do we dedupe saves?", PROMPT_ID) == ""
    assert "MCP prompt hook failed" in log_text(repo)


@pytest.mark.slow
def test_without_a_daemon_it_answers_what_the_command_finds_and_stays_current(
    repo: Path, runtime: Path
) -> None:
    """The command's in-process search, on a service kept warm — and seeing new memories."""
    add_memories(repo)
    prompt = "how do we dedupe memory saves?"
    hook = prompt_hook(repo, runtime)
    assert hook.answer(prompt, PROMPT_ID) == command_output(repo, prompt)
    assert "two sessions may save the same memory" in hook.answer(prompt, "second")
    from local_recall.recall import Recall

    recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
    recall.add("Wheel publishing", "We publish the wheel with trusted publishing from CI.")
    recall.sync_index()
    later = "how do we publish the wheel?"
    assert "trusted publishing" in hook.answer(later, "third")
    assert hook.answer(later, "fourth") == command_output(repo, later)


# --- the real server over stdio -----------------------------------------------------------------


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="the marker needs /proc")
def test_over_stdio_the_hook_tool_is_hidden_callable_and_marks_claude(
    repo: Path, runtime: Path
) -> None:
    stand_in = StandIn(repo)
    env = hook_env(
        repo,
        {
            "XDG_RUNTIME_DIR": str(runtime),
            "LOCAL_RECALL_ROOT": str(repo),
            # the stand-in daemon answers, not the server's own warm search (tested below)
            "LOCAL_RECALL_HOOKS_MCP_ANSWERS": "false",
        },
    )
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "local_recall", "mcp"], env=env, cwd=str(repo)
    )
    # The server is this process's child, as it is Claude Code's: the marker names our pid.
    marker = runtime / f"local-recall-mcp-{os.getpid()}"
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
            listed = [tool.name for tool in (await client.list_tools()).tools]
            seen["listed"] = listed
            result = await client.call_tool(
                "user_prompt_submit", {"prompt": "how do we dedupe saves?", "prompt_id": PROMPT_ID}
            )
            assert not result.is_error
            seen["text"] = result.content[0].text  # type: ignore[union-attr]
            seen["live"] = os.readlink(marker / "live")

    with served_as_daemon(repo, stand_in.handle):
        anyio.run(main)
        expected = command_output(repo, "how do we dedupe saves?")
    assert "user_prompt_submit" not in seen["listed"] and "search_memories" in seen["listed"]
    assert seen["text"] == expected
    assert seen["live"].startswith("/proc/") and seen["live"] != f"/proc/{os.getpid()}"
    assert not marker.exists()  # the server removed it when the session ended


@pytest.mark.skipif(sys.platform != "linux", reason="per-thread niceness is Linux's")
def test_the_servers_index_warm_up_runs_below_the_prompt_hook(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from local_recall.mcp_server import lazy as mcp_server

    seen: list[int] = []

    def record(self: mcp_server.LazyRecall) -> Any:
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        raise RuntimeError("stop here")  # the warm-up logs it and ends

    monkeypatch.setattr(mcp_server.LazyRecall, "get", record)
    lazy = mcp_server.LazyRecall(Settings(root=repo, environ=clean_env()))
    lazy.start_warm_up()
    assert lazy._warm_up is not None
    lazy._warm_up.join(30)
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    # A thread may lower its priority, not raise it — unless it runs as root (CI's containers
    # do), which may set any niceness: under `nice -n 15`, root's warm-up gets 10.
    wanted = mcp_server.WARM_UP_NICENESS
    assert seen == [wanted if os.geteuid() == 0 else max(mine, wanted)]


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="the marker needs /proc")
def test_once_warm_the_server_answers_prompts_itself_and_stays_current(
    repo: Path, runtime: Path
) -> None:
    """The daemon answers while the server warms up; from then on the server's own warm search
    does (no socket request), with what the command's search finds, and it sees a memory saved
    by another process at the next prompt."""
    add_memories(repo)
    stand_in = StandIn(repo)
    stand_in.reply = {"ok": True, "hits": [{**HIT, "body": STAND_IN}]}
    prompts = ["how do we dedupe memory saves?", "what is on the release checklist?"]
    seen: dict[str, Any] = {"answers": []}
    ask = PromptTool()

    async def main() -> None:
        server = prompt_server(repo, runtime)
        async with Client(server, mode="legacy", read_timeout_seconds=120) as client:
            await client.list_tools()  # the warm-up starts after the handshake
            with served_as_daemon(repo, stand_in.handle):
                ceiling = Ceiling()
                while STAND_IN in await ask(client, prompts[0]):
                    ceiling.check("the server never answered itself")
                    await anyio.sleep(0.2)
                asked = len(stand_in.requests)
                seen["answers"] = [await ask(client, prompt) for prompt in prompts]
                seen["daemon_asked"] = len(stand_in.requests) - asked
            from local_recall.recall import Recall

            other = Recall.open(settings=Settings(root=repo, environ=clean_env()))
            other.add("Wheel publishing", "We publish the wheel with trusted publishing from CI.")
            other.sync_index()
            seen["later"] = await ask(client, "how do we publish the wheel?")

    anyio.run(main)
    assert "searching in-process" not in log_text(repo)  # the server never fell back
    assert seen["daemon_asked"] == 0
    # the same memories as the command's own search shows (its scores, from the files alone,
    # may differ in the second decimal)
    cold = [command_output(repo, prompt) for prompt in prompts]
    assert [shown_ids(a) for a in seen["answers"]] == [shown_ids(c) for c in cold]
    assert "two sessions may save the same memory" in seen["answers"][0]
    assert "trusted publishing" in seen["later"]


def shown_ids(output: str) -> list[str]:
    return re.findall(r"\bid ([0-9a-f-]{36})", output)
