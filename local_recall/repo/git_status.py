"""Which of the paths a command changed git would stage: what `init` and `uninstall` name in
the `git add` line they print. A path git ignores, or a file that was deleted before git ever
knew it, is left out (`git add` would fail on it); outside a git checkout every path that
still exists is kept (there is no status to ask)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from local_recall.repo.git_run import git_output as _git


def to_stage(
    root: Path, paths: Sequence[str], environ: Mapping[str, str], folders: Sequence[str] = ()
) -> list[str]:
    """The repository-relative `paths` (files or folders, each once, in order) under which
    `git status` shows a change (untracked, modified or deleted). Paths in one of `folders`
    are named by that folder when every change git shows in it is one of them."""
    wanted = list(dict.fromkeys(paths))
    if not wanted:
        return []
    prefix = _git(root, environ, "rev-parse", "--show-prefix")
    done = _git(root, environ, "status", "--porcelain", "-z", "-uall", "--", *wanted)
    if prefix is None or done is None:
        return [p for p in wanted if os.path.lexists(root / p)]
    # porcelain paths are relative to the work tree's top, `root` may be a folder in it
    shown = [s[len(prefix) :] for s in _status_paths(done) if s.startswith(prefix)]
    staged = [p for p in wanted if any(_under(s, p) for s in shown)]
    return list(dict.fromkeys(_folded(p, staged, shown, folders) for p in staged))


def _under(path: str, place: str) -> bool:
    return path == place or path.startswith(place.rstrip("/") + "/")


def _folded(path: str, staged: Sequence[str], shown: Sequence[str], folders: Sequence[str]) -> str:
    for folder in folders:
        if _under(path, folder) and git_shows_only(folder, staged, shown):
            return folder
    return path


def git_shows_only(folder: str, staged: Sequence[str], shown: Sequence[str]) -> bool:
    """Is every change git shows in `folder` under one of `staged`?"""
    return all(any(_under(s, p) for p in staged) for s in shown if _under(s, folder))


def _status_paths(output: str) -> list[str]:
    """The paths of `git status --porcelain -z` (a rename's source too); relative to the top
    of the work tree, which is the repository root local-recall runs in."""
    fields = output.split("\0")
    found: list[str] = []
    index = 0
    while index < len(fields):
        entry = fields[index]
        index += 1
        if len(entry) < 4:
            continue
        found.append(entry[3:])
        if entry[0] in "RC":  # the source path follows as its own field
            if index < len(fields):
                found.append(fields[index])
            index += 1
    return found
