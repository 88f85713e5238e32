"""End to end with the real Claude Code CLI: the API address changes between
two sessions (two fake Anthropic servers, the first stopped), and the second session's
transcript is extracted through the second without anyone restarting the daemon. The
variables reach the daemon with the session's own hooks; their values are never logged.
`uninstall` stops the daemon."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from local_recall.daemon.control import lock_holder, stop_daemon
from local_recall.repo.layout import Layout
from tests.capture.test_pipeline import echo_memories, model
from tests.claude_cli import claude_or_fail, offline_env, requires_claude, run_claude
from tests.conftest import clean_env, git_init
from tests.fake_anthropic import STRUCTURED_OUTPUT_TOOL, FakeAnthropic, tool_names, visible_text
from tests.waiting import wait_for

pytestmark = [pytest.mark.slow, requires_claude]

SECOND_KEY = "sk-second-session-key-0123456789"
SETTINGS = {
    "LOCAL_RECALL_SUMMARIES_ENABLED": "false",
    "LOCAL_RECALL_EXTRACTION_MIN_TURNS": "1",
    "LOCAL_RECALL_EXTRACTION_MAX_ATTEMPTS": "1",
    "CLAUDE_CODE_MAX_RETRIES": "0",
}


def lr(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "local_recall", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def extraction_requests(api: FakeAnthropic, words: str) -> list[str]:
    return [
        visible_text(r.body)
        for r in api.message_requests()
        if STRUCTURED_OUTPUT_TOOL in tool_names(r.body) and words in visible_text(r.body)
    ]


def test_extraction_follows_the_latest_sessions_api_address(tmp_path: Path) -> None:
    claude = claude_or_fail()
    settings = {**SETTINGS, "LOCAL_RECALL_EXTRACTION_CLAUDE_PATH": claude}  # the extractor
    repo = git_init(tmp_path / "repo")
    home = tmp_path / "home"
    base = clean_env({"CLAUDE_CONFIG_DIR": str(home / ".claude"), **settings})
    assert lr(repo, base, "init").returncode == 0
    try:
        with FakeAnthropic(model(echo_memories)) as first:
            env1 = offline_env(home, first.url, extra=settings)
            done = run_claude(claude, ["-p", "How is the signer keyed? (one)"], cwd=repo, env=env1)
            assert done.returncode == 0, done.stderr
            # the SessionStart hook started the daemon with this session's environment
            assert wait_for(lambda: lock_holder(Layout(repo)), 60)
            assert wait_for(lambda: extraction_requests(first, "(one)"), 120)
        daemon = lock_holder(Layout(repo))
        # the first API is gone; the user's next session talks to another address
        with FakeAnthropic(model(echo_memories)) as second:
            env2 = offline_env(
                home, second.url, extra={**settings, "ANTHROPIC_API_KEY": SECOND_KEY}
            )
            done = run_claude(claude, ["-p", "Why rotate the keys? (two)"], cwd=repo, env=env2)
            assert done.returncode == 0, done.stderr
            assert wait_for(lambda: extraction_requests(second, "(two)"), 120), "not extracted"
            assert second.message_requests()[-1].headers.get("x-api-key") == SECOND_KEY

            def written() -> bool:
                listed = json.loads(lr(repo, base, "list", "--json").stdout)
                return any("(two)" in m["subject"] for m in listed)

            # the API stays up until the memory is written: the request arrives before the
            # extractor has read the answer (CI once closed the server in between)
            assert wait_for(written, 120), "not written"
        assert lock_holder(Layout(repo)) == daemon  # the same daemon, never restarted
        status = json.loads((repo / "local-recall" / "state" / "daemon.json").read_text())
        changed = status["environment"]["differs_from_daemon"]
        assert "ANTHROPIC_BASE_URL" in changed and "ANTHROPIC_API_KEY" in changed
        # never logged: not the key, not the address
        for path in [
            repo / "local-recall" / "recall.log",
            repo / "local-recall" / "state" / "daemon.json",
        ]:
            text = path.read_text()
            assert SECOND_KEY not in text and second.url not in text, path
        doctor = lr(repo, base, "doctor").stdout
        assert "extraction follows the environment of session" in doctor
        # uninstall stops the daemon: nothing keeps watching transcripts or calling claude -p
        removed = lr(repo, base, "uninstall")
        assert removed.returncode == 0 and f"daemon: stopped (pid {daemon})" in removed.stdout
        assert lock_holder(Layout(repo)) is None
    finally:
        result = stop_daemon(Layout(repo), wait_seconds=20)
        if not result.stopped and result.pid:
            os.kill(result.pid, 9)
