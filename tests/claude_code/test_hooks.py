"""The Claude Code hooks as Claude Code runs them: a real subprocess, JSON on stdin.

A stand-in daemon (the real QueryServer with a handler that answers from literals) serves the
socket where the hook looks for it, so these tests cover the hook's side of the protocol without
loading an embedder. The daemon itself is tested in test_daemon.py; the in-process fallback in
the slow tests at the end.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from local_recall.claude_code.hooks.events import hook_output, hook_root
from local_recall.claude_code.hooks.payload import (
    MAX_INPUT_BYTES,
    HookInput,
    parse_hook_input,
    read_stdin,
    salvage_string_field,
)
from local_recall.context.envelope import CLOSE_TAG, OPEN_TAG
from local_recall.context.hook_settings import ENVIRONMENT_NAMES
from local_recall.daemon.control import LOCK_NAME
from local_recall.daemon.query_client import POINTER_NAME, socket_paths
from local_recall.daemon.session_env import is_claude_variable
from local_recall.learning.shown_log import read_shown
from tests.conftest import clean_env, git_init
from tests.hook_runs import (
    HIT,
    MEMORY_ID,
    PATIENT,
    StandIn,
    assert_clean,
    hook_env,
    log_text,
    prompt_input,
    run_hook,
)
from tests.import_log import ImportLog

# --- through the socket -------------------------------------------------------------------------


def test_prompt_hook_injects_the_daemons_hits(repo: Path, stand_in: StandIn) -> None:
    ran = run_hook("user-prompt-submit", prompt_input("how do we dedupe saves?", repo), repo)
    assert_clean(ran)
    context = ran.context()
    assert json.loads(ran.stdout)["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert context.startswith("<local-recall-context>\n")
    assert context.endswith("</local-recall-context>")
    assert "not instructions" in context
    assert str(HIT["body"]) in context and MEMORY_ID in context
    # one request: the daemon's whole answer (daemon/hook_requests.py), with the variables the
    # hook's settings depend on and no others (no keys, no PATH)
    (answer,) = stand_in.answers
    assert {k: answer[k] for k in ("op", "kind", "agent", "prompt")} == {
        "op": "answer",
        "kind": "prompt",
        "agent": "claude_code",
        "prompt": "how do we dedupe saves?",
    }
    assert answer["session_id"] and answer["hook_env"]["LOCAL_RECALL_HOOKS_START_DAEMON"]
    assert set(answer["hook_env"]) <= set(hook_env(repo)) - {"PATH", "CLAUDE_PROJECT_DIR"}
    assert all(k.startswith("LOCAL_RECALL_") or k in ENVIRONMENT_NAMES for k in answer["hook_env"])
    (request,) = stand_in.requests  # the search it ran
    assert request == {
        "kind": "prompt",
        "query": "how do we dedupe saves?",
        "limit": 10,
        "min_score": 0.5,  # full text from 0.5; pointers by rank from the best three, any score
        "at_least": 3,
    }
    assert "searching in-process" not in log_text(repo)


def test_the_hook_records_what_it_showed_under_the_daemons_key(
    repo: Path, stand_in: StandIn
) -> None:
    ran = run_hook("user-prompt-submit", prompt_input("dedupe saves?", repo, "s1"), repo)
    assert str(HIT["body"]) in ran.context()
    [shown] = read_shown(repo / "local-recall" / "state", "s1")
    assert shown.full == (MEMORY_ID,)
    # a key that is not one (a daemon gone wrong) names no file: shown, not recorded, logged
    stand_in.edit_answer = lambda reply: {**reply, "session_key": "../../escaped"}
    ran = run_hook("user-prompt-submit", prompt_input("dedupe saves?", repo, "s2"), repo)
    assert_clean(ran)
    assert str(HIT["body"]) in ran.context()
    assert read_shown(repo / "local-recall" / "state", "s2") == []
    assert not list(repo.rglob("escaped*"))
    assert "session record not written" in log_text(repo)


def test_a_daemons_text_that_is_not_context_blocks_is_not_shown(
    repo: Path, stand_in: StandIn
) -> None:
    bad = [
        "plain words, no wrapper",
        "<local-recall-context>\nopened twice <local-recall-context>\n</local-recall-context>",
        "<local-recall-context>\n</local-recall-context> then more",
        "<local-recall-context>\n</local-recall-context>\n\n<local-recall-context>\n</local-recall-context>",
        "<local-recall-context>\n" + "x" * 10_000 + "\n</local-recall-context>",
    ]
    for text in bad:
        stand_in.edit_answer = lambda reply, text=text: {**reply, "text": text}
        ran = run_hook("user-prompt-submit", prompt_input("dedupe saves?", repo), repo)
        assert_clean(ran)
        assert ran.stdout == ""
    assert log_text(repo).count("not context blocks: nothing shown") == len(bad)
    # SessionStart's health warning, summaries and index are blocks one after another
    blocks = f"{OPEN_TAG}\nwarning\n{CLOSE_TAG}\n{OPEN_TAG}\nindex\n{CLOSE_TAG}"
    stand_in.edit_answer = lambda reply: {**reply, "text": blocks}
    start = {"session_id": "s", "cwd": str(repo), "source": "startup"}
    started = run_hook("session-start", json.dumps(start).encode(), repo)
    assert started.context() == blocks


def test_without_the_pointer_file_the_hook_finds_the_daemon_by_its_hashed_path(
    repo: Path, stand_in: StandIn
) -> None:
    (repo / "local-recall" / "state" / POINTER_NAME).unlink()
    ran = run_hook("user-prompt-submit", prompt_input("how do we dedupe saves?", repo), repo)
    assert str(HIT["body"]) in ran.context()


def test_a_stale_pointer_means_no_daemon(repo: Path) -> None:
    state = repo / "local-recall" / "state"
    state.mkdir(exist_ok=True)
    (state / POINTER_NAME).write_text("/tmp/local-recall-nobody/gone.sock\n")
    env = hook_env(repo, {"LOCAL_RECALL_HOOKS_SESSION_START_TOKENS": "0"})
    ran = run_hook("session-start", b'{"source": "startup"}', repo, env=env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "", "")
    assert "searching in-process" not in log_text(repo)  # session-start: no search at all
    assert "gave up" not in log_text(repo)  # it finished, not its deadline


def test_a_failed_daemon_search_means_no_context_and_no_fallback(
    repo: Path, stand_in: StandIn
) -> None:
    stand_in.reply = {"ok": False, "error": "index is being rebuilt"}
    ran = run_hook("user-prompt-submit", prompt_input("how do we dedupe saves?", repo), repo)
    assert_clean(ran)
    assert ran.stdout == ""
    log = log_text(repo)
    assert "daemon answer failed: index is being rebuilt" in log
    assert "searching in-process" not in log


def test_hits_under_the_configured_threshold_are_not_injected(
    repo: Path, stand_in: StandIn
) -> None:
    settings = {
        "LOCAL_RECALL_HOOKS_PROMPT_MIN_SCORE": "0.95",
        "LOCAL_RECALL_HOOKS_PROMPT_POINTERS": "0",
    }
    env = hook_env(repo, settings)
    ran = run_hook("user-prompt-submit", prompt_input("dedupe saves?", repo), repo, env=env)
    assert_clean(ran)
    assert ran.stdout == ""
    assert stand_in.requests[0]["min_score"] == 0.95


def test_a_plausible_hit_is_a_pointer_line(repo: Path, stand_in: StandIn) -> None:
    env = hook_env(repo, {"LOCAL_RECALL_HOOKS_PROMPT_MIN_SCORE": "0.95"})
    ran = run_hook("user-prompt-submit", prompt_input("dedupe saves?", repo), repo, env=env)
    assert_clean(ran)
    context = ran.context()
    # a global memory's pointer: short id and subject; Claude Code's command answers only
    # before the MCP server does, so the block says how to open it without the tools
    assert f"- {MEMORY_ID[:8]} Use filelock for cross-process dedup\n" in context
    assert str(HIT["body"]) not in context and "`local-recall show ID` reads one" in context
    # pointers by rank: the best three whatever their score, the rest from the full-text threshold
    assert stand_in.requests[0]["min_score"] == 0.95 and stand_in.requests[0]["at_least"] == 3


def test_one_session_is_shown_a_memory_in_full_once(repo: Path, stand_in: StandIn) -> None:
    def ask(session: str) -> str:
        ran = run_hook("user-prompt-submit", prompt_input("dedupe saves?", repo, session), repo)
        assert_clean(ran)
        return ran.context()

    first, again, other = ask("one"), ask("one"), ask("two")
    assert str(HIT["body"]) in first and str(HIT["body"]) in other
    assert str(HIT["body"]) not in again
    assert f"- {MEMORY_ID[:8]} " in again and "shown in full earlier in this session" in again
    records = list((repo / "local-recall" / "state" / "sessions").glob("*.jsonl"))
    assert len(records) == 2  # one per session: ids and prompt ids, never the prompt's text
    assert all("dedupe" not in path.read_text() for path in records)


def test_after_compaction_a_memory_is_shown_in_full_again(repo: Path, stand_in: StandIn) -> None:
    def ask() -> str:
        ran = run_hook("user-prompt-submit", prompt_input("dedupe saves?", repo, "one"), repo)
        assert_clean(ran)
        return ran.context()

    first, again = ask(), ask()
    compact = {"session_id": "one", "cwd": str(repo), "source": "compact"}
    assert_clean(run_hook("session-start", json.dumps(compact).encode(), repo))
    after, once_more = ask(), ask()
    body = str(HIT["body"])
    assert body in first and body not in again
    # compaction took the text out of the context: shown in full again, then once per span
    assert body in after and body not in once_more


def test_chit_chat_injects_nothing_and_searches_nothing(repo: Path, stand_in: StandIn) -> None:
    for prompt in ("thanks!", "continue", "yes do it", "Sounds good."):
        ran = run_hook("user-prompt-submit", prompt_input(prompt, repo), repo)
        assert_clean(ran)
        assert ran.stdout == ""
    assert len(stand_in.answers) == 4  # the daemon decides (the hook's process stays light)
    assert stand_in.requests == []  # and searches nothing
    assert "searching in-process" not in log_text(repo)  # and no fallback search


def test_config_changes_are_seen_despite_the_settings_cache(repo: Path, stand_in: StandIn) -> None:
    first = run_hook("user-prompt-submit", prompt_input("dedupe saves?", repo), repo)
    assert first.stdout
    config = repo / "local-recall" / "config.toml"
    config.write_text("[hooks]\nprompt_tokens = 0\n", encoding="utf-8")
    second = run_hook("user-prompt-submit", prompt_input("dedupe saves?", repo), repo)
    assert_clean(second)
    assert second.stdout == ""
    config.write_text("[hooks]\nprompt_tokens = 135\n", encoding="utf-8")
    third = run_hook("user-prompt-submit", prompt_input("dedupe saves?", repo), repo)
    assert_clean(third)
    assert 0 < len(third.context()) <= 540  # 135 tokens: the body no longer fits, a pointer does
    assert str(HIT["body"]) not in third.context() and MEMORY_ID[:8] in third.context()


def test_corrupt_config_falls_back_to_defaults(repo: Path, stand_in: StandIn) -> None:
    (repo / "local-recall" / "config.toml").write_text("[hooks\nthis is = = not toml", "utf-8")
    ran = run_hook("user-prompt-submit", prompt_input("how do we dedupe saves?", repo), repo)
    assert_clean(ran)
    assert str(HIT["body"]) in ran.context()
    assert "using defaults" in log_text(repo)


def test_session_start_lists_the_index(repo: Path, stand_in: StandIn) -> None:
    data = {
        "session_id": "s",
        "cwd": str(repo),
        "hook_event_name": "SessionStart",
        "source": "resume",
    }
    ran = run_hook("session-start", json.dumps(data).encode(), repo)
    assert_clean(ran)
    context = ran.context()
    assert json.loads(ran.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert f"- 2025-03-01 {MEMORY_ID} Use filelock for cross-process dedup" in context
    assert "1 of 7 listed (6 more: search them)." in context
    assert "get_memories" in context
    assert stand_in.requests[0]["kind"] == "session_start"
    assert stand_in.requests[0]["source"] == "resume"


def test_session_end_hands_the_transcript_to_the_daemon(repo: Path, stand_in: StandIn) -> None:
    data = {
        "session_id": "s",
        "transcript_path": "/t/s.jsonl",
        "cwd": str(repo),
        "hook_event_name": "SessionEnd",
        "reason": "exit",
    }
    # SessionEnd's own deadline is 1 s: on a busy machine the hand-over can take longer, and
    # this test is about what is handed over, so it waits for that
    env = hook_env(repo, {"LOCAL_RECALL_HOOK_DEADLINE_SECONDS": "60"})
    ran = run_hook("session-end", json.dumps(data).encode(), repo, env=env, timeout=90)
    assert_clean(ran)
    assert ran.stdout == ""
    [request] = stand_in.requests
    assert (request["op"], request["path"]) == ("transcript_done", "/t/s.jsonl")
    # the session's Claude Code variables, so the daemon extracts with this session's
    assert request["env"] and all(is_claude_variable(name) for name in request["env"])
    assert request["env"]["CLAUDE_CONFIG_DIR"]
    assert "gave up" not in log_text(repo)


HEAVY = {
    "lancedb",
    "pyarrow",
    "numpy",
    "mcp",
    "pydantic",
    "click",
    "yaml",
    "onnxruntime",
    "tokenizers",
    "watchdog",
    "tomllib",
    "local_recall.recall",
    "local_recall.memory.model",
}
# What the daemon's answer spares a hook's process (daemon/hook_requests.py): the tiers, the
# learned cut-offs, the outcomes' reader, and the libraries they load. (The session record's
# module, learning/shown_log.py, is loaded for its append; its reader adds no import.)
DAEMONS_PART = {
    "local_recall.context.prompt",
    "local_recall.context.hook_answers",
    "local_recall.context.notes",
    "local_recall.learning.usage_log",
    "local_recall.learning.learned",
    "local_recall.learning.outcomes",
    "local_recall.search",
    "hashlib",
    "subprocess",
    "datetime",
    "logging",
}


def test_the_warm_path_imports_nothing_heavy(repo: Path, stand_in: StandIn, tmp_path: Path) -> None:
    run_hook("user-prompt-submit", prompt_input("dedupe saves?", repo), repo)  # fills the cache
    imports = ImportLog(tmp_path / "imports")
    ran = run_hook(
        "user-prompt-submit",
        prompt_input("how do we dedupe saves?", repo),
        repo,
        env=imports.env(hook_env(repo)),
    )
    assert str(HIT["body"]) in ran.stdout
    imported = imports.take()
    assert "local_recall.claude_code.hooks.events" in imported
    assert not {m for m in imported if m in HEAVY or m.split(".")[0] in HEAVY}
    assert not {m for m in imported if m in DAEMONS_PART or m.rsplit(".", 1)[0] in DAEMONS_PART}


# --- malformed input ----------------------------------------------------------------------------

BAD_INPUTS = [
    b"",
    b"garbage",
    b'{"prompt": 5, "cwd": ["x"], "source": {}}',
    b"\xff\xfe\x00 not utf-8",
    *(
        pytest.param(raw, marks=pytest.mark.slow)  # the same paths again: in the slow run
        for raw in (
            b"[1, 2, 3]",
            b"null",
            b'{"prompt": null}',
            b'{"prompt": "\\ud800 lone surrogate question about saves"}',
            b'{"prompt": "unterminated',
            b'{"hook_event_name": "UserPromptSubmit", "prompt": "' + b"\\" * 3 + b'"}',
        )
    ),
]


@pytest.mark.parametrize("event", ["user-prompt-submit", "session-start", "session-end"])
@pytest.mark.parametrize("stdin", BAD_INPUTS, ids=range(len(BAD_INPUTS)))
def test_malformed_stdin_never_breaks_a_hook(
    repo: Path, stand_in: StandIn, event: str, stdin: bytes
) -> None:
    assert_clean(run_hook(event, stdin, repo))


def test_a_10_mb_prompt_is_drained_and_its_start_used(repo: Path, stand_in: StandIn) -> None:
    other_session = {
        **json.loads(prompt_input("how do we dedupe saves?", repo)),
        "session_id": "s0",
    }
    small = run_hook("user-prompt-submit", json.dumps(other_session).encode(), repo)
    prompt = "how do we dedupe saves? " + "x" * (10 * 1024 * 1024)
    ran = run_hook("user-prompt-submit", prompt_input(prompt, repo), repo)
    assert_clean(ran)
    assert str(HIT["body"]) in ran.context()
    (_, request) = stand_in.requests
    assert request["query"] == prompt[:2000]
    # streamed, not parsed whole: the 10 MB cost the hook's CPU about what a short prompt does
    assert ran.cpu_seconds < 3 * small.cpu_seconds, (small.cpu_seconds, ran.cpu_seconds)


def test_unknown_event_or_no_event_exits_0_silently(repo: Path) -> None:
    for args in (["hook"], ["hook", "stop"], ["hook", "user-prompt-submit", "extra"]):
        proc = subprocess.run(
            [sys.executable, "-m", "local_recall", *args],
            input=b"{}",
            capture_output=True,
            cwd=repo,
            env=hook_env(repo),
            timeout=30,
        )
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def test_extractor_runs_exit_at_once_without_reading_stdin(repo: Path) -> None:
    env = hook_env(repo, {"LOCAL_RECALL_EXTRACTOR": "1"})
    for event in ("session-start", "user-prompt-submit", "session-end"):
        proc = subprocess.Popen(
            [sys.executable, "-m", "local_recall", "hook", event],
            stdin=subprocess.PIPE,  # left open: the hook must not wait for it
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=repo,
            env=env,
        )
        assert proc.stdin and proc.stdout and proc.stderr
        try:
            proc.wait(timeout=10)
            out, err = proc.stdout.read(), proc.stderr.read()
        finally:
            if proc.poll() is None:
                proc.kill()
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                stream.close()
        assert (proc.returncode, out, err) == (0, b"", b"")


def test_a_repo_without_local_recall_is_left_alone(tmp_path: Path) -> None:
    plain = git_init(tmp_path / "plain")
    env = hook_env(plain, {"LOCAL_RECALL_HOOKS_START_DAEMON": "true"})
    for event in ("session-start", "user-prompt-submit", "session-end"):
        ran = run_hook(event, prompt_input("how do we dedupe saves?", plain), plain, env=env)
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, "", "")
    assert not (plain / "local-recall").exists()


def test_root_comes_from_stdin_cwd_when_claude_project_dir_is_absent(
    repo: Path, stand_in: StandIn, tmp_path: Path
) -> None:
    env = hook_env(repo)
    del env["CLAUDE_PROJECT_DIR"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "local_recall", "hook", "user-prompt-submit"],
        input=prompt_input("how do we dedupe saves?", repo / "local-recall"),
        capture_output=True,
        cwd=elsewhere,
        env=env,
        timeout=30,
    )
    assert proc.returncode == 0
    assert str(HIT["body"]) in proc.stdout.decode()


# --- pure parts -------------------------------------------------------------------------------


def test_parse_hook_input() -> None:
    raw = b'{"cwd": "/r", "prompt": "hi there", "source": "clear", "transcript_path": "/t.jsonl"}'
    assert parse_hook_input(raw) == HookInput(
        cwd="/r", prompt="hi there", source="clear", transcript_path="/t.jsonl"
    )
    assert parse_hook_input(b'{"prompt": 3, "cwd": null}') == HookInput()
    assert parse_hook_input(b"nonsense") == HookInput()


def test_truncated_input_is_salvaged() -> None:
    raw = b'{"session_id": "s", "cwd": "/repo", "prompt": "why \\"x\\" fails \\u00e9' + b"y" * 50
    parsed = parse_hook_input(raw, truncated=True)
    assert parsed.cwd == "/repo"
    assert parsed.prompt == 'why "x" fails é' + "y" * 50
    assert parsed.truncated


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"prompt": "abc"}', "abc"),
        ('{"prompt": "ab\\', "ab"),
        ('{"prompt": "ab\\\\', "ab\\"),
        ('{"prompt": "ab\\u00', "ab"),
        ('{"prompt": "ab\\\\u00', "ab\\u00"),
        ('{"prompt":"a\\"b", "cwd": "/x"}', 'a"b'),
        ('{"cwd": "/x"}', None),
        ('{"prompt": 5}', None),
    ],
)
def test_salvage_string_field(text: str, expected: str | None) -> None:
    assert salvage_string_field(text, "prompt") == expected


def test_read_stdin_is_bounded_but_drains_everything() -> None:
    stream = io.BytesIO(b"a" * (MAX_INPUT_BYTES + 12345))
    data, truncated = read_stdin(stream)
    assert len(data) == MAX_INPUT_BYTES and truncated
    assert stream.read() == b""
    assert read_stdin(io.BytesIO(b"small")) == (b"small", False)
    assert read_stdin(io.BytesIO(b"x" * 10), limit=10) == (b"x" * 10, False)


def test_hook_output_is_one_json_object_or_nothing() -> None:
    assert hook_output("UserPromptSubmit", "") == ""
    assert hook_output("SessionEnd", "anything") == ""
    data = json.loads(hook_output("SessionStart", "ctx é"))
    assert data == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "ctx é"}
    }


def test_hook_root_precedence(tmp_path: Path) -> None:
    a = git_init(tmp_path / "a")
    b = git_init(tmp_path / "b")
    (a / "sub").mkdir()
    assert hook_root(str(b), {"CLAUDE_PROJECT_DIR": str(a / "sub")}, tmp_path) == a.resolve()
    assert hook_root(str(b / "."), {}, tmp_path) == b.resolve()
    assert hook_root(None, {"LOCAL_RECALL_ROOT": str(b)}, a) == b.resolve()
    assert hook_root("relative/path", {}, a) == a.resolve()


# --- slow: the in-process fallback ------------------------------------------------------------


def add_memories(repo: Path, *, index: bool = True) -> None:
    from local_recall.recall import Recall
    from local_recall.settings import Settings

    recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
    recall.add(
        "Use filelock for cross-process dedup",
        "We use filelock because two sessions may save the same memory at once.",
    )
    recall.add("Release checklist", "Bump the version, tag, push the tag, publish the wheel.")
    if index:
        recall.sync_index()  # "cold" = no daemon, not "never indexed"


@pytest.mark.slow
def test_without_a_daemon_the_prompt_hook_searches_in_process(repo: Path) -> None:
    add_memories(repo)
    ask = prompt_input("how do we dedupe memory saves?", repo)
    ran = run_hook("user-prompt-submit", ask, repo, env=hook_env(repo, PATIENT), timeout=150)
    assert_clean(ran)
    assert "two sessions may save the same memory" in ran.context()
    assert "searching in-process" in log_text(repo)


@pytest.mark.slow
def test_a_daemon_from_before_the_answer_op_is_asked_to_stop(repo: Path, stand_in: StandIn) -> None:
    """One answer path whatever version runs: a daemon that does not know `answer` is sent
    SIGTERM (as `daemon stop` does) and the hook answers in its own process."""
    add_memories(repo)
    stand_in.knows_answer = False  # replies "unknown op" as an older version's daemon does
    older = hold_daemon_lock(repo)
    try:
        ask = prompt_input("how do we dedupe memory saves?", repo, "s1")
        ran = run_hook("user-prompt-submit", ask, repo, env=hook_env(repo, PATIENT), timeout=150)
        assert_clean(ran)
        assert "two sessions may save the same memory" in ran.context()  # answered here
        assert older.wait(timeout=60) == -signal.SIGTERM
    finally:
        older.kill()
        older.wait()
    assert read_shown(repo / "local-recall" / "state", "s1")[0].full  # recorded here too
    start = json.dumps({"session_id": "s", "cwd": str(repo), "source": "startup"}).encode()
    started = run_hook("session-start", start, repo, env=hook_env(repo, PATIENT), timeout=150)
    assert "Release checklist" in started.context()
    assert [request["op"] for request in stand_in.requests] == ["answer", "answer"]
    log = log_text(repo)
    assert f"predates this version's `answer` op: asked it (pid {older.pid}) to stop" in log
    assert "predates this version's `answer` op: no daemon holds the lock to stop" in log


def hold_daemon_lock(repo: Path) -> subprocess.Popen[bytes]:
    """A process holding the repository's daemon lock as a daemon does (flock, its pid)."""
    lock = repo / "local-recall" / "state" / LOCK_NAME
    lock.parent.mkdir(parents=True, exist_ok=True)
    script = (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT, 0o600)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "os.ftruncate(fd, 0); os.write(fd, f'{os.getpid()}\\n'.encode())\n"
        "print('held', flush=True)\n"
        "time.sleep(300)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
    return holder


