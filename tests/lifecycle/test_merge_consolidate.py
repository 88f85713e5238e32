"""After a real `git merge` of two branches that learned the same thing in different words,
`consolidate` finds the pair; `--json` lists it, `--apply` merges exactly that, and the merged-away
memory's hash is remembered like a rejection. Real git, the real CLI, the real embedder."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from local_recall.lifecycle.rejections import read_rejections
from tests.conftest import CliRunner


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def _commit(repo: Path, message: str) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", message)


def _add(cli: CliRunner, subject: str, body: str, *extra: str) -> str:
    done = cli("add", "-s", subject, "-b", body, *extra)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_duplicates_from_two_branches_are_found_and_merged(repo: Path, cli: CliRunner) -> None:
    (repo / "alembic.ini").write_text("[alembic]\n")
    (repo / "env.py").write_text("x = 1\n")
    _commit(repo, "init")
    _git(repo, "branch", "-M", "main")
    _add(cli, "Logs rotate at 5 MB", "recall.log is rotated at 5 MB, keeping three old files.")
    _commit(repo, "shared memory")
    _git(repo, "checkout", "-qb", "alice")
    alice = _add(
        cli,
        "Database migrations run with alembic",
        "Schema changes are alembic migrations; run alembic upgrade head after pulling.",
        "--keyword",
        "alembic",
        "--scope",
        "file:alembic.ini",
    )
    _commit(repo, "alice learns")
    _git(repo, "checkout", "-q", "main")
    _git(repo, "checkout", "-qb", "bob")
    bob = _add(
        cli,
        "Use alembic for schema changes",
        "We change the database schema with alembic migrations; after a pull, run alembic "
        "upgrade head.",
        "--keyword",
        "migrations",
        "--scope",
        "file:env.py",
    )
    other = _add(cli, "Squash merge to main", "Pull requests are squash-merged into main.")
    _commit(repo, "bob learns")
    _git(repo, "checkout", "-q", "main")
    _git(repo, "merge", "-q", "alice")
    _git(repo, "merge", "-q", "--no-edit", "bob")  # different files: no conflict

    interactive = cli("consolidate")  # no terminal and no flag: refused, nothing merged
    assert interactive.returncode == 1
    assert len(interactive.stderr.strip().splitlines()) == 1

    listed = cli("consolidate", "--json", timeout=180)
    assert listed.returncode == 0, listed.stderr
    groups = json.loads(listed.stdout)
    assert len(groups) == 1
    members = {m["id"] for m in groups[0]["memories"]}
    assert members == {alice, bob}
    proposal = groups[0]["proposal"]
    kept, removed = proposal["keep"], proposal["remove"]
    assert {kept, *removed} == {alice, bob}
    assert {"alembic", "migrations"} <= {k.lower() for k in proposal["keywords"]}
    assert {"alembic.ini", "env.py"} <= set(proposal["anchors"])
    gone_hash = json.loads(cli("show", removed[0], "--json").stdout)["content_hash"]

    applied = cli("consolidate", "--apply", "--json", timeout=180)
    assert applied.returncode == 0, applied.stderr
    assert json.loads(applied.stdout) == {"kept": [kept], "removed": removed}
    left = {m["id"] for m in json.loads(cli("list", "--json").stdout)}
    assert kept in left and removed[0] not in left and other in left
    merged = json.loads(cli("show", kept, "--json").stdout)
    assert {"alembic.ini", "env.py"} <= {*merged["files"], merged["applies_to"][5:]}
    assert gone_hash in read_rejections(repo / "local-recall" / "rejected-hashes.txt")
    # One commit carries the merge: the kept file rewritten, the other deleted.
    status = _git(repo, "status", "--porcelain")
    assert f"D  local-recall/episodic-memory/{removed[0]}.md".lstrip("D ") in status
    assert json.loads(cli("consolidate", "--json", timeout=180).stdout) == []
