"""Which repository files an extracted memory is about: its `files` provenance (its anchors for
staleness). Pure: decided from the transcript's tool calls, never from the file system.

A chunk's files are those its turns read or changed (Read, Edit, MultiEdit, Write, NotebookEdit),
changed ones first, inside the repository only, made repo-relative. A memory whose text names
some of them keeps just those; one that names none keeps the chunk's files. Capped at MAX_FILES.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from local_recall.capture.transcripts.model import Turn
from local_recall.memory.model import MAX_FILES, repo_relative

CHANGING_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
READING_TOOLS = frozenset({"Read"})
# Memory files are never anchors: they are the memories themselves.
_OWN_FOLDER = "local-recall/"


def chunk_files(turns: Iterable[Turn], turn_uuids: Sequence[str], root: str) -> tuple[str, ...]:
    """Repo-relative files the chunk's turns changed, then those they only read."""
    wanted = set(turn_uuids)
    changed: dict[str, None] = {}
    read: dict[str, None] = {}
    for turn in turns:
        if turn.uuid not in wanted:
            continue
        for call in turn.tool_calls:
            if call.name in CHANGING_TOOLS:
                target = changed
            elif call.name in READING_TOOLS:
                target = read
            else:
                continue
            rel = repo_relative(call.key_argument, root)
            if rel is not None and not rel.startswith((_OWN_FOLDER, ".git/")):
                target[rel] = None
    ordered = [*changed, *(path for path in read if path not in changed)]
    return tuple(ordered[:MAX_FILES])


def memory_files(files: Sequence[str], text: str) -> tuple[str, ...]:
    """The chunk's files the memory's text names (by path or file name), else all of them."""
    lowered = text.lower()
    named = tuple(
        path for path in files if path.lower() in lowered or _name(path).lower() in lowered
    )
    return named or tuple(files)


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]