@pytest.mark.slow
def test_without_a_daemon_session_start_lists_in_process(repo: Path) -> None:
    add_memories(repo)
    data = {"cwd": str(repo), "source": "startup"}
    stdin = json.dumps(data).encode()
    ran = run_hook("session-start", stdin, repo, env=hook_env(repo, PATIENT), timeout=150)
    assert_clean(ran)
    assert "Release checklist" in ran.context()
    assert "2 of 2 listed." in ran.context()


@pytest.mark.slow
def test_a_hanging_daemon_costs_only_the_query_timeout(repo: Path) -> None:
    add_memories(repo)
    # A deadline no load reaches: the hook can only answer by giving up on the daemon in time
    env = hook_env(
        repo,
        {"LOCAL_RECALL_HOOKS_QUERY_TIMEOUT_MS": "100", "LOCAL_RECALL_HOOK_DEADLINE_SECONDS": "120"},
    )
    path = socket_paths(repo.resolve(), env)[0]
    path.parent.mkdir(mode=0o700, exist_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(8)  # accepts connections (kernel backlog), never answers
    try:
        ran = run_hook(
            "user-prompt-submit",
            prompt_input("dedupe memory saves?", repo),
            repo,
            env=env,
            timeout=150,
        )
    finally:
        listener.close()
        os.unlink(path)
    assert_clean(ran)
    assert "two sessions may save the same memory" in ran.context()  # fallback answered
    assert "gave up" not in log_text(repo)


@pytest.mark.slow
def test_a_stuck_hook_gives_up_at_the_deadline(repo: Path) -> None:
    """Whatever hangs (here: stdin that never ends; a wedged filesystem would do the same),
    the hook leaves at its deadline with exit 0 and nothing on stdout."""
    add_memories(repo, index=False)
    proc = subprocess.Popen(
        [sys.executable, "-m", "local_recall", "hook", "user-prompt-submit"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=repo,
        env=hook_env(repo, {"LOCAL_RECALL_HOOK_DEADLINE_SECONDS": "1.5"}),
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write(prompt_input("dedupe memory saves?", repo)[:20])
        proc.stdin.flush()  # ...and never closed (communicate() would close it)
        proc.wait(timeout=20)
        assert proc.stdout is not None and proc.stderr is not None
        stdout, stderr = proc.stdout.read(), proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()  # closes the pipes
    assert (proc.returncode, stdout, stderr) == (0, b"", b"")
    [waited] = re.findall(r"hook UserPromptSubmit: gave up after ([0-9.]+) s", log_text(repo))
    assert float(waited) >= 1.5  # its deadline, from the environment, and not before it
