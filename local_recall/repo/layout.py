"""Where things live: repo discovery, the `local-recall/` folder layout, the managed .gitignore.

Kept free of heavy imports: the hooks import this on every prompt.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from local_recall.errors import InvalidInput
from local_recall.repo.files import write_text_atomic

RECALL_DIRNAME = "local-recall"

# What is derived and machine-local. Nothing else is ignored: memories and config are shared.
GITIGNORE_LINES = (
    "index/",
    "state/",
    "recall.log*",
    ".*.tmp",
)
_GITIGNORE_HEADER = (
    "# Managed by local-recall: derived, machine-local files (memories are committed)"
)


# A NamedTuple, not a dataclass: `dataclasses` pulls in `inspect` (~10 ms), paid on every prompt.
class Layout(NamedTuple):
    root: Path

    @property
    def recall_dir(self) -> Path:
        return self.root / RECALL_DIRNAME

    @property
    def episodic_dir(self) -> Path:
        return self.recall_dir / "episodic-memory"

    @property
    def thinking_dir(self) -> Path:
        return self.recall_dir / "thinking-memory"

    @property
    def config_path(self) -> Path:
        return self.recall_dir / "config.toml"

    @property
    def gitignore_path(self) -> Path:
        return self.recall_dir / ".gitignore"

    @property
    def index_dir(self) -> Path:
        return self.recall_dir / "index"

    @property
    def state_dir(self) -> Path:
        return self.recall_dir / "state"

    @property
    def log_path(self) -> Path:
        return self.recall_dir / "recall.log"

    def is_initialised(self) -> bool:
        return self.recall_dir.is_dir()


def discover_root(explicit: str | None, environ: Mapping[str, str], cwd: Path) -> Path:
    """`--root`, else $LOCAL_RECALL_ROOT, else the git top level of cwd, else cwd.

    The git top level is found by walking up to the nearest `.git` (a folder, or a file in
    worktrees and submodules): same answer as `git rev-parse --show-toplevel`, without a
    subprocess on the hooks' hot path."""
    for value, origin in (
        (explicit, "--root"),
        (environ.get("LOCAL_RECALL_ROOT"), "LOCAL_RECALL_ROOT"),
    ):
        if value:
            path = Path(value).expanduser()
            path = path if path.is_absolute() else cwd / path
            if not path.is_dir():
                raise InvalidInput(f"{origin}: not a directory: {value}")
            return path.resolve()
    start = cwd.resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def ensure_gitignore(layout: Layout) -> list[str]:
    """Add missing managed lines to local-recall/.gitignore; never remove or reorder a person's.

    Returns the lines added."""
    path = layout.gitignore_path
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    present = {line.strip() for line in existing.splitlines()}
    missing = [line for line in GITIGNORE_LINES if line not in present]
    if not missing:
        return []
    parts = [existing]
    if existing and not existing.endswith("\n"):
        parts.append("\n")
    if _GITIGNORE_HEADER not in present:
        parts.append(_GITIGNORE_HEADER + "\n")
    parts.extend(line + "\n" for line in missing)
    write_text_atomic(path, "".join(parts))
    return missing


def claude_config_dir(environ: Mapping[str, str]) -> Path:
    value = environ.get("CLAUDE_CONFIG_DIR")
    if value:
        return Path(value).expanduser()
    home = environ.get("HOME") or os.path.expanduser("~")
    return Path(home) / ".claude"
