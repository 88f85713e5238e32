"""Memories shared through git: two branches add, edit, delete and reject memories, then merge
with a real `git merge`. One file per memory makes merges clean except where both sides edited
the same memory; a file left with conflict markers is reported and skipped, never rewritten."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

from local_recall.lifecycle.rejections import read_rejections
from local_recall.memory.model import Memory
from local_recall.recall import Recall
from local_recall.settings import Settings
from tests.conftest import CliRunner, clean_env

WHEN = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=check, capture_output=True, text=True
    )


def _recall(root: Path) -> Recall:
    return Recall.open(settings=Settings(root=root, environ=clean_env()))


def _commit(repo: Path, message: str) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", message)


def _seed(repo: Path, count: int) -> list[Memory]:
    """`count` committed memories on main, a day apart."""
    _git(repo, "checkout", "-qb", "main")
    recall = _recall(repo)
    seeded = [
        recall.add(f"Fact {n}", f"Shared fact number {n}.", occurred_at=WHEN + timedelta(days=n))
        for n in range(count)
    ]
    _commit(repo, "seed")
    return seeded


def _subjects(repo: Path) -> set[str]:
    return {m.subject for m in _recall(repo).list()}


def test_two_branches_add_edit_and_delete_then_merge_cleanly(repo: Path) -> None:
    seeded = _seed(repo, 4)
    _git(repo, "checkout", "-qb", "ana")
    ana = _recall(repo)
    ana.add("Ana learned", "Ana's new fact.")
    ana.update(seeded[0].id, subject="Fact 0, sharpened by Ana")
    ana.delete(seeded[1].id)
    _commit(repo, "ana")

    _git(repo, "checkout", "-q", "main")
    _git(repo, "checkout", "-qb", "bo")
    bo = _recall(repo)
    bo.add("Bo learned", "Bo's new fact.")
    bo.update(seeded[2].id, body="Shared fact number 2, corrected by Bo.")
    bo.delete(seeded[3].id)
    _commit(repo, "bo")

    merged = _git(repo, "merge", "--no-edit", "ana", check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    recall = _recall(repo)
    assert recall.problems() == ()
    assert _subjects(repo) == {"Fact 0, sharpened by Ana", "Fact 2", "Ana learned", "Bo learned"}
    assert recall.get(seeded[2].id).body == "Shared fact number 2, corrected by Bo."


def test_both_sides_editing_one_memory_conflict_and_the_file_is_reported_not_touched(
    repo: Path, cli: CliRunner
) -> None:
    seeded = _seed(repo, 2)
    contested = seeded[0]
    _git(repo, "checkout", "-qb", "ana")
    _recall(repo).update(contested.id, body="Ana's version of fact 0.")
    _commit(repo, "ana")
    _git(repo, "checkout", "-q", "main")
    _recall(repo).update(contested.id, body="Main's version of fact 0.")
    _recall(repo).add("Main only", "Added on main while Ana worked.")
    _commit(repo, "main")

    merged = _git(repo, "merge", "--no-edit", "ana", check=False)
    assert merged.returncode != 0 and "CONFLICT" in merged.stdout
    path = contested.path
    assert path is not None
    conflicted = path.read_bytes()
    assert b"<<<<<<<" in conflicted and b">>>>>>>" in conflicted

    recall = _recall(repo)
    (problem,) = recall.problems()
    assert problem.path == path and problem.reason.startswith("unresolved merge conflict")
    assert _subjects(repo) == {"Fact 1", "Main only"}  # skipped, the others still listed
    hits = recall.search("version of fact", sync=False, use_index=False)
    assert contested.id not in {hit.id for hit in hits}

    listed = cli("list", "--json")
    assert listed.returncode == 0 and contested.id not in listed.stdout
    doctor = cli("doctor")
    assert "unresolved merge conflict" in doctor.stdout + doctor.stderr
    assert cli("check", str(path)).returncode == 1
    _git(repo, "add", str(path))  # marked resolved without resolving it: the hook refuses it
    checked = cli("check")
    assert checked.returncode == 1 and checked.stdout.count("\n") == 1
    assert "unresolved merge conflict" in checked.stdout and path.name in checked.stdout
    assert path.read_bytes() == conflicted  # never dropped or rewritten

    # resolving it by hand makes it a memory again
    path.write_text(
        path.read_text().split("<<<<<<<")[0]
        + _git(repo, "show", f"ana:{path.relative_to(repo)}").stdout.split("---\n", 2)[1]
        + "---\nAna's version of fact 0.\n"
    )
    assert _recall(repo).problems() == ()
    assert _recall(repo).get(contested.id).body == "Ana's version of fact 0."


def test_rejections_on_two_branches_merge_without_conflict(repo: Path, cli: CliRunner) -> None:
    seeded = _seed(repo, 3)
    assert (repo / "local-recall" / ".gitattributes").read_text() == (
        "rejected-hashes.txt merge=union\n"
    )
    _git(repo, "checkout", "-qb", "ana")
    assert cli("review", "reject", seeded[0].id).returncode == 0
    _commit(repo, "ana rejects fact 0")
    _git(repo, "checkout", "-q", "main")
    assert cli("review", "reject", seeded[1].id).returncode == 0
    _commit(repo, "main rejects fact 1")

    merged = _git(repo, "merge", "--no-edit", "ana", check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    recall = _recall(repo)
    assert read_rejections(recall.rejected_path) == {
        seeded[0].content_hash,
        seeded[1].content_hash,
    }
    assert "<<<<<<<" not in recall.rejected_path.read_text()
    assert _subjects(repo) == {"Fact 2"}
    assert json.loads(cli("check", "--json", str(recall.rejected_path.parent)).stdout) == [
        {"path": str(seeded[2].path), "problems": []}
    ]


def test_without_the_union_driver_the_same_rejections_conflict(repo: Path) -> None:
    """What `init`'s .gitattributes prevents (so the test above proves something)."""
    seeded = _seed(repo, 2)
    (repo / "local-recall" / ".gitattributes").unlink()
    _commit(repo, "no attributes")
    _git(repo, "checkout", "-qb", "ana")
    _recall(repo).reject([seeded[0].id])
    _commit(repo, "ana")
    _git(repo, "checkout", "-q", "main")
    _recall(repo).reject([seeded[1].id])
    _commit(repo, "main")
    assert _git(repo, "merge", "--no-edit", "ana", check=False).returncode != 0
