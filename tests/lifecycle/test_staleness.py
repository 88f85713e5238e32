"""Staleness: pure decisions over git facts (literals), then the same over a real git repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

from local_recall.lifecycle.git_facts import diff_to_head, history, line_counts, repo_state
from local_recall.lifecycle.ranking import LifeFacts, is_elsewhere, rank_factor
from local_recall.lifecycle.staleness import (
    CHANGED,
    DELETED,
    RENAMED,
    Anchored,
    CommitChanges,
    FileChange,
    anchors_of,
    find_stale,
)


def test_anchors_come_from_files_and_a_file_scope() -> None:
    assert anchors_of("file:src/a.py", ["src/b.py", "src/a.py"]) == ("src/a.py", "src/b.py")
    assert anchors_of("file:src/", ["x.py"]) == ("x.py",)  # a folder scope is not an anchor
    assert anchors_of("global", []) == ()


# History newest first: c3 renames a.py to b.py, c2 edits a.py heavily, c1 made the memories.
HISTORY = (
    CommitChanges("c3", (FileChange("b.py", added=0, old_path="a.py"),)),
    CommitChanges("c2", (FileChange("a.py", added=60), FileChange("gone.py", removed=True))),
    CommitChanges("c1", (FileChange("a.py", added=100), FileChange("keep.py", added=10))),
)


def test_rename_is_followed_and_named() -> None:
    stale = find_stale(
        [Anchored("m", "c1", ("a.py",))], HISTORY, head_lines={"b.py": 100, "keep.py": 10}
    )
    assert stale["m"].reason == RENAMED
    assert stale["m"].renamed_to == "b.py"


def test_deleted_anchor() -> None:
    stale = find_stale([Anchored("m", "c1", ("gone.py",))], HISTORY, head_lines={"b.py": 100})
    assert stale["m"].reason == DELETED


def test_changed_relative_to_size_with_threshold() -> None:
    memories = [Anchored("m", "c2", ("b.py",))]
    # At c2 nothing was called b.py yet (c3 renamed a.py to it): the anchor names the file as it is
    # now, which exists and has not changed since c3 -> fresh.
    assert find_stale(memories, HISTORY, head_lines={"b.py": 100}) == {}
    history = (
        CommitChanges("c3", (FileChange("b.py", added=60),)),
        CommitChanges("c2", ()),
    )
    assert find_stale(memories, history, head_lines={"b.py": 100}, threshold=0.5)["m"].reason == (
        CHANGED
    )
    assert find_stale(memories, history, head_lines={"b.py": 100}, threshold=0.7) == {}


def test_a_memory_has_seen_its_own_commit() -> None:
    # c2's 60 changed lines happened AT the memory's commit: not a change since.
    history = (CommitChanges("c2", (FileChange("a.py", added=60),)),)
    assert find_stale([Anchored("m", "c2", ("a.py",))], history, head_lines={"a.py": 100}) == {}


def test_uncommitted_changes_count_for_everyone() -> None:
    history = (CommitChanges("c1", ()),)
    stale = find_stale(
        [Anchored("m", "c1", ("a.py",))],
        history,
        head_lines={},
        uncommitted=(FileChange("a.py", removed=True),),
    )
    assert stale["m"].reason == DELETED


def test_commit_outside_history_uses_its_direct_diff_or_existence() -> None:
    memories = [Anchored("m", "side", ("a.py",)), Anchored("n", "lost", ("x.py",))]
    stale = find_stale(
        memories,
        HISTORY,
        head_lines={"b.py": 100},
        unknown_commits={"side": (FileChange("b.py", old_path="a.py"),)},
    )
    assert stale["m"].reason == RENAMED
    assert stale["n"].reason == DELETED  # x.py does not exist at HEAD


def test_memories_without_anchors_are_never_stale_without_commit_only_if_missing() -> None:
    # a hand-written memory (no commit) about a file not at HEAD is stale too
    memories = [Anchored("a", None, ("gone.py",)), Anchored("b", "c1", ())]
    assert set(find_stale(memories, HISTORY, head_lines={})) == {"a"}
    assert find_stale(memories, HISTORY, head_lines={"gone.py": 3}) == {}


def test_rank_factor_orders_fresh_above_stale_and_unmerged() -> None:
    fresh = rank_factor(LifeFacts())
    assert fresh == 1.0
    assert rank_factor(LifeFacts(stale="x")) < fresh
    assert rank_factor(LifeFacts(elsewhere_branch="feature")) < fresh
    assert rank_factor(LifeFacts(superseded_by="id")) < rank_factor(LifeFacts(stale="x"))


def test_is_elsewhere() -> None:
    assert not is_elsewhere("c1", "main", ancestors=frozenset({"c1"}), current_branch="x")
    assert not is_elsewhere("zz", "topic", ancestors=frozenset(), current_branch="topic")
    assert is_elsewhere("zz", "topic", ancestors=frozenset(), current_branch="main")
    assert not is_elsewhere(None, None, ancestors=frozenset(), current_branch="main")


# --- real git -------------------------------------------------------------------------------------


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    return repo


def test_real_git_rename_delete_change_and_working_tree(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("".join(f"line {i}\n" for i in range(40)))
    (repo / "src" / "b.py").write_text("".join(f"b {i}\n" for i in range(10)))
    (repo / "c.py").write_text("".join(f"c {i}\n" for i in range(10)))
    (repo / "d.py").write_text("d\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one")
    made_at = _git(repo, "rev-parse", "HEAD")
    _git(repo, "mv", "src/a.py", "src/renamed.py")
    _git(repo, "rm", "-q", "src/b.py")
    (repo / "c.py").write_text("".join(f"changed {i}\n" for i in range(10)))
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "two")
    (repo / "d.py").unlink()  # uncommitted

    commits = history(repo)
    assert [c.sha for c in commits][-1] == made_at
    uncommitted = diff_to_head(repo, None) or ()
    anchors = ("src/a.py", "src/b.py", "c.py", "d.py")
    memories = [Anchored(name, made_at, (name,)) for name in anchors]
    counts = line_counts(repo, ["src/renamed.py", "c.py", "d.py", "src/a.py"])
    stale = find_stale(memories, commits, head_lines=counts, uncommitted=uncommitted)
    assert stale["src/a.py"].renamed_to == "src/renamed.py"
    assert stale["src/b.py"].reason == DELETED
    assert stale["c.py"].reason == CHANGED
    assert stale["d.py"].reason == DELETED
    state = repo_state(repo)
    assert state.head == _git(repo, "rev-parse", "HEAD")
    assert state.branch == "main"


def test_line_counts_never_follow_symlinks_out(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    outside = tmp_path / "secret.txt"
    outside.write_text("a\nb\n")
    (repo / "link.py").symlink_to(outside)
    (repo / "ok.py").write_text("x\ny\nz")
    assert line_counts(repo, ["link.py", "ok.py", "../secret.txt", "/etc/passwd"]) == {"ok.py": 3}


def test_not_a_git_repository_gives_empty_facts(tmp_path: Path) -> None:
    assert history(tmp_path) == []
    assert repo_state(tmp_path).head is None


def test_snapshot_round_trip_and_currency(tmp_path: Path) -> None:
    from local_recall.lifecycle import snapshot

    repo = _repo(tmp_path)
    (repo / "a.py").write_text("x\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one")
    made_at = _git(repo, "rev-parse", "HEAD")
    _git(repo, "rm", "-q", "a.py")
    _git(repo, "commit", "-qm", "two")
    memories = [
        snapshot.Provenanced("m", made_at, "main", ("a.py",)),
        snapshot.Provenanced("n", "f" * 40, "topic", ()),
    ]
    snap = snapshot.compute(repo, memories, threshold=0.5)
    assert snap.stale["m"].reason == DELETED
    assert snap.elsewhere == {"n": "topic"}
    assert snap.facts(memories[1]).elsewhere_branch == "topic"
    path = tmp_path / "state" / "lifecycle.json"
    path.parent.mkdir()
    snapshot.save(path, snap)
    assert snapshot.load(path) == snap
    state = repo_state(repo)
    assert snapshot.is_current(snapshot.load(path), state, memories)
    assert not snapshot.is_current(snap, state, memories[:1])
    path.write_text('{"version": 1, "stale": {"m": {"reason": 1}}, "elsewhere": []}')
    assert snapshot.load(path) is None
