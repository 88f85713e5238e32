"""Session summaries and agent guidance end to end, with the real Claude Code CLI offline
(against FakeAnthropic): a session ends -> its SessionEnd hook hands the transcript to a
one-shot `local-recall sync --ended` -> a summary request -> session-summaries/<id>.md -> the
next session's first request shows it. After a compaction, the continued session's summary
comes first. The skills and commands `init` installs (and the plugin ships) are listed by the
CLI."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.claude_cli import claude_or_fail, offline_env, requires_claude, run_claude
from tests.conftest import REPO_ROOT, clean_env, git_init
from tests.fake_anthropic import (
    FakeAnthropic,
    JSONDict,
    default_responder,
    tool_schema,
    visible_text,
)
from tests.waiting import wait_for

pytestmark = [pytest.mark.slow, requires_claude]

PLUGIN_DIR = REPO_ROOT / "hooks"
SKILLS = ["reviewing-memory", "saving-memory", "using-memory"]
COMMANDS = ["memories-review", "recall", "remember"]


def summary_for(body: JSONDict) -> Mapping[str, Any]:
    """The fake model: a summary when asked for one (the schema has `request`), else no
    memories. The request names what the session was about, so each session's differs."""
    schema = tool_schema(body, "StructuredOutput") or {}
    if "request" not in (schema.get("properties") or {}):
        return {"memories": []}
    text = visible_text(body)
    topic = "flaky lock test" if "flaky lock" in text else "release notes"
    return {
        "request": f"Fix the {topic}",
        "done": [f"Looked into the {topic} (tests/test_lock.py)"],
        "learned": ["The lock timeout is 60 s"],
        "next_steps": [f"Finish the {topic} and run the suite"],
    }


