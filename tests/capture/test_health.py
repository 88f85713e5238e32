"""Health you can see. A failing extraction records the reason as the
extractor printed it, since when, how many transcripts wait for a retry and when; `sync`,
`daemon status`, `doctor`, the viewer's stats and the session-start context show it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from local_recall.capture.transcripts.project_dirs import encode_project_dir
from tests.capture.test_pipeline import exchange_entries
from tests.conftest import clean_env
from tests.hook_runs import hook_env, run_hook
from tests.waiting import Ceiling

# What the real CLI prints when it cannot authenticate: on stderr, with no JSON result.
REFUSAL = "Invalid API key · Please run /login"
FAKE_CLAUDE = f"""#!/bin/sh
cat > /dev/null
echo "{REFUSAL}" >&2
exit 1
"""


def write_session(projects: Path, repo: Path, session: str, *, age: timedelta) -> Path:
    """A finished Claude Code session in this repository, last written `age` ago."""
    when = datetime.now(UTC) - age
    entries: list[dict[str, Any]] = []
    for n in range(3):
        entries += exchange_entries(
            repo,
            session,
            when + timedelta(seconds=n),
            f"Why does the signer use hmac.compare_digest? ({n})",
            [{"type": "text", "text": "Constant-time comparison: no timing oracle."}],
        )
    path = projects / encode_project_dir(str(repo)) / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    stamp = when.timestamp()
    os.utime(path, (stamp, stamp))
    return path


@pytest.fixture
def failing(
    repo: Path, tmp_path: Path
) -> Iterator[Callable[..., subprocess.CompletedProcess[str]]]:
    """`local-recall …` in `repo` with an extractor that refuses every call (as `claude` does
    with a bad key), and one finished session waiting to be extracted."""
    claude = tmp_path / "bin" / "claude"
    claude.parent.mkdir()
    claude.write_text(FAKE_CLAUDE)
    claude.chmod(0o755)
    config = tmp_path / "home" / ".claude"
    write_session(
        config / "projects", repo, "5e55a9b0-0000-4000-8000-000000000001", age=timedelta(hours=1)
    )
    env = clean_env(
        {
            "HOME": str(tmp_path / "home"),
            "CLAUDE_CONFIG_DIR": str(config),
            "LOCAL_RECALL_EXTRACTION_CLAUDE_PATH": str(claude),
            "LOCAL_RECALL_EXTRACTION_MAX_ATTEMPTS": "1",
            "LOCAL_RECALL_SUMMARIES_ENABLED": "false",
        }
    )

    def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "local_recall", *args],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    yield run
    run("daemon", "stop")


def test_sync_says_why_extraction_failed_in_the_clis_own_words(failing: Any) -> None:
    first = failing("sync")
    assert first.returncode == 1
    assert f"claude -p failed (exit 1): {REFUSAL}" in first.stderr
    assert "(no output)" not in first.stderr
    # the next sync skips the transcript (it waits for its retry) and says why
    again = failing("sync")
    assert "0 processed, 1 skipped" in again.stdout
    said = [line for line in again.stderr.splitlines() if "extraction failing since" in line]
    assert len(said) == 1 and "1 transcript waits for a retry, next at" in said[0]
    assert REFUSAL in said[0]
    status = json.loads(failing("daemon", "status", "--json").stdout)
    assert status["running"] is False
    health = status["extraction"]
    assert health["ok"] is False and health["failing"] == 1 and health["waiting"] == 1
    assert REFUSAL in health["reason"] and health["since"] and health["next_retry"]
    doctor = failing("doctor").stdout
    assert "extraction: failing since" in doctor and REFUSAL in doctor
    assert "[warn] daemon: not running" in doctor


@pytest.mark.slow  # a real daemon (loads the embedded model)
def test_the_daemon_records_each_pass_failures(failing: Any, repo: Path) -> None:
    started = failing("daemon", "start", "--wait", "60")
    assert started.returncode == 0, started.stderr
    ceiling = Ceiling()
    status: dict[str, Any] = {}
    while not ceiling.passed():
        status = json.loads(failing("daemon", "status", "--json").stdout)
        if (status.get("status") or {}).get("last_pass"):
            break
        time.sleep(0.5)
    data = status["status"]
    assert data["counts"]["errors"] >= 1  # never "errors 0" while nothing is extracted
    assert any(REFUSAL in e["error"] and e["where"] == "pass" for e in data["last_errors"])
    shown = failing("daemon", "status").stdout
    assert "extraction: failing since" in shown and REFUSAL in shown
    doctor = failing("doctor").stdout
    assert "[ok  ] daemon: running (pid" in doctor
    assert "[warn] daemon last pass:" in doctor and "1 failed" in doctor


def test_session_start_says_so_when_failing_for_a_while(repo: Path, tmp_path: Path) -> None:
    from local_recall.capture.extraction.attempts import RetryPolicy
    from local_recall.capture.extraction.claude_cli import ClaudeCliExtractor
    from local_recall.recall import Recall
    from local_recall.settings import Settings

    claude = tmp_path / "claude"
    claude.write_text(FAKE_CLAUDE)
    claude.chmod(0o755)
    config = tmp_path / "home" / ".claude"
    write_session(
        config / "projects", repo, "5e55a9b0-0000-4000-8000-000000000002", age=timedelta(hours=3)
    )
    two_hours_ago = datetime.now(UTC) - timedelta(hours=2)
    settings = Settings(
        root=repo,
        environ=clean_env({"CLAUDE_CONFIG_DIR": str(config)}),
        clock=lambda: two_hours_ago,
    )
    extractor = ClaudeCliExtractor(
        str(claude), retry=RetryPolicy(max_attempts=1, sleep=lambda _: None)
    )
    report = Recall.open(settings=settings).sync_transcripts(extractor=extractor)
    assert report.errors
    stdin = json.dumps(
        {
            "session_id": "s2",
            "cwd": str(repo),
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
    ).encode()
    ran = run_hook(
        "session-start", stdin, repo, env=hook_env(repo, {"CLAUDE_CONFIG_DIR": str(config)})
    )
    warning = [line for line in ran.context().splitlines() if "extracting memories" in line]
    assert len(warning) == 1, ran.context()
    assert "failing since" in warning[0] and REFUSAL in warning[0] and "doctor" in warning[0]
    # a failure of a few minutes is not worth a line in every session yet
    fresh = tmp_path / "fresh"
    from tests.conftest import git_init

    git_init(fresh)
    Recall.open(settings=Settings(root=fresh, environ=clean_env())).init()
    write_session(
        config / "projects", fresh, "5e55a9b0-0000-4000-8000-000000000003", age=timedelta(hours=3)
    )
    now_settings = Settings(root=fresh, environ=clean_env({"CLAUDE_CONFIG_DIR": str(config)}))
    Recall.open(settings=now_settings).sync_transcripts(extractor=extractor)
    Recall.open(settings=now_settings).add("A memory", "So the index is not empty.")
    quiet = run_hook(
        "session-start", stdin, fresh, env=hook_env(fresh, {"CLAUDE_CONFIG_DIR": str(config)})
    )
    assert "extracting memories" not in quiet.context()


def test_viewer_stats_show_extraction(failing: Any, repo: Path) -> None:
    from starlette.testclient import TestClient

    from local_recall.recall import Recall
    from local_recall.settings import Settings
    from local_recall.web.app import create_app
    from local_recall.web.events import ChangeFeed
    from local_recall.web.viewer import Viewer

    failing("sync")
    recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
    viewer = Viewer(recall, lambda query: recall.query(query, use_index=False))
    token = "t" * 43
    app = create_app(viewer, ChangeFeed(), token=token, hosts=frozenset({"testserver"}))
    with TestClient(app, headers={"x-recall-token": token}) as http:
        stats = http.get("/api/stats").json()
    assert stats["extraction"]["failing"] == 1 and REFUSAL in stats["extraction"]["reason"]
    assert stats["extraction"]["summary"].startswith("failing since")


def test_doctor_counts_unreviewed_and_file_scopes_missing_at_head(
    repo: Path, tmp_path: Path
) -> None:
    from local_recall.recall import Recall
    from local_recall.settings import Settings

    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("x = 1\n")
    subprocess.run(["git", "-C", str(repo), "add", "src"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "app"], check=True)
    recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
    recall.add("About the app", "x is one.", scope="file:src/app.py")
    recall.add("About the folder", "Sources live here.", scope="file:src/")
    gone = recall.add("About a file never committed", "Planned.", scope="file:src/planned.py")
    recall.save("Extracted", "An agent saved this.", reviewed=False)
    doctor = subprocess.run(
        [sys.executable, "-m", "local_recall", "doctor"],
        cwd=repo,
        env=clean_env({"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}),
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert "unreviewed: 1 memories wait for a person" in doctor
    lines = [line for line in doctor.splitlines() if "file scopes" in line]
    assert lines == [
        f"[warn] file scopes: 1 memories are scoped to files not at HEAD: {gone.id[:8]} "
        "src/planned.py (`local-recall stale` says what happened to them)"
    ]
