"""When has the code made a memory wrong? Pure decisions over git facts (no git runs here).

A memory is anchored to the repo files it is about (its provenance `files` and an `applies_to:
file:<path>` scope). It is **stale** when, since the commit it was made on, an anchor was deleted,
renamed (we say to what), or changed substantially: lines added + deleted relative to the file's
size now, over a threshold from config.

The history is walked once, newest commit first, for all memories together: a memory made at
commit C has seen every change up to and including C, so it is judged just before C's own changes
are folded in. That makes `local-recall stale` one `git log` for the whole store instead of one
`git diff` per memory; `lifecycle.git_facts` runs the git commands.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

DELETED = "deleted"
RENAMED = "renamed"
CHANGED = "changed"


@dataclass(frozen=True, slots=True)
class FileChange:
    """One path's change in one commit, as `git log --numstat -M` reports it."""

    path: str  # the path after the commit
    added: int = 0
    deleted: int = 0
    old_path: str | None = None  # set for a rename (path is the new name)
    removed: bool = False  # the commit deleted `path`


@dataclass(frozen=True, slots=True)
class CommitChanges:
    sha: str
    changes: tuple[FileChange, ...] = ()


@dataclass(frozen=True, slots=True)
class Anchored:
    """What staleness needs of a memory: its id, commit and anchors (repo-relative paths)."""

    id: str
    commit: str | None
    anchors: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Stale:
    reason: str  # DELETED | RENAMED | CHANGED
    anchor: str
    detail: str  # one line a person can act on
    renamed_to: str | None = None

    def to_json(self) -> dict[str, str | None]:
        return {
            "reason": self.reason,
            "anchor": self.anchor,
            "detail": self.detail,
            "renamed_to": self.renamed_to,
        }


@dataclass(slots=True)
class _Track:
    """Where a path (as named at some point in the past) is at HEAD, and how much it changed."""

    head_path: str | None  # None: deleted on the way to HEAD
    changed: int = 0
    renamed: bool = False


@dataclass(slots=True)
class _Walk:
    tracks: dict[str, _Track] = field(default_factory=dict)

    def track(self, path: str) -> _Track:
        found = self.tracks.get(path)
        if found is None:
            found = self.tracks[path] = _Track(head_path=path)
        return found

    def fold(self, commit: CommitChanges) -> None:
        """Step one commit further into the past: names before `commit` map to HEAD through it."""
        for change in commit.changes:
            lines = change.added + change.deleted
            if change.removed:
                # Before this commit the file existed; at HEAD it does not (unless re-added later,
                # which the newer commits already recorded under the same name).
                current = self.tracks.get(change.path)
                if current is None or current.head_path is None:
                    self.tracks[change.path] = _Track(head_path=None, changed=lines)
                continue
            after = self.track(change.path)
            after.changed += lines
            if change.old_path is not None and change.old_path != change.path:
                self.tracks[change.old_path] = _Track(
                    head_path=after.head_path, changed=after.changed, renamed=True
                )
                # Before the rename nothing was called `path`: a memory made earlier that names
                # it was about some other file, which we cannot follow.
                del self.tracks[change.path]


def anchors_of(applies_to: str, files: Iterable[str]) -> tuple[str, ...]:
    """A memory's anchors: the files of its provenance plus a `file:` scope (not a folder)."""
    found: dict[str, None] = {}
    if applies_to.startswith("file:") and not applies_to.endswith("/"):
        found[applies_to.removeprefix("file:")] = None
    for path in files:
        if path and not path.endswith("/"):
            found[path] = None
    return tuple(found)


