"""The daemon: pure scheduling decisions with literals, the lock in-process, and the real daemon
process (start/stop/status, crash recovery, watchers, the hooks talking to it) in slow tests."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from local_recall.capture.transcripts.project_dirs import encode_project_dir
from local_recall.daemon.control import DaemonLock, lock_holder, read_status
from local_recall.daemon.query_client import ask, socket_paths
from local_recall.daemon.schedule import (
    PERIODIC_REASON,
    Decision,
    Pending,
    Timers,
    after_pass,
    decide,
    is_memory_file_event,
    is_transcript_event,
    repo_transcript_dirs,
)
from local_recall.repo.layout import Layout
from tests.capture.test_extraction import processes_with
from tests.capture.test_pipeline import exchange_entries, model
from tests.claude_cli import claude_or_fail, offline_env, requires_claude
from tests.conftest import clean_env
from tests.daemon_runs import daemon_env, lr, running_daemon, status_json, stop_and_reap, wait_for
from tests.fake_anthropic import FakeAnthropic

T = Timers(
    debounce_seconds=2.0,
    full_pass_seconds=300.0,
    idle_exit_seconds=0.0,
    memory_debounce_seconds=0.5,
)


def pending(**changes: Any) -> Pending:
    values: dict[str, Any] = {
        "memory_changed_at": None,
        "transcript_changed_at": None,
        "transcript_done": False,
        "last_pass_at": 1000.0,
        "last_activity_at": 1000.0,
    }
    values.update(changes)
    return Pending(**values)


# --- decisions ----------------------------------------------------------------------------------


def test_nothing_to_do_waits_until_the_next_full_pass() -> None:
    assert decide(1100.0, pending(), T) == Decision("wait", wait_seconds=200.0)


def test_full_pass_when_its_period_is_over() -> None:
    assert decide(1300.0, pending(), T).action == "pass"


def test_memory_edit_is_debounced_then_synced() -> None:
    waiting = decide(1010.2, pending(memory_changed_at=1010.0), T)
    assert (waiting.action, round(waiting.wait_seconds, 6)) == ("wait", 0.3)
    assert decide(1010.5, pending(memory_changed_at=1010.0), T).action == "sync"


def test_transcript_change_waits_for_quiet_then_passes() -> None:
    assert decide(1011.0, pending(transcript_changed_at=1010.0), T).wait_seconds == pytest.approx(1)
    assert decide(1012.0, pending(transcript_changed_at=1010.0), T) == Decision(
        "pass", reason="a transcript changed"
    )


def test_session_end_passes_at_once() -> None:
    assert decide(1000.1, pending(transcript_done=True), T) == Decision(
        "pass", reason="a session ended"
    )


def test_a_pass_reindexes_only_when_periodic_and_publishes_only_what_it_wrote() -> None:
    # A prompt changed the transcript and nothing was extracted: the index is as it was, and
    # re-reading every memory file would compete with the next prompt's query.
    assert after_pass("a transcript changed", wrote=False) == "nothing"
    assert after_pass("a session ended", wrote=True) == "publish"  # the pipeline re-indexed
    assert after_pass(PERIODIC_REASON, wrote=False) == "sync"


def test_memory_sync_goes_before_a_due_pass() -> None:
    state = pending(memory_changed_at=1000.0, transcript_done=True)
    assert decide(1001.0, state, T).action == "sync"


def test_idle_exit_only_when_enabled_and_nothing_is_pending() -> None:
    idle = Timers(2.0, 300.0, idle_exit_seconds=60.0)
    assert decide(1061.0, pending(), idle) == Decision("exit", reason="idle")
    assert decide(1061.0, pending(), T).action == "wait"
    assert decide(1030.0, pending(), idle) == Decision("wait", wait_seconds=30.0)
    busy = pending(transcript_changed_at=1060.5)
    assert decide(1061.0, busy, idle).action == "wait"


def test_repo_transcript_dirs() -> None:
    root = "/home/u/my.repo"
    encoded = encode_project_dir(root)
    names = [encoded, encoded + "-src", "-home-u-other", encoded.replace("repo", "rep")]
    assert repo_transcript_dirs(names, [root]) == sorted([encoded, encoded + "-src"])
    long_root = "/" + "d" * 250
    long_name = encode_project_dir(long_root)
    assert repo_transcript_dirs([long_name, "x"], [long_root]) == [long_name]


def test_event_filters() -> None:
    assert is_memory_file_event("/r/local-recall/episodic-memory/abc.md")
    assert not is_memory_file_event("/r/local-recall/episodic-memory/.abc.md.x1.tmp")
    assert not is_memory_file_event("/r/local-recall/episodic-memory/notes.txt")
    assert is_transcript_event("/c/projects/-r/s.jsonl")
    assert not is_transcript_event("/c/projects/-r/s/subagents/agent-1.meta.json")


# --- the lock (in-process, real flock) ------------------------------------------------------------


def test_lock_is_exclusive_and_names_its_holder(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    first = DaemonLock(layout)
    assert lock_holder(layout) is None
    assert first.acquire()
    try:
        assert lock_holder(layout) == os.getpid()
        assert not DaemonLock(layout).acquire()
    finally:
        first.release()
    assert lock_holder(layout) is None


def test_a_dead_pid_in_an_unlocked_file_is_no_daemon(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    layout.state_dir.mkdir(parents=True)
    (layout.state_dir / "daemon.lock").write_text("999999\n")
    assert lock_holder(layout) is None
    lock = DaemonLock(layout)
    assert lock.acquire()
    lock.release()


def test_status_of_a_repo_that_never_ran_a_daemon(tmp_path: Path) -> None:
    status = read_status(Layout(tmp_path))
    assert (status.running, status.pid, status.status) == (False, None, None)


# --- the real daemon (slow: it loads the embedder) --------------------------------------------


def search(repo: Path, query: str, env: dict[str, str]) -> list[dict[str, Any]]:
    """A warm `local-recall search` (op `cli_search`) of the running daemon."""
    reply = ask(socket_paths(repo.resolve(), env), {"op": "cli_search", "query": query}, 5.0)
    assert reply is not None and reply["ok"], reply
    return list(reply["hits"])


@pytest.fixture
def running(repo: Path) -> Iterator[dict[str, str]]:
    """A daemon started with `local-recall daemon start`; stopped (or killed) afterwards."""
    env = daemon_env(repo, LOCAL_RECALL_DAEMON_DEBOUNCE_SECONDS="0.2")
    projects = repo.parent / "claude-config" / "projects" / encode_project_dir(str(repo.resolve()))
    projects.mkdir(parents=True)
    with running_daemon(repo, env) as running_env:
        yield running_env


@pytest.mark.slow
def test_start_status_second_start_and_stop(repo: Path) -> None:
    env = daemon_env(repo)
    try:
        first = lr(repo, "daemon", "start", env=env)
        assert first.returncode == 0, first.stderr
        assert first.stdout.startswith("started (pid ")
        pid = int(first.stdout.split("pid ")[1].rstrip(")\n"))
        second = lr(repo, "daemon", "start", env=env)
        assert (second.returncode, second.stdout) == (0, f"already running (pid {pid})\n")
        foreground = lr(repo, "daemon", "run", env=env, timeout=30)
        assert (foreground.returncode, foreground.stdout) == (0, f"already running (pid {pid})\n")
        status = lr(repo, "daemon", "status", env=env)
        assert status.returncode == 0 and f"running (pid {pid})" in status.stdout
        as_json = json.loads(lr(repo, "daemon", "status", "--json", env=env).stdout)
        assert as_json["running"] and as_json["pid"] == pid
        assert as_json["status"]["root"] == str(repo.resolve())
        reply = ask(socket_paths(repo.resolve(), env), {"op": "ping"}, 5.0)
        assert reply is not None and reply["pid"] == pid and reply["root"] == str(repo.resolve())
        socket_file = Path(as_json["status"]["socket"])
        assert socket_file.exists() and len(str(socket_file).encode()) < 108
        stopped = lr(repo, "daemon", "stop", env=env)
        assert (stopped.returncode, stopped.stdout) == (0, f"stopped (pid {pid})\n")
        after = lr(repo, "daemon", "status", env=env)
        # not running, and how extraction fared (capture/health.py: none failed here)
        assert (after.returncode, after.stdout) == (3, "not running\n  extraction: ok\n")
        assert status_json(repo)["state"] == "stopped"
        assert not socket_file.exists()
        assert lr(repo, "daemon", "stop", env=env).stdout == "not running\n"
    finally:
        stop_and_reap(repo)


@pytest.mark.slow
def test_killed_daemon_leaves_no_stale_lock(repo: Path) -> None:
    env = daemon_env(repo)
    try:
        first = lr(repo, "daemon", "start", env=env)
        pid = int(first.stdout.split("pid ")[1].rstrip(")\n"))
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: lock_holder(Layout(repo)) is None, 60)
        assert lr(repo, "daemon", "status", env=env).returncode == 3
        again = lr(repo, "daemon", "start", env=env)
        assert again.returncode == 0 and again.stdout.startswith("started"), again.stderr
        new_pid = int(again.stdout.split("pid ")[1].rstrip(")\n"))
        assert new_pid != pid
        assert ask(socket_paths(repo.resolve(), env), {"op": "ping"}, 5.0) is not None
    finally:
        stop_and_reap(repo)


@pytest.mark.slow
def test_sigterm_exits_cleanly(repo: Path) -> None:
    env = daemon_env(repo)
    proc = subprocess.Popen(
        [sys.executable, "-m", "local_recall", "--root", str(repo), "daemon", "run"],
        env=env,
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(lambda: status_json(repo).get("state") == "running", 60)
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert b"Traceback" not in err
        data = status_json(repo)
        assert data["state"] == "stopped" and data["stopped"]
        assert not Path(data["socket"]).exists()
        assert lock_holder(Layout(repo)) is None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


@pytest.mark.slow
def test_hand_edits_are_reindexed_without_restart(repo: Path, running: dict[str, str]) -> None:
    from local_recall.recall import Recall
    from local_recall.settings import Settings

    recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
    memory = recall.add("Zebra crossing flake", "The zebracrossing test flakes on slow CI.")
    wait_for(lambda: any(h["id"] == memory.id for h in search(repo, "zebracrossing", running)))
    assert memory.path is not None
    text = memory.path.read_text(encoding="utf-8")
    memory.path.write_text(text.replace("zebracrossing test", "quokkafied test"), "utf-8")
    wait_for(lambda: any(h["id"] == memory.id for h in search(repo, "quokkafied", running)))
    memory.path.unlink()
    wait_for(lambda: not any(h["id"] == memory.id for h in search(repo, "quokkafied", running)))
    assert status_json(repo)["counts"]["syncs"] >= 3


@pytest.mark.slow
def test_first_memory_in_a_folder_created_after_start_is_indexed(repo: Path) -> None:
    """The memory folder does not exist when the daemon starts (a bare `local-recall/`); the
    first memory creates it. That must not wait for the periodic full pass (5 min)."""
    from local_recall.recall import Recall
    from local_recall.settings import Settings

    (repo / "local-recall" / "episodic-memory").rmdir()
    env = daemon_env(repo, LOCAL_RECALL_DAEMON_DEBOUNCE_SECONDS="0.2")
    try:
        assert lr(repo, "daemon", "start", env=env).returncode == 0
        wait_for(lambda: status_json(repo).get("state") == "running", 60)
        recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
        memory = recall.add("Okapi cache", "The okapicache folder is rebuilt on every boot.")
        # one watcher tick (5 s) + debounce + sync; far below the 300 s full-pass period
        wait_for(lambda: any(h["id"] == memory.id for h in search(repo, "okapicache", env)), 120)
    finally:
        stop_and_reap(repo)


@pytest.mark.slow
def test_prompt_hook_is_answered_by_the_daemon(repo: Path, running: dict[str, str]) -> None:
    from local_recall.recall import Recall
    from local_recall.settings import Settings

    Recall.open(settings=Settings(root=repo, environ=clean_env())).add(
        "Use filelock for cross-process dedup",
        "We use filelock because two sessions may save the same memory at once.",
    )
    wait_for(lambda: search(repo, "filelock dedup", running))
    env = {**running, "CLAUDE_PROJECT_DIR": str(repo)}
    stdin = json.dumps(
        {"cwd": str(repo), "prompt": "how do we dedupe memory saves across processes?"}
    ).encode()
    proc = subprocess.run(
        [sys.executable, "-m", "local_recall", "hook", "user-prompt-submit"],
        input=stdin,
        capture_output=True,
        env=env,
        cwd=repo,
        timeout=30,
    )
    assert proc.returncode == 0 and proc.stderr == b""
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "two sessions may save the same memory" in context
    log = (repo / "local-recall" / "recall.log").read_text()
    assert "searching in-process" not in log
    reply = ask(socket_paths(repo.resolve(), running), {"op": "ping"}, 5.0)
    assert reply is not None and reply["counts"]["queries"] >= 2


@pytest.mark.slow
def test_session_end_and_transcript_changes_trigger_a_pass(
    repo: Path, running: dict[str, str]
) -> None:
    passes = status_json(repo)["counts"]["passes"]
    # A deadline no load reaches (SessionEnd's own is 1 s): this test waits for the pass
    env = {**running, "CLAUDE_PROJECT_DIR": str(repo), "LOCAL_RECALL_HOOK_DEADLINE_SECONDS": "60"}
    stdin = json.dumps(
        {"cwd": str(repo), "transcript_path": "/x/s.jsonl", "reason": "exit"}
    ).encode()
    proc = subprocess.run(
        [sys.executable, "-m", "local_recall", "hook", "session-end"],
        input=stdin,
        capture_output=True,
        env=env,
        cwd=repo,
        timeout=90,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert "gave up" not in (repo / "local-recall" / "recall.log").read_text("utf-8")
    wait_for(
        lambda: (
            (status_json(repo).get("last_pass") or {}).get("report", {}).get("reason")
            == "a session ended"
        ),
        120,  # a generous ceiling: a busy machine
    )
    passes = status_json(repo)["counts"]["passes"]
    folder = repo.parent / "claude-config" / "projects" / encode_project_dir(str(repo.resolve()))
    (folder / "0000-session.jsonl").write_text('{"type": "user"}\n')
    wait_for(
        lambda: (
            status_json(repo)["counts"]["passes"] > passes
            and status_json(repo)["last_pass"]["report"]["reason"] == "a transcript changed"
        ),
        120,  # a generous ceiling: a busy machine
    )


@pytest.mark.slow
def test_session_start_hook_starts_the_daemon_without_waiting(repo: Path) -> None:
    stdin = json.dumps({"cwd": str(repo), "source": "startup"}).encode()

    def session_start(env: dict[str, str]) -> None:
        proc = subprocess.run(
            [sys.executable, "-m", "local_recall", "hook", "session-start"],
            input=stdin,
            capture_output=True,
            env=env,
            cwd=repo,
            timeout=30,
        )
        assert (proc.returncode, proc.stderr) == (0, b"")

    # First a daemon that never answers: a sitecustomize holds every `daemon run` process
    # at its start. A hook that waited for the daemon would reach its deadline.
    hold = repo.parent / "hold-daemon"
    hold.mkdir()
    (hold / "sitecustomize.py").write_text(
        "import sys, time\nif sys.argv[-2:] == ['daemon', 'run']:\n    time.sleep(3600)\n"
    )
    marker = f"HELD_DAEMON={uuid.uuid4()}"
    held = daemon_env(repo, CLAUDE_PROJECT_DIR=str(repo), PYTHONPATH=str(hold))
    held.update([marker.split("=", 1)])
    try:
        session_start(held)
        wait_for(lambda: processes_with(marker), 60)  # it was started, and is held
    finally:
        for pid in processes_with(marker):
            os.kill(pid, signal.SIGKILL)
    assert "gave up" not in (repo / "local-recall" / "recall.log").read_text("utf-8")
    env = daemon_env(repo, CLAUDE_PROJECT_DIR=str(repo))
    try:
        session_start(env)
        wait_for(lambda: lock_holder(Layout(repo)), 60)
        wait_for(lambda: ask(socket_paths(repo.resolve(), env), {"op": "ping"}, 1.0), 60)
    finally:
        stop_and_reap(repo)


@pytest.mark.slow
def test_idle_daemon_exits_by_itself(repo: Path) -> None:
    env = daemon_env(repo, LOCAL_RECALL_DAEMON_IDLE_EXIT_MINUTES="0.02")
    try:
        assert lr(repo, "daemon", "start", env=env).returncode == 0
        wait_for(lambda: lock_holder(Layout(repo)) is None, 120)
        assert status_json(repo)["state"] == "stopped"
    finally:
        stop_and_reap(repo)


@pytest.mark.slow
def test_modules_in_the_repo_do_not_shadow_the_daemons(repo: Path) -> None:
    for name in ("json.py", "logging.py", "socket.py"):
        (repo / name).write_text("raise SystemExit('shadowed the standard library')\n")
    env = daemon_env(repo)
    try:
        started = subprocess.run(
            [sys.executable, "-m", "local_recall", "--root", str(repo), "daemon", "start"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            cwd=repo.parent,
        )
        assert started.returncode == 0, started.stdout + started.stderr
        assert ask(socket_paths(repo.resolve(), env), {"op": "ping"}, 5.0) is not None
    finally:
        stop_and_reap(repo)


@pytest.mark.slow
@requires_claude
def test_missing_claude_is_one_warning_when_it_starts_and_one_when_it_ends(
    repo: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """No `claude` on the daemon's PATH is an expected, lasting condition:
    one warning when it starts (no traceback, not once per pass), one when it ends."""
    from local_recall.capture.extraction.claude_cli import NOT_FOUND_MESSAGE
    from local_recall.daemon.runtime import Daemon
    from local_recall.recall import Recall
    from local_recall.settings import Settings

    bin_dir = tmp_path / "bin"  # the daemon's PATH: `claude` shows up here later
    bin_dir.mkdir()
    with FakeAnthropic(model(lambda _body: {"memories": []})) as api:
        env = offline_env(
            tmp_path / "home",
            api.url,
            extra={"PATH": f"{bin_dir}{os.pathsep}{os.defpath}", "CLAUDE_CODE_MAX_RETRIES": "0"},
        )
        env.pop("LOCAL_RECALL_CLAUDE_BIN", None)
        session = str(uuid.uuid4())
        transcript = (
            tmp_path / "home" / ".claude" / "projects" / encode_project_dir(str(repo)) / session
        ).with_suffix(".jsonl")
        transcript.parent.mkdir(parents=True)
        entries = exchange_entries(
            repo,
            session,
            datetime.now(UTC),
            "How are the tests run?",
            [{"type": "text", "text": "pytest -q"}],
        )
        transcript.write_text("".join(json.dumps(e) + "\n" for e in entries), "utf-8")
        recall = Recall.open(settings=Settings(root=repo, environ=env))
        daemon = Daemon(recall, DaemonLock(recall.layout))

        def warnings_from_passes(count: int) -> list[str]:
            caplog.clear()
            with caplog.at_level(logging.INFO, logger="local_recall"):
                for _ in range(count):
                    daemon._scheduled_pass("test")
            assert all(record.exc_info is None for record in caplog.records)  # no traceback
            return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]

        started = warnings_from_passes(3)
        assert len(started) == 1 and NOT_FOUND_MESSAGE in started[0], started
        assert status_json(repo)["counts"] == {"passes": 3, "syncs": 0, "queries": 0, "errors": 1}
        assert api.message_requests() == []

        (bin_dir / "claude").symlink_to(claude_or_fail())
        ended = warnings_from_passes(2)
        assert len(ended) == 1 and "resumed" in ended[0], ended
        assert len(api.message_requests()) >= 1  # the transcript was extracted after all
        assert status_json(repo)["counts"]["errors"] == 1


def test_daemon_start_waits_as_long_as_the_config_says(repo: Path) -> None:
    """`daemon start` waits `[daemon] start_wait_seconds` (the suite gives a loaded machine
    300 s through its environment): a wait no daemon can meet gives up with the one-line
    error, and `--wait` still wins over it."""
    env = daemon_env(repo, LOCAL_RECALL_DAEMON_START_WAIT_SECONDS="0.001")
    try:
        started = lr(repo, "daemon", "start", env=env)
        assert started.returncode == 1
        assert started.stderr.startswith("local-recall: error: daemon did not start (pid ")
        assert "did not answer in time" in started.stderr
    finally:
        stop_and_reap(repo)
    try:
        started = lr(repo, "daemon", "start", "--wait", "120", env=env)
        assert started.returncode == 0, started.stderr
    finally:
        stop_and_reap(repo)
