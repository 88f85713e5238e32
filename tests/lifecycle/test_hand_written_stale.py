"""A memory whose `file:` anchor is missing at HEAD is stale whoever wrote it
(a hand-written memory has no `commit:`), it is labelled when injected — checked then, with no
git on the hook's path — and a `file:` scope follows a rename."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from local_recall.lifecycle.staleness import Anchored, CommitChanges, FileChange, find_stale
from local_recall.recall import Recall
from local_recall.settings import Settings
from tests.conftest import CliRunner, clean_env
from tests.hook_runs import hook_env, run_hook

GONE = "11111111-1111-4111-8111-111111111111"
MOVED = "22222222-2222-4222-8222-222222222222"
HERE = "33333333-3333-4333-8333-333333333333"


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def by_hand(root: Path, memory_id: str, subject: str, scope: str) -> None:
    """A memory written by hand: no commit, no provenance."""
    (root / "local-recall" / "episodic-memory" / f"{memory_id}.md").write_text(
        f"---\nsubject: {subject}\napplies_to: {scope}\noccurred_at: 2026-11-01T10:00:00Z\n---\n\n"
        f"{subject}: read this before touching the file.\n"
    )


def test_a_memory_without_commit_is_judged_by_head() -> None:
    history = [CommitChanges("c2", (FileChange("src/b.py", 3, 0, old_path="src/a.py"),))]
    found = find_stale(
        [
            Anchored(GONE, None, ("src/gone.py",)),
            Anchored(MOVED, None, ("src/a.py",)),
            Anchored(HERE, None, ("src/b.py",)),
        ],
        history,
        head_lines={"src/b.py": 40},
    )
    assert found[GONE].detail == "src/gone.py does not exist at HEAD"
    assert found[MOVED].renamed_to == "src/b.py"
    assert HERE not in found  # no commit: a large change since cannot be judged, only presence


def _repo_with_history(repo: Path) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("def sign(): ...\n")
    (repo / "src" / "keep.py").write_text("x = 1\n")
    git(repo, "add", "src")
    git(repo, "commit", "-qm", "start")
    by_hand(repo, GONE, "Serializer helpers live in util", "file:src/util.py")
    by_hand(repo, MOVED, "Signing helpers", "file:src/a.py")
    by_hand(repo, HERE, "Keep the constant", "file:src/keep.py")
    git(repo, "mv", "src/a.py", "src/b.py")
    git(repo, "commit", "-qm", "rename")


def test_stale_lists_hand_written_memories(cli: CliRunner, repo: Path) -> None:
    _repo_with_history(repo)
    listed = {row["id"]: row for row in json.loads(cli("stale", "--json").stdout)}
    assert set(listed) == {GONE, MOVED}
    assert "src/util.py does not exist at HEAD" in listed[GONE]["detail"]
    assert listed[MOVED]["renamed_to"] == "src/b.py"
    assert "stale memories: 2" in cli("doctor").stdout


def test_injection_checks_anchors_without_git_or_a_snapshot(repo: Path) -> None:
    """No daemon, no snapshot ever computed: the session-start context still says the memory
    about a file that is not there is stale."""
    _repo_with_history(repo)
    assert not (repo / "local-recall" / "state" / "lifecycle.json").exists()
    stdin = json.dumps(
        {
            "session_id": "s1",
            "cwd": str(repo),
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
    ).encode()
    ran = run_hook("session-start", stdin, repo, env=hook_env(repo, {"PATH": "/nonexistent"}))
    assert ran.returncode == 0, ran.stderr
    lines = {
        line.split(" ", 3)[2]: line for line in ran.context().splitlines() if line.startswith("- ")
    }
    assert "[stale: src/util.py does not exist" in lines[GONE]
    assert "[stale: src/a.py does not exist" in lines[MOVED]
    assert "stale" not in lines[HERE]
    # the prompt hook too: a file deleted in the working tree a moment ago
    (repo / "src" / "keep.py").unlink()
    prompt = json.dumps(
        {
            "session_id": "s1",
            "cwd": str(repo),
            "hook_event_name": "UserPromptSubmit",
            "prompt": "where do we keep the constant?",
        }
    ).encode()
    asked = run_hook(
        "user-prompt-submit", prompt, repo, env=hook_env(repo, {"PATH": "/nonexistent"})
    )
    assert "Keep the constant [stale: src/keep.py does not exist (checked now)]" in asked.context()


def test_scope_filters_follow_a_rename(cli: CliRunner, repo: Path) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("def sign(): ...\n" * 5)
    git(repo, "add", "src")
    git(repo, "commit", "-qm", "start")
    recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
    made = recall.add(
        "Sign with a timestamp", "TimestampSigner adds the time.", scope="file:src/a.py"
    )
    git(repo, "mv", "src/a.py", "src/b.py")
    git(repo, "commit", "-qm", "rename")
    listed = json.loads(cli("list", "--scope", "file:src/b.py", "--no-global", "--json").stdout)
    assert [row["id"] for row in listed] == [made.id]
    found = json.loads(
        cli("search", "timestamp", "--mode", "text", "--scope", "file:src/b.py", "--json").stdout
    )
    assert [hit["id"] for hit in found] == [made.id]
    assert json.loads(cli("list", "--scope", "file:src/c.py", "--no-global", "--json").stdout) == []
