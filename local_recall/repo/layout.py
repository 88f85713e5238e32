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
    # Where the derived files (index/, state/, recall.log) live when the checkout cannot be
    # written: a per-user cache folder keyed by the repository (`resolve_layout`). None: in
    # local-recall/ as usual.
    derived: Path | None = None

    @property
    def recall_dir(self) -> Path:
        return self.root / RECALL_DIRNAME

    @property
    def read_only(self) -> bool:
        """The checkout is not writable here: derived files live in the user's cache."""
        return self.derived is not None

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
        return (self.derived or self.recall_dir) / "index"

    @property
    def state_dir(self) -> Path:
        return (self.derived or self.recall_dir) / "state"

    @property
    def log_path(self) -> Path:
        return (self.derived or self.recall_dir) / "recall.log"

    def is_initialised(self) -> bool:
        return self.recall_dir.is_dir()


def resolve_layout(root: Path, environ: Mapping[str, str]) -> Layout:
    """The layout to use here: `Layout(root)`, or — when this user cannot write
    local-recall/index/ or local-recall/state/ (a shared checkout, a CI workspace owned by
    another user, a read-only volume) — one whose derived files live in the per-user cache
    folder `derived_dir` (created 0700). Memories are still read from the checkout; nothing is
    written into it. Costs a few `access()` calls: the hooks call it on every prompt."""
    layout = Layout(root)
    if not os.path.isdir(layout.recall_dir) or derived_writable(layout):
        return layout
    cache = derived_dir(root, environ)
    if cache is None:
        return layout  # nowhere else to go: writes fail in one line, as before
    if not os.path.isdir(cache):
        try:
            os.makedirs(cache, mode=0o700, exist_ok=True)
        except OSError:
            return layout
    return Layout(root, cache)


def derived_dir(root: Path, environ: Mapping[str, str]) -> Path | None:
    """`$XDG_CACHE_HOME/local-recall/<key>`, else `$HOME/.cache/local-recall/<key>`, with
    `<key>` the first 24 hex digits of SHA-256 of the resolved root (the daemon socket's name
    uses the same). Resolved, so that the writers' symlink checks accept it. None without an
    absolute base."""
    import hashlib  # ~3 ms: only a read-only checkout pays it

    xdg = environ.get("XDG_CACHE_HOME", "")
    home = environ.get("HOME", "")
    if xdg and os.path.isabs(xdg):
        base = Path(xdg)
    elif home and os.path.isabs(home):  # a relative XDG_CACHE_HOME is ignored (XDG spec)
        base = Path(home) / ".cache"
    else:
        return None
    key = hashlib.sha256(os.fsencode(str(root))).hexdigest()[:24]
    return Path(os.path.realpath(base)) / RECALL_DIRNAME / key


def derived_writable(layout: Layout) -> bool:
    """Can this process write local-recall/index/ and state/ (or create them)? A planted
    symlink counts as writable here: it is refused where it is used, never redirected."""
    effective = os.access in os.supports_effective_ids
    for folder in (layout.index_dir, layout.state_dir):
        if os.path.islink(folder):
            continue
        target = folder  # it, or the nearest folder above it that exists (it would be made)
        while not os.path.lexists(target) and target != target.parent:
            target = target.parent
        if not os.access(target, os.W_OK | os.X_OK, effective_ids=effective):
            return False
    return True


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
