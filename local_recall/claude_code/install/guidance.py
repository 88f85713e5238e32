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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from local_recall.repo.files import write_text_atomic

AGENT_FILES = Path(__file__).resolve().parent.parent / "agent_files"  # package data
MAX_FILE_BYTES = 1_000_000
KEPT = "kept (differs)"


@dataclass(frozen=True, slots=True)
class GuidanceChange:
    path: Path
    action: str  # created | unchanged | KEPT | removed | absent

    def to_json(self) -> dict[str, str]:
        return {"path": str(self.path), "what": "agent guidance", "action": self.action}


def shipped_files(source: Path = AGENT_FILES) -> dict[str, str]:
    """Relative path → text of every skill and command we ship."""
    found: dict[str, str] = {}
    for path in sorted([*source.glob("skills/*/SKILL.md"), *source.glob("commands/*.md")]):
        found[path.relative_to(source).as_posix()] = path.read_text(encoding="utf-8")
    return found


def guidance_dir(scope: str, root: Path, claude_config_dir: Path) -> Path:
    return claude_config_dir if scope == "user" else root / ".claude"


def plan_guidance(
    shipped: Mapping[str, str], present: Mapping[str, str | None], *, adding: bool
) -> dict[str, str]:
    """What to do with each shipped file, given what is on disk (None: absent; a file we could
    not read counts as differing). Pure."""
    actions: dict[str, str] = {}
    for name, ours in shipped.items():
        current = present.get(name)
        if current is None:
            actions[name] = "created" if adding else "absent"
        elif current == ours:
            actions[name] = "unchanged" if adding else "removed"
        else:
            actions[name] = KEPT
    return actions


def install_guidance(target: Path) -> list[GuidanceChange]:
    shipped = shipped_files()
    actions = plan_guidance(shipped, _present(target, shipped), adding=True)
    for name, action in actions.items():
        if action == "created":
            write_text_atomic(target / name, shipped[name])
    return [GuidanceChange(target / name, action) for name, action in actions.items()]


def uninstall_guidance(target: Path) -> list[GuidanceChange]:
    shipped = shipped_files()
    actions = plan_guidance(shipped, _present(target, shipped), adding=False)
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


def _present(target: Path, shipped: Mapping[str, str]) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for name in shipped:
        path = target / name
        folders = [target / "/".join(name.split("/")[:n]) for n in range(1, name.count("/") + 1)]
        if path.is_symlink() or any(folder.is_symlink() for folder in folders):
            found[name] = "\0symlink"  # never written through, never deleted
            continue
        try:
            with path.open("rb") as handle:
                data = handle.read(MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            found[name] = None
            continue
        except OSError:
            found[name] = "\0unreadable"
            continue
        found[name] = data.decode("utf-8", errors="replace")
    return found
