"""The prompt hook's two handlers: the shell guard (run by a real /bin/sh, as Claude Code runs
it), the marker the MCP server writes, and the claim that keeps a prompt from being answered
twice. Real files and processes; the end-to-end cases are in test_prompt_hook_e2e.py."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from local_recall.claude_code.hooks.guard import GUARD, guarded, marker_dir, unguarded
from local_recall.claude_code.hooks.handoff import (
    ServedMarker,
    claim,
    claim_as_command,
    guard_missed,
    prune_stale,
)
from tests.local_users import make_dirs_as_another_user, sticky_folder

PROMPT_ID = "8f0e4c52-6b1d-4d7a-9a53-2f7c1e0b9d41"


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    directory = tmp_path / "run"
    directory.mkdir(mode=0o700)
    return directory


def env_for(runtime: Path) -> dict[str, str]:
    return {"XDG_RUNTIME_DIR": str(runtime)}


@pytest.fixture
def other_process() -> Iterator[subprocess.Popen[bytes]]:
    """A live process to stand for the MCP server."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def run_guarded(runtime: Path) -> str:
    """What the guard lets through, run as Claude Code runs hooks: `/bin/sh -c`. The shell's
    parent — what its $PPID names, Claude Code in real life — is this test process."""
    done = subprocess.run(
        ["/bin/sh", "-c", guarded("echo RAN")],
        env={**os.environ, **env_for(runtime)},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout.strip()


# --- the guard, pure --------------------------------------------------------------------------


def test_guard_wraps_and_unwraps_a_command() -> None:
    command = "/opt/my tools/bin/local-recall hook user-prompt-submit"
    assert guarded(command) == GUARD + command
    assert unguarded(guarded(command)) == command
    assert unguarded(command) == command
    assert guarded(command).endswith("|| exec " + command)


def test_marker_dir_follows_the_shell_expansion() -> None:
    assert marker_dir({"XDG_RUNTIME_DIR": "/run/user/7"}, 42) == Path(
        "/run/user/7/local-recall-mcp-42"
    )
    # ${XDG_RUNTIME_DIR:-/tmp}: unset or empty means /tmp
    assert marker_dir({}, 42) == Path("/tmp/local-recall-mcp-42")
    assert marker_dir({"XDG_RUNTIME_DIR": ""}, 42) == Path("/tmp/local-recall-mcp-42")
    assert marker_dir({"XDG_RUNTIME_DIR": "relative"}, 42) is None


# --- the guard, in a real shell -----------------------------------------------------------------


def test_the_guard_runs_the_command_without_a_marker(runtime: Path) -> None:
    assert run_guarded(runtime) == "RAN"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="the marker needs /proc")
def test_the_guard_stops_the_command_while_the_server_lives(runtime: Path) -> None:
    marker = ServedMarker(env_for(runtime), claude_pid=os.getpid())
    assert marker.ensure() is False  # made now: the command may be running too
    assert marker.ensure() is True and marker.serves()
    assert run_guarded(runtime) == ""
    server = serving_in_a_child(runtime)  # another server takes over, then dies
    assert run_guarded(runtime) == "" and not marker.serves()
    server.kill()
    server.wait()
    assert run_guarded(runtime) == "RAN"  # the server died: the command answers again
    marker.remove()  # taken over: not ours to remove
    assert (runtime / f"local-recall-mcp-{os.getpid()}").is_dir()


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="the marker needs /proc")
def test_a_dead_servers_marker_whose_pid_was_reused_lets_the_command_answer(
    runtime: Path, other_process: subprocess.Popen[bytes]
) -> None:
    """`live` of a server killed with SIGKILL, its pid now another process's (stood for by
    `other_process`): the command answers again, and the prune takes the marker away."""
    dead = ServedMarker(env_for(runtime), claude_pid=os.getpid(), pid=other_process.pid)
    dead.ensure()
    live = runtime / f"local-recall-mcp-{os.getpid()}" / "live"
    assert os.readlink(live).startswith(f"/proc/{other_process.pid}/")
    assert not dead.serves()
    assert run_guarded(runtime) == "RAN"
    assert guard_missed(live.parent, time.time() + 5) is False
    old = time.time() - 3600
    os.utime(live.parent, (old, old), follow_symlinks=False)
    assert prune_stale(runtime) == 1 and not live.parent.exists()


