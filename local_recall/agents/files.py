"""Carrying out an agent's install plan: each file is read, its new text computed by the pure
plan, written atomically only when it changed (or deleted when nothing of it is left), read back
and checked; a check that fails restores the old text. A file that does not parse stops
everything before anything is written (one line on stderr: the CLI's InvalidInput)."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from local_recall.errors import InvalidInput
from local_recall.repo.files import read_text_nofollow, write_text_atomic

Plan = Callable[[Mapping[str, str | None]], dict[str, str | None]]


@dataclass(frozen=True, slots=True)
class FileChange:
    agent: str
    path: Path
    action: str  # created | updated | unchanged | deleted | absent

    def to_json(self) -> dict[str, str]:
        return {"agent": self.agent, "path": str(self.path), "action": self.action}


def read_texts(root: Path, names: list[str]) -> dict[str, str | None]:
    texts: dict[str, str | None] = {}
    for name in names:
        try:
            texts[name] = read_text_nofollow(root / name)
        except FileNotFoundError:
            texts[name] = None
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput(
                f"{root / name}: cannot read it ({exc}); nothing was changed"
            ) from None
    return texts


def check_text(name: str, text: str) -> None:
    """Raise InvalidInput when `text` does not parse as the file's format says."""
    try:
        if name.endswith(".json"):
            json.loads(text) if text.strip() else None
        elif name.endswith(".toml"):
            tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError, RecursionError) as exc:
        # RecursionError: nested past the parser's limit (a planted `[[[[…`), not a crash
        raise InvalidInput(
            f"{name}: not valid {'JSON' if name.endswith('.json') else 'TOML'} ({exc}); "
            "fix it and run again — nothing was changed"
        ) from None


def apply_plan(agent: str, root: Path, names: list[str], plan: Plan) -> list[FileChange]:
    old = read_texts(root, names)
    for name, text in old.items():
        if text is not None:
            check_text(name, text)
    new = plan(old)
    changes = []
    for name in new:  # the files the plan writes (others were only read)
        before, after = old.get(name), new[name]
        path = root / name
        if before == after:
            changes.append(FileChange(agent, path, "unchanged" if before is not None else "absent"))
            continue
        if after is None:
            path.unlink(missing_ok=True)
            _prune(path.parent, root)
            changes.append(FileChange(agent, path, "deleted"))
            continue
        check_text(name, after)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, after)
        try:
            check_text(name, read_text_nofollow(path))
        except InvalidInput:
            if before is None:
                path.unlink(missing_ok=True)
            else:
                write_text_atomic(path, before)
            raise
        changes.append(FileChange(agent, path, "created" if before is None else "updated"))
    return changes


def _prune(directory: Path, root: Path) -> None:
    """Remove directories we emptied, up to (not including) the repository root."""
    while directory != root and root in directory.parents:
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent
