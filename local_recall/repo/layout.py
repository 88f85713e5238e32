"""Where things live: repo discovery, the `local-recall/` folder layout, the managed .gitignore.

Kept free of heavy imports: the hooks import this on every prompt.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from local_recall.errors import InvalidInput, StorageError
from local_recall.repo.files import read_text_nofollow, write_text_atomic

RECALL_DIRNAME = "local-recall"

# What is derived and machine-local. Nothing else is ignored: memories and config are shared.
GITIGNORE_LINES = (
    "index/",
    "state/",
    "recall.log*",
    ".*.tmp",
)
# Added when `[summaries] committed = false`: session summaries then stay on this machine.
SUMMARIES_IGNORE_LINE = "session-summaries/"
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
    def summaries_dir(self) -> Path:
        """Session summaries: one `<session id>.md` per Claude Code session."""
        return self.recall_dir / "session-summaries"

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
    for folder in (start, *start.parents):
        if _is_git_dir(folder):  # a bare repository, or inside one: there is no checkout
            raise InvalidInput(
                f"{folder} is a git directory without a working tree (a bare repository): "
                "run local-recall in a checkout"
            )
    return start


def _is_git_dir(folder: Path) -> bool:
    return (
        (folder / "HEAD").is_file() and (folder / "objects").is_dir() and (folder / "refs").is_dir()
    )


def recall_dir_problem(layout: Layout) -> str | None:
    """Why local-recall/ cannot be used (a file, a symlink), or None (absent is fine: init)."""
    path = layout.recall_dir
    if os.path.islink(path):
        return f"{path} is a symbolic link; local-recall does not follow it (remove it)"
    if os.path.lexists(path) and not os.path.isdir(path):
        return f"{path} exists but is not a folder (remove or rename it, then run init)"
    return None


def ensure_gitignore(layout: Layout, *, summaries_committed: bool = True) -> list[str]:
    """Add missing managed lines to local-recall/.gitignore; never remove or reorder a person's
    (so setting `[summaries] committed` back to true means deleting that line by hand).

    Returns the lines added."""
    path = layout.gitignore_path
    try:
        existing = read_text_nofollow(path, 1_000_000)  # never through a committed symlink
    except FileNotFoundError:
        existing = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise StorageError(f"cannot read {path}: {exc}") from None
    present = {line.strip() for line in existing.splitlines()}
    wanted = GITIGNORE_LINES if summaries_committed else (*GITIGNORE_LINES, SUMMARIES_IGNORE_LINE)
    missing = [line for line in wanted if line not in present]
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
