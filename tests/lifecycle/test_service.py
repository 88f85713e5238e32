"""Staleness and branches end to end: real git repositories, the library facade, the CLI, and the
flags search results carry to the CLI, MCP rows and the hooks' context."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from local_recall.context.notes import Note
from local_recall.context.prompt import fill_budget, hit_block
from local_recall.context.service import hit_note
from local_recall.mcp_server.shapes import hit_row
from local_recall.recall import Recall
from local_recall.search.query import SearchQuery
from local_recall.settings import Settings
from tests.conftest import CliRunner, clean_env


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def _commit(repo: Path, message: str) -> str:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", message)
    return _git(repo, "rev-parse", "HEAD")


def _open(repo: Path) -> Recall:
    return Recall.open(settings=Settings(root=repo, environ=clean_env()))


def _files_only(recall: Recall, text: str) -> list[tuple[str, str | None, str | None]]:
    result = recall.query(SearchQuery(text), sync=False, use_index=False)
    return [(hit.subject, hit.stale, hit.branch) for hit in result.hits]


def test_rename_makes_a_memory_stale_and_still_true_follows_it(repo: Path) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("".join(f"line {i}\n" for i in range(50)))
    (repo / "src" / "big.py").write_text("".join(f"line {i}\n" for i in range(10)))
    _commit(repo, "code")
    recall = _open(repo)
    renamed = recall.add("loader parses config", "src/a.py parses it.", scope="file:src/a.py")
    changed = recall.add("big module layout", "src/big.py is small.", scope="file:src/big.py")
    fresh = recall.add("loader parses config quickly", "It is fast.", scope="global")
    assert renamed.commit == _git(repo, "rev-parse", "HEAD")
    _commit(repo, "memories")
    assert recall.stale_memories() == []
    _git(repo, "mv", "src/a.py", "src/b.py")
    (repo / "src" / "big.py").write_text("".join(f"new {i}\n" for i in range(30)))
    _commit(repo, "rename and rewrite")

    found = {m.id: s for m, s in recall.stale_memories()}
    assert found[renamed.id].reason == "renamed" and found[renamed.id].renamed_to == "src/b.py"
    assert found[changed.id].reason == "changed"
    assert fresh.id not in found
    # The search path reads the saved snapshot: flags, and the stale one ranks below the fresh.
    hits = _files_only(recall, "loader parses config")
    assert hits[0] == ("loader parses config quickly", None, None)
    assert hits[1][0] == "loader parses config" and "renamed to src/b.py" in (hits[1][1] or "")

    again = recall.mark_still_true(renamed.id)
    assert again.applies_to == "file:src/b.py"
    assert again.commit == _git(repo, "rev-parse", "HEAD")
    assert renamed.id not in {m.id for m, _ in recall.stale_memories()}


def test_threshold_comes_from_config(repo: Path) -> None:
    (repo / "a.py").write_text("".join(f"line {i}\n" for i in range(100)))
    _commit(repo, "code")
    memory = _open(repo).add("about a", "a.py things.", scope="file:a.py")
    _commit(repo, "memory")
    (repo / "a.py").write_text("".join(f"line {i}\n" for i in range(80)) + "new\n" * 20)
    _commit(repo, "edit 40 of 100 lines")
    assert _open(repo).stale_memories(refresh=True) == []
    config = repo / "local-recall" / "config.toml"
    text = config.read_text().replace("# stale_changed_ratio = 0.5", "stale_changed_ratio = 0.3")
    config.write_text(text)
    assert [m.id for m, _ in _open(repo).stale_memories(refresh=True)] == [memory.id]


def test_unmerged_branch_memory_is_labelled_and_ranks_lower(repo: Path) -> None:
    (repo / "README").write_text("x\n")
    _commit(repo, "init")
    _git(repo, "branch", "-M", "main")
    recall = _open(repo)
    recall.add("retry policy of the loader", "The loader retries twice.")
    _commit(repo, "main memory")
    _git(repo, "checkout", "-qb", "topic")
    (repo / "README").write_text("y\n")
    _commit(repo, "topic work")
    recall.add("retry policy of the loader on topic", "On topic the loader retries twice.")
    _commit(repo, "topic memory")
    _git(repo, "checkout", "-q", "main")
    _git(repo, "merge", "-q", "--squash", "topic")  # the file arrives, its commit does not
    _commit(repo, "squash")
    snapshot = recall.lifecycle_snapshot()
    assert list(snapshot.elsewhere.values()) == ["topic"]
    hits = _files_only(recall, "retry policy of the loader on topic")
    labelled = {subject: branch for subject, _, branch in hits}
    assert labelled["retry policy of the loader on topic"] == "topic"
    assert labelled["retry policy of the loader"] is None


def test_flags_reach_mcp_rows_and_hook_context(repo: Path) -> None:
    (repo / "a.py").write_text("x\n")
    _commit(repo, "code")
    recall = _open(repo)
    recall.add("about module a", "a.py does the thing.", scope="file:a.py")
    _commit(repo, "memory")
    _git(repo, "rm", "-q", "a.py")
    _commit(repo, "delete")
    recall.lifecycle_snapshot()
    hit = recall.query(SearchQuery("module a thing"), sync=False, use_index=False).hits[0]
    row = hit_row(hit)
    assert row["stale"].startswith("a.py was deleted") and "branch" not in row
    note = hit_note(hit)
    assert note.stale == row["stale"]
    assert "[stale: a.py was deleted" in hit_block(note)


def test_order_not_threshold_uses_the_lifecycle() -> None:
    stale = Note("s", "stale one", "2026-01-01T00:00:00Z", score=0.50, stale="a.py was deleted")
    fresh = Note("f", "fresh one", "2026-01-01T00:00:00Z", score=0.45)
    far = Note("b", "branch one", "2026-01-01T00:00:00Z", score=0.36, branch="topic")
    chosen = fill_budget([stale, fresh, far], budget_tokens=1500, min_score=0.36)
    assert [n.id for n in chosen.shown] == ["f", "s", "b"]  # 0.45 > 0.5 × 0.8; b still shown


def test_hook_path_never_computes(repo: Path) -> None:
    """No snapshot saved: the search path shows no flags rather than running git."""
    (repo / "a.py").write_text("x\n")
    _commit(repo, "code")
    recall = _open(repo)
    recall.add("about module a", "a.py does the thing.", scope="file:a.py")
    _commit(repo, "memory")
    _git(repo, "rm", "-q", "a.py")
    _commit(repo, "delete")
    assert not recall.lifecycle.snapshot_path.exists()
    assert _files_only(recall, "module a thing") == [("about module a", None, None)]
    assert not recall.lifecycle.snapshot_path.exists()


def test_cli_stale_still_true_and_doctor(repo: Path, cli: CliRunner) -> None:
    (repo / "a.py").write_text("x\n")
    _commit(repo, "code")
    added = cli("add", "-s", "about a", "-b", "a.py body", "--scope", "file:a.py")
    memory_id = added.stdout.strip()
    _commit(repo, "memory")
    _git(repo, "mv", "a.py", "b.py")
    _commit(repo, "rename")
    listed = json.loads(cli("stale", "--json").stdout)
    assert [(m["id"], m["reason"], m["renamed_to"]) for m in listed] == [
        (memory_id, "renamed", "b.py")
    ]
    assert "stale: a.py was renamed to b.py" in cli("stale").stdout
    doctor = cli("doctor", "--json")
    checks = {c["name"]: c for c in json.loads(doctor.stdout)}
    assert checks["stale memories"]["status"] == "warn"
    assert "1 memories" in checks["stale memories"]["detail"]
    assert "[stale: a.py was renamed to b.py" in cli("search", "about a").stdout
    done = cli("review", "still-true", memory_id)
    assert done.returncode == 0, done.stderr
    assert cli("stale").stdout.strip() == "no stale memories"
    bad = cli("review", "still-true", "not-an-id")
    assert bad.returncode != 0 and len(bad.stderr.strip().splitlines()) == 1


def test_daemon_refresh_saves_the_snapshot_the_queries_read(repo: Path) -> None:
    from local_recall.daemon.control import DaemonLock
    from local_recall.daemon.runtime import Daemon

    (repo / "a.py").write_text("x\n")
    _commit(repo, "code")
    recall = _open(repo)
    memory = recall.add("about module a", "a.py does the thing.", scope="file:a.py")
    _commit(repo, "memory")
    _git(repo, "rm", "-q", "a.py")  # uncommitted: the working tree counts too
    daemon = Daemon(recall, DaemonLock(recall.layout))
    daemon._refresh_lifecycle()
    assert memory.commit is not None
    expected = f"a.py was deleted since {memory.commit[:12]}"
    assert _files_only(recall, "module a thing")[0][1] == expected
