"""End to end with the real Claude Code CLI (offline, against FakeAnthropic): Claude Code reads
project hooks only from the folder it starts in, so a session started in a subfolder of a
repository with `init`'s project hooks gets no memories; `init --scope user` serves every
folder (the gate: claude_code/hooks/gate.py), answers once at the root where the project hooks
also run, and does nothing — no output, no hook error — in a repository without local-recall."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from local_recall.capture.transcripts.project_dirs import encode_project_dir
from local_recall.daemon.control import stop_daemon
from local_recall.repo.layout import Layout
from tests.claude_cli import claude_or_fail, lr, offline_env, requires_claude, run_claude
from tests.conftest import clean_env, git_init
from tests.fake_anthropic import FakeAnthropic, default_responder, visible_text

pytestmark = [pytest.mark.slow, requires_claude]

CODEWORD = "KIWI-77"
INDEX_HEADER = "Repository memories worth knowing"
EXTRA = {"LOCAL_RECALL_EXTRACTION_ENABLED": "false", "LOCAL_RECALL_HOOKS_START_DAEMON": "false"}


def ask(home: Path, cwd: Path) -> tuple[str, list[dict[str, object]]]:
    """What the model saw for one `claude -p` in `cwd`, and the hook attachments recorded in
    that session's transcript."""
    with FakeAnthropic(default_responder(text="ok")) as api:
        env = offline_env(home, api.url, extra=EXTRA)
        done = run_claude(claude_or_fail(), ["-p", "Why filelock for dedup?"], cwd=cwd, env=env)
        assert done.returncode == 0, done.stderr
        seen = "\n".join(visible_text(r.body) for r in api.message_requests())
    folder = home / ".claude" / "projects" / encode_project_dir(str(cwd))
    newest = max(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime_ns)
    entries = [json.loads(line) for line in newest.read_text().splitlines()]
    hooks = [
        e["attachment"]
        for e in entries
        if e.get("type") == "attachment" and "hook" in str(e["attachment"].get("type"))
    ]
    return seen, hooks


def test_every_folder_served_once_and_nothing_elsewhere(tmp_path: Path) -> None:
    repo, other = git_init(tmp_path / "repo"), git_init(tmp_path / "other")
    deep = repo / "src" / "deep"
    deep.mkdir(parents=True)
    home = tmp_path / "home"
    base = clean_env({**EXTRA, "CLAUDE_CONFIG_DIR": str(home / ".claude")})
    lr(repo, base, "init")
    lr(
        repo,
        base,
        "add",
        "-s",
        "Use filelock for dedup",
        "-b",
        f"Sessions race. Codeword {CODEWORD}.",
    )
    try:
        # project scope only: the root is served, a subfolder is not (Claude Code's rule)
        seen, _ = ask(home, repo)
        assert seen.count(CODEWORD) == 1 and seen.count(INDEX_HEADER) == 1
        seen, _ = ask(home, deep)
        assert CODEWORD not in seen and INDEX_HEADER not in seen

        lr(repo, base, "init", "--scope", "user")
        seen, _ = ask(home, deep)
        assert seen.count(CODEWORD) == 1 and seen.count(INDEX_HEADER) == 1
        seen, _ = ask(home, repo)  # project and user hooks: still one answer
        assert seen.count(CODEWORD) == 1 and seen.count(INDEX_HEADER) == 1
        seen, hooks = ask(home, other)
        assert CODEWORD not in seen and INDEX_HEADER not in seen
        assert not [h for h in hooks if "error" in str(h.get("type"))], hooks
        assert not (other / "local-recall").exists()
    finally:
        stop_daemon(Layout(repo), wait_seconds=20)
