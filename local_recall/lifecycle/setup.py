"""Setting local-recall up in a repository (`local-recall init`): the folders, config.toml,
.gitignore and .gitattributes that are missing. Idempotent; never overwrites."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from local_recall.errors import StorageError
from local_recall.lifecycle import review
from local_recall.repo.config import Config
from local_recall.repo.config_render import render_default_config
from local_recall.repo.files import check_writable_place, through_symlink, write_text_atomic
from local_recall.repo.layout import Layout, ensure_gitignore


@dataclass(frozen=True, slots=True)
class InitReport:
    root: Path
    created_dirs: tuple[Path, ...]
    wrote_config: bool
    gitignore_added: tuple[str, ...]
    gitattributes_added: tuple[str, ...] = ()


def init_repository(layout: Layout, config: Config) -> InitReport:
    """`Recall.init`: the folders, config.toml, .gitignore and .gitattributes that are missing.
    Everything it may write is checked first: a refusal (a symlink planted in the checkout)
    writes nothing."""
    created = []
    folders = (layout.recall_dir, layout.episodic_dir)
    for folder in folders:
        if through_symlink(folder) or (os.path.lexists(folder) and not folder.is_dir()):
            raise StorageError(f"{folder} is a symbolic link or not a folder (not followed)")
    for path in (
        layout.config_path,
        layout.gitignore_path,
        layout.recall_dir / review.GITATTRIBUTES_NAME,
    ):
        check_writable_place(path)  # a symlink: StorageError before any write
    for folder in folders:
        if not folder.is_dir():
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StorageError(f"cannot create {folder}: {exc.strerror or exc}") from None
            created.append(folder)
    wrote_config = False
    if not os.path.lexists(layout.config_path):
        write_text_atomic(layout.config_path, render_default_config())
        wrote_config = True
    added = ensure_gitignore(layout, summaries_committed=config.summaries.committed)
    attributes = review.ensure_gitattributes(layout.recall_dir)
    return InitReport(layout.root, tuple(created), wrote_config, tuple(added), tuple(attributes))
