"""The agent guidance `init` installs beside the hooks: Claude Code skills
(`skills/<name>/SKILL.md`) and slash commands (`commands/<name>.md`), shipped in
`claude_code/agent_files/` (the plugin in `hooks/` ships the same files; a test keeps them
equal). docs/agent-guidance.md.

Where: `<repo>/.claude/` for the project and local scopes (Claude Code has no personal folder
inside a repository), `$CLAUDE_CONFIG_DIR` (`~/.claude/`) for the user scope.

Exact and safe: install writes a file only where none exists; a file that differs from ours
(a person edited it, or it is someone else's with the same name) is kept and reported;
uninstall removes only files identical to ours, then the folders it leaves empty.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from local_recall.repo.files import write_text_atomic

AGENT_FILES = Path(__file__).resolve().parent.parent / "agent_files"  # package data
MAX_FILE_BYTES = 1_000_000
KEPT = "kept (differs)"  # a file of that name exists and is not ours


@dataclass(frozen=True, slots=True)
class Blocked:
    """A shipped file's place that is not written nor removed: a symbolic link on the way, a
    file where a folder should be, a file that cannot be read or a folder we cannot write."""

    reason: str


Present = str | Blocked | None  # the text on disk, why it cannot be touched, or absent


@dataclass(frozen=True, slots=True)
class GuidanceChange:
    path: Path
    # created | unchanged | KEPT | removed | absent | "not written (why)" | "kept (why)"
    action: str

    def to_json(self) -> dict[str, str]:
        return {"path": str(self.path), "what": "agent guidance", "action": self.action}


def is_change(action: str) -> bool:
    """Did this action change a file?"""
    return action in ("created", "removed")


def shipped_files(source: Path = AGENT_FILES) -> dict[str, str]:
    """Relative path → text of every skill and command we ship."""
    found: dict[str, str] = {}
    for path in sorted([*source.glob("skills/*/SKILL.md"), *source.glob("commands/*.md")]):
        found[path.relative_to(source).as_posix()] = path.read_text(encoding="utf-8")
    return found


def guidance_dir(scope: str, root: Path, claude_config_dir: Path) -> Path:
    return claude_config_dir if scope == "user" else root / ".claude"


def plan_guidance(
    shipped: Mapping[str, str], present: Mapping[str, Present], *, adding: bool
) -> dict[str, str]:
    """What to do with each shipped file, given what is on disk. Pure. "kept (differs)" only
    for a file that exists with other text; a place that cannot be used says why."""
    actions: dict[str, str] = {}
    for name, ours in shipped.items():
        current = present.get(name)
        if isinstance(current, Blocked):
            actions[name] = f"{'not written' if adding else 'kept'} ({current.reason})"
        elif current is None:
            actions[name] = "created" if adding else "absent"
        elif current == ours:
            actions[name] = "unchanged" if adding else "removed"
        else:
            actions[name] = KEPT
    return actions


def plan_install_guidance(target: Path) -> list[GuidanceChange]:
    """What `write_guidance` will do; reads only."""
    shipped = shipped_files()
    actions = plan_guidance(shipped, _present(target, shipped, adding=True), adding=True)
    return [GuidanceChange(target / name, action) for name, action in actions.items()]


def write_guidance(planned: list[GuidanceChange]) -> None:
    shipped = shipped_files()
    for change in planned:
        if change.action == "created":
            name = _shipped_name(change.path, shipped)
            write_text_atomic(change.path, shipped[name])


def _shipped_name(path: Path, shipped: Mapping[str, str]) -> str:
    return next(name for name in shipped if path.as_posix().endswith("/" + name))


def install_guidance(target: Path) -> list[GuidanceChange]:
    planned = plan_install_guidance(target)
    write_guidance(planned)
    return planned


def uninstall_guidance(target: Path) -> list[GuidanceChange]:
    shipped = shipped_files()
    actions = plan_guidance(shipped, _present(target, shipped, adding=False), adding=False)
    for name, action in actions.items():
        if action == "removed":
            with contextlib.suppress(FileNotFoundError):
                (target / name).unlink()
    for name in sorted(shipped, key=lambda n: -n.count("/")):
        folder = (target / name).parent
        while folder != target and folder.is_relative_to(target):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty
            folder = folder.parent
    return [GuidanceChange(target / name, action) for name, action in actions.items()]


def _present(target: Path, shipped: Mapping[str, str], *, adding: bool) -> dict[str, Present]:
    return {name: _place(target, name, adding=adding) for name in shipped}


def _place(target: Path, name: str, *, adding: bool) -> Present:
    """What is at `target/name`: its text, None, or why it is left alone."""
    blocked = _blocked_way(target, name)
    if blocked is not None:
        return blocked
    path = target / name
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        if adding and not _can_create(path):
            return Blocked("cannot write there: permission denied")
        return None
    except OSError as exc:
        return Blocked(f"cannot read it: {exc.strerror or exc}")
    return data.decode("utf-8", errors="replace")


def _blocked_way(target: Path, name: str) -> Blocked | None:
    """A symbolic link or a non-folder on the way to `target/name`, or the file a link."""
    parts = name.split("/")
    for folder in [target, *(target.joinpath(*parts[:n]) for n in range(1, len(parts)))]:
        if folder.is_symlink():
            return Blocked(f"{folder} is a symbolic link")
        if os.path.lexists(folder) and not folder.is_dir():
            return Blocked(f"{folder} is not a folder")
    if (target / name).is_symlink():
        return Blocked("a symbolic link")
    return None


def _can_create(path: Path) -> bool:
    """Can this process create `path` (its nearest existing folder is writable)?"""
    folder = path.parent
    while not os.path.lexists(folder) and folder != folder.parent:
        folder = folder.parent
    return os.access(folder, os.W_OK | os.X_OK)