def serving_in_a_child(runtime: Path) -> subprocess.Popen[str]:
    """A real server process marking this test process (its Claude Code) as served."""
    code = (
        "import sys, time\n"
        "from local_recall.claude_code.hooks.handoff import ServedMarker\n"
        "m = ServedMarker({'XDG_RUNTIME_DIR': sys.argv[1]}, claude_pid=int(sys.argv[2]))\n"
        "m.ensure()\n"
        "print(m.serves(), flush=True)\n"
        "time.sleep(60)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code, str(runtime), str(os.getpid())],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "True"
    return child


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="the marker needs /proc")
def test_the_guard_ignores_a_marker_that_is_a_symlink(runtime: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (elsewhere / "live").symlink_to(f"/proc/{os.getpid()}")
    directory = marker_dir(env_for(runtime), os.getpid())
    assert directory is not None
    directory.symlink_to(elsewhere)
    assert run_guarded(runtime) == "RAN"
    # and the server does not write through it either
    marker = ServedMarker(env_for(runtime), claude_pid=os.getpid())
    assert marker.ensure() is False
    assert os.readlink(elsewhere / "live") == f"/proc/{os.getpid()}"


# --- the marker ---------------------------------------------------------------------------------


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="the marker needs /proc")
def test_the_marker_is_private_and_removed_at_exit(runtime: Path) -> None:
    marker = ServedMarker(env_for(runtime), claude_pid=4242)
    marker.ensure()
    directory = runtime / "local-recall-mcp-4242"
    assert directory.stat().st_mode & 0o777 == 0o700
    assert os.readlink(directory / "live") == marker.target
    assert str(marker.target).startswith(f"/proc/{os.getpid()}/fd/")  # through our own handle
    assert (directory / "live").exists() and marker.serves()
    assert claim(directory, PROMPT_ID)
    marker.remove()
    assert not directory.exists()


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="the marker needs /proc")
def test_a_marker_taken_over_by_another_server_is_left_to_it(runtime: Path) -> None:
    first = ServedMarker(env_for(runtime), claude_pid=4242, pid=os.getpid())
    second = ServedMarker(env_for(runtime), claude_pid=4242, pid=os.getppid())
    first.ensure()
    assert second.ensure() is False  # it points at another process: remade
    first.remove()
    assert os.readlink(runtime / "local-recall-mcp-4242" / "live") == second.target


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="the marker needs /proc")
def test_another_users_marker_directory_leaves_every_prompt_to_the_command() -> None:
    """Another local user made `local-recall-mcp-<pid>` first (in /tmp anyone can): the server
    cannot hold a marker there, so it answers nothing; the guard and the claim let the command
    answer every prompt: one answer each (the server's answer is in test_mcp_tool.py)."""
    with sticky_folder() as shared:
        directory = marker_dir(env_for(shared), os.getpid())
        assert directory is not None
        make_dirs_as_another_user(directory)
        marker = ServedMarker(env_for(shared), claude_pid=os.getpid())
        assert marker.ensure() is False and not marker.serves()
        assert run_guarded(shared) == "RAN"
        assert claim_as_command(directory, PROMPT_ID) is True
        assert prune_stale(shared, now=time.time() + 3600) == 0  # not ours to remove
        assert directory.is_dir()


def test_no_marker_where_the_runtime_dir_is_unusable(tmp_path: Path) -> None:
    missing = ServedMarker({"XDG_RUNTIME_DIR": str(tmp_path / "gone" / "deeper")}, claude_pid=9)
    assert missing.ensure() is False
    relative = ServedMarker({"XDG_RUNTIME_DIR": "run"}, claude_pid=9)
    assert relative.directory is None and relative.ensure() is False
    relative.remove()  # nothing to do, no error


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="the marker needs /proc")
def test_a_directory_open_to_others_is_not_used(runtime: Path) -> None:
    directory = runtime / "local-recall-mcp-77"
    directory.mkdir(mode=0o755)
    directory.chmod(0o755)
    marker = ServedMarker(env_for(runtime), claude_pid=77)
    assert marker.ensure() is False
    assert not (directory / "live").exists()
    assert claim(directory, PROMPT_ID)  # not ours to coordinate in: always answer
    assert not (directory / PROMPT_ID).exists()


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="the marker needs /proc")
def test_prune_removes_markers_of_dead_servers_only(runtime: Path) -> None:
    dead = runtime / "local-recall-mcp-11"
    dead.mkdir(mode=0o700)
    (dead / "live").symlink_to("/proc/999999999")
    alive = runtime / "local-recall-mcp-12"
    alive.mkdir(mode=0o700)
    (alive / "live").symlink_to(f"/proc/{os.getpid()}")
    young = runtime / "local-recall-mcp-13"
    young.mkdir(mode=0o700)  # a server about to write its link
    other = runtime / "unrelated"
    other.mkdir()
    old = time.time() - 3600
    for path in (dead, alive, other):
        os.utime(path, (old, old), follow_symlinks=False)
    assert prune_stale(runtime) == 1
    assert not dead.exists() and alive.exists() and young.exists() and other.exists()
    assert prune_stale(runtime, now=time.time() + 3600) == 1  # the young one, much later
    assert not young.exists()


