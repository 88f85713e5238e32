"""A memory a person writes by hand — `id`, `subject`, `applies_to` and a body, no
`occurred_at` nor `content_hash` — is a memory: listed, searched and judged by `stale`, its time
the commit that added it (else the file's mtime); `doctor --fix` writes both down. A file that
cannot be read is named by every command that lists memories, every time; a README.md in the
memory folder is no memory and no failure. Real git, the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import clean_env, git_init

MEMORIES = Path("local-recall") / "episodic-memory"
HAND = "3f1c2a4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b"
UNTRACKED = "7d0e9b1a-2c3d-4e5f-8a6b-7c8d9e0f1a2b"
BROKEN = "aaaaaaaa-5b6d-4e7f-8a9b-0c1d2e3f4a5b"
WRITTEN = (
    f"---\nid: {HAND}\nsubject: Rotate the signing key with scripts/rotate.sh\n"
    "applies_to: file:scripts/rotate.sh\n---\n\n"
    "Run scripts/rotate.sh, never by hand: it updates both the vault and the CDN.\n"
)


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "local_recall", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env=clean_env({"CLAUDE_CONFIG_DIR": str(root.parent / "claude-config")}),
        timeout=120,
    )


def _listed(root: Path) -> dict[str, str]:
    done = _run(root, "list", "--json")
    assert done.returncode == 0, done.stderr
    return {row["id"]: row["occurred_at"] for row in json.loads(done.stdout)}


def test_a_memory_written_by_hand_is_read_and_completed_by_doctor_fix(tmp_path: Path) -> None:
    root = git_init(tmp_path / "repo")
    assert _run(root, "init", "--no-claude").returncode == 0
    folder = root / MEMORIES
    (folder / f"{HAND}.md").write_text(WRITTEN)
    (folder / "README.md").write_text("# Our memories\n\nOne file per fact.\n")
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    dated = {**os.environ, "GIT_AUTHOR_DATE": "2025-01-02T03:04:05Z"}
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "memory"], check=True, env=dated)
    later = folder / f"{UNTRACKED}.md"
    later.write_text(WRITTEN.replace(HAND, UNTRACKED).replace("Rotate", "Renew"))
    os.utime(later, (1_700_000_000, 1_700_000_000))  # 2023-11-14T22:13:20Z

    assert _listed(root) == {
        HAND: "2025-01-02T03:04:05Z",  # the commit that added it
        UNTRACKED: "2023-11-14T22:13:20Z",  # not committed: the file's time
    }
    listed = _run(root, "list")
    assert "skipped" not in listed.stderr and "README" not in listed.stderr, listed.stderr
    stale = _run(root, "stale")
    assert f"{HAND}  Rotate" in stale.stdout and "does not exist at HEAD" in stale.stdout
    found = _run(root, "search", "signing key vault", "--mode", "text", "--json")
    assert HAND in [hit["id"] for hit in json.loads(found.stdout)]
    doctor = _run(root, "doctor").stdout
    assert "[ok  ] not a memory: " in doctor and "README.md: a note about the folder" in doctor
    assert not [line for line in doctor.splitlines() if "[FAIL]" in line and "README" in line]

    fixed = _run(root, "doctor", "--fix").stdout
    assert fixed.count("occurred_at written down") == 2, fixed
    text = (folder / f"{HAND}.md").read_text()
    assert 'occurred_at: "2025-01-02T03:04:05Z"\ncontent_hash: "' in text
    assert text.endswith(WRITTEN.split("---\n", 1)[1])  # what the person wrote, as written
    assert _listed(root)[HAND] == "2025-01-02T03:04:05Z"
    assert (folder / "README.md").read_text() == "# Our memories\n\nOne file per fact.\n"


def test_a_file_that_cannot_be_read_is_named_by_every_listing_every_time(
    tmp_path: Path,
) -> None:
    root = git_init(tmp_path / "repo")
    assert _run(root, "init", "--no-claude").returncode == 0
    (root / MEMORIES / f"{BROKEN}.md").write_text(
        "---\nsubject: nothing below\noccurred_at: 2025-01-01T00:00:00Z\n---\n\n"
    )
    commands = [("list",), ("list",), ("stale",), ("search", "x", "--mode", "text")]
    commands += [("review", "--list"), ("stale", "--json")]
    for args in commands:
        done = _run(root, *args)
        assert done.returncode == 0, (args, done.stderr)
        said = [line for line in done.stderr.splitlines() if f"{BROKEN}.md" in line]
        assert len(said) == 1 and "body is empty" in said[0], (args, done.stderr)