def judge(
    anchor: str,
    track: _Track | None,
    *,
    exists_at_head: bool,
    head_lines: int,
    threshold: float,
    since: str,
) -> Stale | None:
    """One anchor's verdict from what happened to it since the memory's commit."""
    if track is None:
        track = _Track(head_path=anchor)
    if track.head_path is None or (track.head_path == anchor and not exists_at_head):
        return Stale(DELETED, anchor, f"{anchor} was deleted since {since}")
    if track.renamed and track.head_path != anchor:
        return Stale(
            RENAMED,
            anchor,
            f"{anchor} was renamed to {track.head_path} since {since}",
            renamed_to=track.head_path,
        )
    if track.changed and track.changed / max(head_lines, 1) >= threshold:
        return Stale(
            CHANGED,
            anchor,
            f"{anchor}: {track.changed} lines changed since {since} "
            f"({head_lines} lines now, threshold {threshold:.0%})",
        )
    return None


def missing_at_head(
    anchor: str, track: _Track | None, head_lines: Mapping[str, int]
) -> Stale | None:
    """The verdict on an anchor of a memory with no commit: only whether it is at HEAD."""
    if anchor in head_lines:
        return None
    if track is not None and track.renamed and track.head_path is not None:  # the walk saw it
        return Stale(
            RENAMED,
            anchor,
            f"{anchor} was renamed to {track.head_path}",
            renamed_to=track.head_path,
        )
    return Stale(DELETED, anchor, f"{anchor} does not exist at HEAD")


def find_stale(
    memories: Sequence[Anchored],
    history: Sequence[CommitChanges],
    *,
    head_lines: Mapping[str, int],
    uncommitted: Sequence[FileChange] = (),
    threshold: float = 0.5,
    unknown_commits: Mapping[str, Sequence[FileChange]] | None = None,
) -> dict[str, Stale]:
    """Stale memories by id.

    `history`: the commits reachable from HEAD, newest first (first-parent order, merges shown
    against their first parent, so a merged branch's changes count once). `head_lines`: line
    counts of the files that exist at HEAD (in the working tree); a path missing from it does not
    exist. `uncommitted`: working-tree changes against HEAD, seen by every memory.
    `unknown_commits`: for memories whose commit is not in `history` (made on another branch, or
    history cut short), the direct diff from that commit to HEAD when it could be had; without
    one, only deletion is judged.
    """
    by_commit: dict[str, list[Anchored]] = {}
    for memory in memories:
        if memory.anchors and memory.commit:
            by_commit.setdefault(memory.commit, []).append(memory)
    in_history = {commit.sha for commit in history}
    walk = _Walk()
    walk.fold(CommitChanges("working tree", tuple(uncommitted)))
    result: dict[str, Stale] = {}

    def verdicts(group: Iterable[Anchored], tracks: Mapping[str, _Track], since: str) -> None:
        for memory in group:
            for anchor in memory.anchors:
                verdict = judge(
                    anchor,
                    tracks.get(anchor),
                    exists_at_head=anchor in head_lines,
                    head_lines=head_lines.get(anchor, 0),
                    threshold=threshold,
                    since=since,
                )
                if verdict is not None:
                    result[memory.id] = verdict
                    break

    for commit in history:
        group = by_commit.get(commit.sha)
        if group:
            verdicts(group, walk.tracks, commit.sha[:12])
        walk.fold(commit)
    # Without a commit (written by hand) nothing is known of when it was true, but an anchor
    # that is not at HEAD is wrong whoever wrote the memory: the whole history says whether
    # it was renamed (to what) or is simply gone.
    for memory in memories:
        if memory.anchors and not memory.commit:
            for anchor in memory.anchors:
                found = missing_at_head(anchor, walk.tracks.get(anchor), head_lines)
                if found is not None:
                    result[memory.id] = found
                    break
    for sha, group in by_commit.items():
        if sha in in_history:
            continue
        changes = (unknown_commits or {}).get(sha)
        if changes is None:
            # No way to know what changed: judge existence only.
            verdicts(group, {}, sha[:12])
            continue
        side = _Walk()
        side.fold(CommitChanges("working tree", tuple(uncommitted)))
        side.fold(CommitChanges(sha, tuple(changes)))
        verdicts(group, side.tracks, sha[:12])
    return result
