"""A session that ends offline. `local-recall sync --ended` (what the SessionEnd hook
starts when no daemon answers) makes one `claude -p` attempt; the CLI's "Unable to connect to
API" is recognised, recorded as the transcript's failure with its backoff and shown by
`daemon status`; the retry is the backoff's, not a loop in the session-end process (it used to
retry for ~40 s: 6 `claude -p` starts, 3 for the memories and 3 for the summary).

The real Claude Code CLI, behind a shell script that counts its starts; the API is a
FakeAnthropic, closed (connection refused) or serving."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from local_recall.capture.transcripts import encode_project_dir
from tests.capture.test_pipeline import exchange_entries
from tests.capture.test_summaries_e2e import summary_for
from tests.claude_cli import claude_or_fail, offline_env, requires_claude
from tests.fake_anthropic import FakeAnthropic, default_responder, tool_schema
from tests.import_log import ImportLog

pytestmark = [pytest.mark.slow, requires_claude]

Run = Callable[..., subprocess.CompletedProcess[str]]


def counting_claude(tmp_path: Path) -> tuple[Path, Path]:
    """A `claude` that appends a line to a log, then runs the real CLI."""
    log = tmp_path / "claude-starts.log"
    shim = tmp_path / "bin" / "claude"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\necho start >> "{log}"\nexec "{claude_or_fail()}" "$@"\n')
    shim.chmod(0o755)
    return shim, log


def starts(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def refused_url() -> str:
    """The address of an API that is gone: a port that was just closed refuses connections."""
    with FakeAnthropic() as api:
        return api.url


def write_transcript(home: Path, repo: Path, text: str) -> Path:
    """A session in `repo`, just written (so not quiet: only `--ended` makes its summary due)."""
    session = str(uuid.uuid4())
    entries = exchange_entries(
        repo,
        session,
        datetime.now(UTC),
        text,
        [{"type": "text", "text": "Noted."}],
    )
    path = home / ".claude" / "projects" / encode_project_dir(str(repo)) / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


def runner(repo: Path, home: Path, shim: Path) -> Callable[[str], Run]:
    """`local-recall ...` in `repo` against the API at a given URL."""

    def at(url: str, **extra: str) -> Run:
        env = offline_env(home, url, extra={"LOCAL_RECALL_CLAUDE_BIN": str(shim), **extra})
        env = {k: v for k, v in env.items() if k != "LOCAL_RECALL_ROOT"}

        def run(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "local_recall", *args],
                cwd=repo,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )

        return run

    return at


def test_an_offline_session_end_makes_one_attempt_and_leaves_the_retry_to_the_backoff(
    repo: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    shim, log = counting_claude(tmp_path)
    at = runner(repo, home, shim)
    transcript = write_transcript(home, repo, "Please remember: retries back off exponentially.")
    offline = at(refused_url())

    started = time.monotonic()
    imports = ImportLog(tmp_path / "imports")
    ended = at(refused_url(), **imports.env({"PYTHONPATH": os.environ.get("PYTHONPATH", "")}))(
        "sync", "--ended", str(transcript)
    )
    seconds = time.monotonic() - started
    # before its attempt, the pass looked for similar memories in the files: LanceDB (~1 s to
    # import) is not loaded by a session end that wrote nothing
    imported = imports.take()
    assert "lancedb" not in imported and "local_recall.capture" in imported
    assert starts(log) == 1  # the memories' call; the pass stops: the summary would fail too
    assert ended.returncode == 1 and "Traceback" not in ended.stderr
    assert "stopped early: unreachable" in ended.stderr
    assert "no answer from the API: API Error: Unable to connect to API" in ended.stderr
    assert "(after 3 attempts)" not in ended.stderr

    status = offline("daemon", "status")
    assert status.returncode == 3  # not running
    shown = [line for line in status.stdout.splitlines() if "extraction:" in line]
    assert len(shown) == 1 and "failing since" in shown[0]
    assert "1 transcript waits for a retry, next at" in shown[0]
    assert "no answer from the API: API Error: Unable to connect to API" in shown[0]
    health = json.loads(offline("daemon", "status", "--json").stdout)["extraction"]
    assert health["failing"] == 1 and health["waiting"] == 1 and health["next_retry"]

    # the API is back, but the memories' retry is the backoff's: another pass does not ask
    # for them yet (the session's summary, due since it ended, is written)
    with FakeAnthropic(default_responder(summary_for)) as api:
        again = at(api.url)("sync", "--ended", str(transcript))
        asked = [tool_schema(r.body, "StructuredOutput") for r in api.message_requests()]
    assert again.returncode == 0, again.stderr
    assert "0 processed, 1 skipped" in again.stdout and "1 summaries" in again.stdout
    assert asked and all("memories" not in (s or {}).get("properties", {}) for s in asked)
    print(f"\noffline `sync --ended`: {seconds:.1f} s, 1 claude -p start")


def test_an_offline_summary_makes_one_attempt_then_waits_for_its_backoff(
    repo: Path, tmp_path: Path
) -> None:
    """The memories were extracted while online; the session then ends offline: only its
    summary is due, tried once, then left to the summary's own backoff."""
    home = tmp_path / "home"
    shim, log = counting_claude(tmp_path)
    at = runner(repo, home, shim)
    transcript = write_transcript(home, repo, "Please remember: the parser rejects tabs.")
    with FakeAnthropic(default_responder(summary_for)) as api:
        online = at(api.url)("sync")  # not ended, not quiet: memories only, no summary
        assert online.returncode == 0, online.stderr
    assert starts(log) == 1
    offline = at(refused_url())
    ended = offline("sync", "--ended", str(transcript))
    assert starts(log) == 2  # one summary attempt
    assert ended.returncode == 1
    assert "summary: claude -p failed (exit 1): no answer from the API" in ended.stderr
    assert "(after 3 attempts)" not in ended.stderr
    again = offline("sync", "--ended", str(transcript))
    assert starts(log) == 2  # waiting for the summary's backoff, not tried at every pass
    assert again.returncode == 0, again.stderr
    assert os.path.exists(transcript)