# --- the claim ----------------------------------------------------------------------------------


def test_only_the_first_claim_of_a_prompt_wins(runtime: Path) -> None:
    directory = runtime / "local-recall-mcp-5"
    directory.mkdir(mode=0o700)
    assert claim(directory, PROMPT_ID) is True
    assert claim(directory, PROMPT_ID) is False
    assert claim(directory, "another-prompt") is True


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="the marker needs /proc")
def test_a_command_that_answered_keeps_a_server_connecting_meanwhile_silent(
    runtime: Path,
) -> None:
    """`claude -p`: the command runs (no server yet) and, while it searches, the server connects
    and is asked the same prompt. Whichever claims first answers; the other stays silent."""
    directory = marker_dir(env_for(runtime), os.getpid())
    assert directory is not None and not directory.exists()
    assert claim_as_command(directory, PROMPT_ID) is True  # no server yet: the command answers
    assert directory.stat().st_mode & 0o777 == 0o700 and not (directory / "live").exists()
    assert run_guarded(runtime) == "RAN"  # no `live`: the guard still lets the command run
    marker = ServedMarker(env_for(runtime), claude_pid=os.getpid())
    marker.ensure()  # the server adopts the directory
    assert os.readlink(directory / "live") == marker.target and marker.serves()
    assert marker.claim(PROMPT_ID) is False  # the command answered this prompt
    assert marker.claim("the-next-prompt") is True
    assert claim_as_command(directory, "the-next-prompt") is False  # and the other way round
    assert claim_as_command(None, PROMPT_ID) is True


def test_without_a_marker_directory_or_an_id_every_handler_answers(runtime: Path) -> None:
    assert claim(None, PROMPT_ID) is True
    assert claim(runtime / "local-recall-mcp-6", PROMPT_ID) is True
    assert not (runtime / "local-recall-mcp-6").exists()  # the command never makes it
    directory = runtime / "local-recall-mcp-7"
    directory.mkdir(mode=0o700)
    for bad in ("", "../escape", "a/b", "x" * 200):
        assert claim(directory, bad) is True
    assert list(directory.iterdir()) == []


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="the marker needs /proc")
def test_a_command_run_while_the_server_long_served_means_the_guard_failed(runtime: Path) -> None:
    marker = ServedMarker(env_for(runtime), claude_pid=31)
    assert guard_missed(marker.directory, time.time()) is False  # no marker at all
    marker.ensure()
    # made during this very prompt (the hand-over): the command was right to run
    assert guard_missed(marker.directory, time.time()) is False
    assert guard_missed(marker.directory, time.time() + 5) is True
    marker.remove()
    assert guard_missed(marker.directory, time.time() + 5) is False


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="the marker needs /proc")
def test_the_server_clears_its_old_claims_now_and_then(runtime: Path) -> None:
    marker = ServedMarker(env_for(runtime), claude_pid=32)
    marker.ensure()
    assert marker.directory is not None
    old = time.time() - 3600
    stale = marker.directory / "stale-claim"
    stale.touch()
    os.utime(stale, (old, old))
    for i in range(199):
        assert marker.claim(f"prompt-{i}")
    assert stale.exists()
    assert marker.claim("prompt-199")  # the 200th: old claims go, recent ones and live stay
    assert not stale.exists() and (marker.directory / "prompt-0").exists()
    assert (marker.directory / "live").is_symlink()