def lr(repo: Path, env: Mapping[str, str], *args: str, stdin: str = "") -> str:
    done = subprocess.run(
        [sys.executable, "-m", "local_recall", *args],
        cwd=repo,
        env=dict(env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    repo = git_init(tmp_path / "repo")
    base = clean_env({"CLAUDE_CONFIG_DIR": str(tmp_path / "home" / ".claude")})
    lr(repo, base, "init")
    extra = {
        "LOCAL_RECALL_HOOKS_START_DAEMON": "false",  # the one-shot sync path, deterministic
        "LOCAL_RECALL_CLAUDE_BIN": claude_or_fail(),
    }
    yield repo, extra
    stop_ended_syncs(tmp_path)


def _processes() -> dict[int, tuple[int, bytes]]:
    """pid -> (parent pid, command line) of every process now."""
    found = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_bytes()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:  # it ended meanwhile
            continue
        found[int(entry.name)] = (int(stat.rsplit(b")", 1)[1].split()[1]), cmdline)
    return found


def stop_ended_syncs(marker: Path) -> None:
    """Kill what the test's last sessions left running: a session that ends (or compacts)
    after the test has what it checks starts a `local-recall sync --ended` for its transcript,
    which then tries its `claude -p` call once against the closed fake API (it once
    retried for ~30 s, ~6 s of CPU taken from the tests after it; a few seconds of model
    loading and one node start remain). Found by this test's tmp_path in their command line,
    with the processes they started, never by name."""
    processes = _processes()
    doomed = [
        pid
        for pid, (_, cmdline) in processes.items()
        if b"--ended" in cmdline.split(b"\0") and str(marker).encode() in cmdline
    ]
    for pid in doomed:  # doomed grows: their children, grandchildren, ...
        doomed += [child for child, (parent, _) in processes.items() if parent == pid]
    for pid in doomed:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def into_the_next_second() -> None:
    """Summaries are ordered by whole-second times, and everything of the sessions so far
    happened by now: from the next whole second on, what follows is stamped strictly later.
    (A fixed 1.1 s sleep waited up to a second longer than that.)"""
    time.sleep(1.0 - time.time() % 1.0 + 0.01)


def summaries(repo: Path) -> list[Path]:
    return sorted((repo / "local-recall" / "session-summaries").glob("*.md"))


def test_a_sessions_summary_reaches_the_next_sessions_first_request(
    project: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    repo, extra = project
    claude = claude_or_fail()
    with FakeAnthropic(default_responder(summary_for, text="Done.")) as api:
        env = offline_env(tmp_path / "home", api.url, extra=extra)
        first = run_claude(
            claude, ["-p", "Please fix the flaky lock test"], cwd=repo, env=env, timeout=180
        )
        assert first.returncode == 0, first.stderr
        # SessionEnd found no daemon and started `local-recall sync --ended <transcript>`
        wait_for(lambda: len(summaries(repo)) == 1)
        written = summaries(repo)[0].read_text(encoding="utf-8")
        assert "## Request\n\nFix the flaky lock test" in written
        assert "## Next steps\n\n- Finish the flaky lock test and run the suite" in written
        assert "branch: main" in written or "branch: master" in written
        asked = [r.body for r in api.message_requests()]
        summary_requests = [
            b for b in asked if "request" in ((tool_schema(b, "StructuredOutput") or {}).get(
                "properties") or {})
        ]  # fmt: skip
        assert len(summary_requests) == 1  # one summary request for the session
        api.clear()
        second = run_claude(claude, ["-p", "Where were we?"], cwd=repo, env=env, timeout=180)
        assert second.returncode == 0, second.stderr
        first_request = visible_text(api.message_requests()[0].body)
    assert "Recent sessions on branch" in first_request
    assert "Fix the flaky lock test" in first_request
    assert "Finish the flaky lock test and run the suite" in first_request


def hook(repo: Path, env: Mapping[str, str], payload: Mapping[str, str]) -> str:
    out = lr(repo, env, "hook", "session-start", stdin=json.dumps(payload))
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"]) if out else ""


def test_after_compaction_the_continued_sessions_summary_comes_first(
    project: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """Two sessions summarised (the flaky-lock one first, the release-notes one later); the
    SessionStart input Claude Code sends after /compact of the first session puts its summary
    before the newer one; a fresh start shows the newest first."""
    repo, extra = project
    claude = claude_or_fail()
    with FakeAnthropic(default_responder(summary_for, text="Done.")) as api:
        env = offline_env(tmp_path / "home", api.url, extra=extra)
        ids = []
        for prompt in ("Please fix the flaky lock test", "Write the release notes"):
            done = run_claude(
                claude,
                ["-p", prompt, "--output-format", "json"],
                cwd=repo,
                env=env,
                timeout=180,
            )
            assert done.returncode == 0, done.stderr
            ids.append(json.loads(done.stdout)["session_id"])
            wait_for(lambda: len(summaries(repo)) == len(ids))
            if len(ids) == 1:  # the second session's summary is stamped later
                into_the_next_second()
    hook_env = clean_env({"LOCAL_RECALL_HOOKS_START_DAEMON": "false"})
    flaky, release = ids
    base = {"cwd": str(repo), "hook_event_name": "SessionStart"}
    compacted = hook(repo, hook_env, {**base, "session_id": flaky, "source": "compact"})
    assert compacted.index("Fix the flaky lock test") < compacted.index("Fix the release notes")
    assert "The session being continued" in compacted
    assert compacted.index(flaky) < compacted.index(release)
    started = hook(repo, hook_env, {**base, "session_id": "new", "source": "startup"})
    assert started.index("Fix the release notes") < started.index("Fix the flaky lock test")


def test_a_real_compact_injects_the_continued_sessions_summary_first(
    project: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """`/compact` in `-p` mode on a resumed session: PreCompact hands the transcript over, and
    the SessionStart hook Claude Code runs after compacting (source "compact") puts that
    session's summary before a newer session's. Its output is recorded in the transcript."""
    repo, extra = project
    claude = claude_or_fail()
    with FakeAnthropic(default_responder(summary_for, text="Done.")) as api:
        env = offline_env(tmp_path / "home", api.url, extra=extra)

        def ask(*args: str) -> str:
            done = run_claude(
                claude, [*args, "--output-format", "json"], cwd=repo, env=env, timeout=180
            )
            assert done.returncode == 0, done.stderr
            return str(json.loads(done.stdout)["session_id"])

        flaky = ask("-p", "Please fix the flaky lock test")
        for prompt in ("Look at the timeout", "And the retry loop"):
            ask("-p", prompt, "--resume", flaky)
        wait_for(lambda: len(summaries(repo)) == 1)
        into_the_next_second()
        release = ask("-p", "Write the release notes")
        wait_for(lambda: len(summaries(repo)) == 2)
        ask("-p", "/compact", "--resume", flaky)
    transcript = next((tmp_path / "home" / ".claude" / "projects").glob(f"*/{flaky}.jsonl"))
    entries = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert any(e.get("subtype") == "compact_boundary" for e in entries)
    injected = [
        json.dumps(e["attachment"])
        for e in entries
        if e.get("type") == "attachment" and "The session being continued" in json.dumps(e)
    ]
    assert injected, [e.get("attachment", {}).get("type") for e in entries]
    text = injected[-1]
    assert text.index(flaky) < text.index(release)


def listed(repo: Path, env: Mapping[str, str], claude: str) -> dict[str, list[str]]:
    done = run_claude(
        claude,
        ["-p", "hello", "--output-format", "stream-json", "--verbose"],
        cwd=repo,
        env=env,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    for line in done.stdout.splitlines():
        event = json.loads(line)
        if event.get("type") == "system" and event.get("subtype") == "init":
            return {"skills": event["skills"], "slash_commands": event["slash_commands"]}
    raise AssertionError("no init event")


def test_project_install_skills_and_commands_are_listed_and_uninstall_removes_them(
    project: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    repo, extra = project
    claude = claude_or_fail()
    extra = {**extra, "LOCAL_RECALL_EXTRACTION_ENABLED": "false"}
    mine = repo / ".claude" / "commands" / "mine.md"
    mine.write_text("---\ndescription: a person's own command\n---\nHi\n", encoding="utf-8")
    with FakeAnthropic(default_responder(text="OK")) as api:
        env = offline_env(tmp_path / "home", api.url, extra=extra)
        found = listed(repo, env, claude)
        assert set(SKILLS) <= set(found["skills"])
        assert set(SKILLS + COMMANDS) <= set(found["slash_commands"])
        lr(repo, clean_env({"CLAUDE_CONFIG_DIR": str(tmp_path / "home" / ".claude")}), "uninstall")
        after = listed(repo, env, claude)
    assert not set(SKILLS) & set(after["skills"])
    assert not set(SKILLS + COMMANDS) & set(after["slash_commands"])
    assert "mine" in after["slash_commands"] and mine.exists()  # exactly ours went
    assert not (repo / ".claude" / "skills").exists()


def test_plugin_install_lists_the_skills_and_commands(tmp_path: Path) -> None:
    claude = claude_or_fail()
    repo = git_init(tmp_path / "repo")
    with FakeAnthropic(default_responder(text="OK")) as api:
        env = offline_env(tmp_path / "home", api.url)
        for args in (
            ["plugin", "marketplace", "add", str(PLUGIN_DIR)],
            ["plugin", "install", "local-recall@local-recall", "--scope", "user"],
        ):
            done = run_claude(claude, args, cwd=repo, env=env, timeout=180)
            assert done.returncode == 0, done.stdout + done.stderr
        found = listed(repo, env, claude)
    assert {f"local-recall:{name}" for name in SKILLS} <= set(found["skills"])
    assert {f"local-recall:{name}" for name in SKILLS + COMMANDS} <= set(found["slash_commands"])


def test_plugin_ships_the_files_init_installs() -> None:
    from local_recall.claude_code.install.guidance import shipped_files

    assert sorted(shipped_files()) == sorted(
        [f"skills/{name}/SKILL.md" for name in SKILLS]
        + [f"commands/{name}.md" for name in COMMANDS]
    )
    assert shipped_files() == shipped_files(PLUGIN_DIR)
