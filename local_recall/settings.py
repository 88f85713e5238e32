"""`Settings`: the one seam for isolation. Everything that touches the user's machine — the repo
root, the environment, the executable search PATH, the clock, new ids, the embedder — comes from
here. Adapters build one (`Settings.discover`) once per process and pass it down; tests build one
instead of patching globals. Lower layers receive the plain values they need, never `Settings`."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from local_recall.memory.model import new_memory_id
from local_recall.repo.config import Config
from local_recall.repo.config_trust import user_config_path
from local_recall.repo.layout import Layout, claude_config_dir, discover_root, resolve_layout
from local_recall.search.embedders import Embedder, EmbedderFactory, embedder_from_config


def utc_now() -> datetime:
    """The default clock."""
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Settings:
    """The one seam for isolation: everything that touches the user's machine comes from here,
    so a test builds one Settings instead of patching globals."""

    root: Path
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    clock: Callable[[], datetime] = utc_now
    new_id: Callable[[], str] = new_memory_id
    # Makes the embedder from the config; None = the one [embedder] names, $OLLAMA_HOST read
    # from `environ`. Tests pass one that returns a shared instance.
    embedder_factory: EmbedderFactory | None = None

    def __post_init__(self) -> None:
        # Resolved once: a symlink inside the repository is then recognisable as one
        # (repo/files.py refuses to follow it), the user's own path to the repo is not.
        object.__setattr__(self, "root", Path(self.root).resolve())

    def make_embedder(self, config: Config) -> Embedder:
        if self.embedder_factory is not None:
            return self.embedder_factory(config)
        return embedder_from_config(config.embedder, self.environ)

    @property
    def user_config_path(self) -> Path:
        """The user's own config (machine keys such as a remote Ollama host go here, never in
        the committed config.toml): docs/configuration.md."""
        return user_config_path(self.environ)

    @property
    def layout(self) -> Layout:
        """Where this repository's files are for this user: derived files (index, state, log)
        in the checkout, or in the user's cache folder when the checkout is not writable
        (`XDG_CACHE_HOME` / `HOME` from `environ`; repo/layout.py)."""
        return resolve_layout(self.root, self.environ)

    @property
    def claude_config_dir(self) -> Path:
        return claude_config_dir(self.environ)

    def which(self, name: str) -> str | None:
        """Find an executable on this environment's PATH (not the process's)."""
        return shutil.which(name, path=self.environ.get("PATH", os.defpath))

    @classmethod
    def discover(
        cls,
        root: str | Path | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> Settings:
        env = dict(os.environ) if environ is None else dict(environ)
        found = discover_root(None if root is None else str(root), env, cwd or Path.cwd())
        return cls(root=found, environ=env)
