"""`local-recall doctor`: checks of the configuration, memory files and environment.

Each check is a small function returning `Check` values; the CLI only prints them. A check never
raises: what it cannot verify it reports."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from local_recall.config import load_config
from local_recall.errors import RecallError
from local_recall.layout import GITIGNORE_LINES, Layout

OK, WARN, FAIL = "ok", "warn", "fail"


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    status: str  # ok | warn | fail
    detail: str

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "detail": self.detail}


def check_layout(layout: Layout) -> Iterable[Check]:
    if not layout.recall_dir.is_dir():
        yield Check(
            "repository", FAIL, f"{layout.recall_dir} does not exist: run `local-recall init`"
        )
        return
    yield Check("repository", OK, str(layout.root))
    if layout.gitignore_path.exists():
        present = {line.strip() for line in layout.gitignore_path.read_text("utf-8").splitlines()}
        missing = [line for line in GITIGNORE_LINES if line not in present]
        if missing:
            yield Check(
                ".gitignore", WARN, f"missing {', '.join(missing)}: run `local-recall init`"
            )
        else:
            yield Check(".gitignore", OK, "derived files are ignored")
    else:
        yield Check(".gitignore", WARN, "local-recall/.gitignore missing: run `local-recall init`")


def check_config(layout: Layout, environ: dict[str, str]) -> Iterable[Check]:
    try:
        config = load_config(layout.config_path, environ)
    except RecallError as exc:
        yield Check("config", FAIL, str(exc))
        return
    where = str(config.source) if config.source else "defaults (no config.toml)"
    yield Check("config", OK, where)


def check_memory_files(
    open_scan: Callable[[], tuple[int, list[tuple[Path, str]], int]],
) -> Iterable[Check]:
    """`open_scan` returns (count, [(path, reason)], stale_hash_count)."""
    try:
        count, problems, stale = open_scan()
    except RecallError as exc:
        yield Check("memory files", FAIL, str(exc))
        return
    yield Check("memory files", OK, f"{count} memories")
    for path, reason in problems:
        yield Check("unreadable file", FAIL, f"{path}: {reason} (left unchanged)")
    if stale:
        yield Check(
            "hand edits",
            OK,
            f"{stale} file(s) edited by hand: their content_hash is recomputed "
            "on read and rewritten on the next `local-recall edit`",
        )


def check_python() -> Iterable[Check]:
    version = ".".join(map(str, sys.version_info[:3]))
    yield Check(
        "python", OK if sys.version_info >= (3, 11) else FAIL, f"{version} ({sys.executable})"
    )
    for module in (
        "frontmatter",
        "lancedb",
        "ollama",
        "yake",
        "rapidfuzz",
        "watchdog",
        "mcp",
        "onnxruntime",
        "tokenizers",
        "detect_secrets",
        "filelock",
    ):
        if importlib.util.find_spec(module) is None:
            yield Check(f"package {module}", FAIL, "not installed: reinstall local-recall")
