"""Which of another agent's session files belong to a repository.

* Codex: `<codex home>/sessions/**/rollout-*.jsonl`; the first line (`session_meta`) names the
  session's `cwd`.
* Gemini CLI: `<gemini home>/tmp/<project>/chats/session-*.jsonl`; the project folder's
  `.project_root` file names the root, and every chat header carries `projectHash`, the sha256 of
  that root (either identifies the repository).
* Copilot CLI: `<copilot home>/session-state/<id>/events.jsonl`; `session.start` names the `cwd`
  and `gitRoot`.

A file is the repository's when that directory is one of `roots` or lies inside one (worktrees are
passed as roots, as for Claude Code). Only the first lines are read (bounded), never a whole log.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from local_recall.capture.transcripts.model import TranscriptFile

_HEAD_LINES = 8
_HEAD_BYTES = 1 << 20


def _head_entries(path: Path) -> list[dict[str, object]]:
    found: list[dict[str, object]] = []
    try:
        with path.open("rb") as stream:
            for _ in range(_HEAD_LINES):
                line = stream.readline(_HEAD_BYTES)
                if not line:
                    break
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict):
                    found.append(entry)
    except OSError:
        return []
    return found


def _inside(directory: object, roots: Sequence[Path]) -> bool:
    if not isinstance(directory, str) or not directory:
        return False
    path = Path(directory)
    return any(path == root or root in path.parents for root in roots)


def _file(path: Path, session_id: str) -> TranscriptFile | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return TranscriptFile(path, session_id, False, None, stat.st_size, stat.st_mtime_ns)


def _all_roots(roots: Iterable[Path]) -> list[Path]:
    found: list[Path] = []
    for root in roots:
        for form in (root, root.resolve()):
            if form not in found:
                found.append(form)
    return found


def codex_rollouts(codex_home: Path, roots: Iterable[Path]) -> list[TranscriptFile]:
    wanted = _all_roots(roots)
    found = []
    for path in sorted((codex_home / "sessions").rglob("rollout-*.jsonl")):
        for entry in _head_entries(path)[:1]:
            payload = entry.get("payload")
            if not isinstance(payload, dict) or entry.get("type") != "session_meta":
                continue
            if _inside(payload.get("cwd"), wanted):
                item = _file(path, str(payload.get("id") or path.stem))
                if item is not None:
                    found.append(item)
    return found


def gemini_chats(gemini_home: Path, roots: Iterable[Path]) -> list[TranscriptFile]:
    wanted = _all_roots(roots)
    hashes = {hashlib.sha256(str(root).encode()).hexdigest() for root in wanted}
    found = []
    for chats in sorted((gemini_home / "tmp").glob("*/chats")):
        marker = chats.parent / ".project_root"
        try:
            named = marker.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            named = ""
        for path in sorted(chats.glob("session-*.jsonl")):
            head = _head_entries(path)[:1]
            header = head[0] if head else {}
            if not (_inside(named, wanted) or header.get("projectHash") in hashes):
                continue
            item = _file(path, str(header.get("sessionId") or path.stem))
            if item is not None:
                found.append(item)
    return found


def copilot_sessions(copilot_home: Path, roots: Iterable[Path]) -> list[TranscriptFile]:
    wanted = _all_roots(roots)
    found = []
    for path in sorted((copilot_home / "session-state").glob("*/events.jsonl")):
        for entry in _head_entries(path):
            data = entry.get("data")
            if entry.get("type") != "session.start" or not isinstance(data, dict):
                continue
            context = data.get("context")
            cwd = context.get("cwd") if isinstance(context, dict) else None
            git_root = context.get("gitRoot") if isinstance(context, dict) else None
            if _inside(cwd, wanted) or _inside(git_root, wanted):
                item = _file(path, str(data.get("sessionId") or path.parent.name))
                if item is not None:
                    found.append(item)
            break
    return found
