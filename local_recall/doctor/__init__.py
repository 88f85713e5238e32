"""`local-recall doctor`: checks of the configuration, memory files and environment.

Each check is a small function returning `Check` values; the CLI only prints them. A check never
raises: what it cannot verify it reports."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from local_recall.doctor.check import FAIL, OK, WARN, Check
from local_recall.doctor.claude import (
    check_claude_cli,
    check_claude_hooks,
    check_claude_mcp,
    claude_plugin_enabled,
)
from local_recall.errors import RecallError
from local_recall.logs import escape_controls
from local_recall.memory.repair import is_fixable
from local_recall.memory.store_files import duplicated_claims, folder_notes
from local_recall.repo.config import Config
from local_recall.repo.layout import GITIGNORE_LINES, Layout

if TYPE_CHECKING:
    from local_recall.search.status import IndexHealth


def check_layout(layout: Layout) -> Iterable[Check]:
    if not layout.recall_dir.is_dir():
        yield Check(
            "repository", FAIL, f"{layout.recall_dir} does not exist: run `local-recall init`"
        )
        return
    yield Check("repository", OK, str(layout.root))
    yield from check_derived(layout)
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


def check_derived(layout: Layout) -> Iterable[Check]:
    """Where index, state and log go: a read-only checkout uses the user's cache (layout.py)."""
    if layout.derived is not None:
        yield Check(
            "derived files",
            OK,
            f"the checkout is read-only here: index, state and log in {layout.derived}; "
            "search, hooks and the daemon work; memories cannot be added or extracted",
        )
    elif not os.access(layout.recall_dir, os.W_OK | os.X_OK):
        yield Check(
            "derived files",
            WARN,
            f"{layout.recall_dir} is read-only and no cache folder can be used (set "
            "XDG_CACHE_HOME or HOME): hooks search the files only; no index, no daemon",
        )


def check_config(loaded: Config | RecallError) -> Iterable[Check]:
    """`loaded`: the config the repository was opened with, or why opening it failed."""
    if isinstance(loaded, RecallError):
        yield Check("config", FAIL, str(loaded))
        return
    where = str(loaded.source) if loaded.source else "defaults (no config.toml)"
    yield Check("config", OK, where)
    for problem in loaded.ignored:  # a committed remote host, program, capture or cost
        yield Check("config", WARN, problem)
    yield from check_config_values(loaded)


def check_config_values(config: Config) -> Iterable[Check]:
    """Where each value came from (default, user, committed, env): every personal key
    (capture and cost, repo/config_trust.py), and every other key not at its default."""
    from local_recall.org.plan import shown_uri
    from local_recall.repo.config import SCHEMA
    from local_recall.repo.config_render import toml_literal
    from local_recall.repo.config_trust import MACHINE_KEYS, PERSONAL_KEYS

    for section, keys in SCHEMA.items():
        for key in keys:
            origin = config.origin(section, key)
            if origin == "default" and (section, key) not in PERSONAL_KEYS:
                continue
            value = getattr(getattr(config, section), key)
            if MACHINE_KEYS.get((section, key)) == "no-credentials":  # shown without them
                value = shown_uri(str(value))
            value = toml_literal(value)
            yield Check("config value", OK, f"{section}.{key} = {value} ({origin})")


def check_folder_notes(folders: Iterable[Path]) -> Iterable[Check]:
    """A README.md (or index.md…) kept in a memory folder: not a memory, left as it is."""
    for folder in folders:
        for path in folder_notes(folder):
            shown = escape_controls(str(path))
            yield Check("not a memory", OK, f"{shown}: a note about the folder, left as it is")


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
    duplicates = duplicated_claims(path for path, _ in problems)
    for memory_id, paths in duplicates.items():
        names = ", ".join(repr(str(p)) for p in paths)
        yield Check(
            "duplicate id",
            FAIL,
            escape_controls(
                f"{len(paths)} files claim memory id {memory_id}: {names}; only "
                f"{memory_id}.md is read (`local-recall rm {memory_id}` removes them all, "
                "or delete the others)"
            ),
        )
    listed = {p for paths in duplicates.values() for p in paths}
    for path, reason in problems:  # a file name may hold a newline or escape sequences
        if path in listed:
            continue
        shown = escape_controls(f"{path}: {reason}")
        fix = " — `local-recall doctor --fix` renames or completes it" if is_fixable(reason) else ""
        yield Check("unreadable file", FAIL, f"{shown} (left unchanged){fix}")
    if stale:
        yield Check(
            "hand edits",
            OK,
            f"{stale} file(s) edited by hand: their content_hash is recomputed "
            "on read and rewritten on the next `local-recall edit`",
        )


def check_stale(count_stale: Callable[[], int]) -> Iterable[Check]:
    """Memories the code has moved past (docs/team.md#stale-memories); never a failure."""
    try:
        stale = count_stale()
    except RecallError as exc:
        yield Check("stale memories", WARN, f"cannot tell: {exc}")
        return
    if stale:
        yield Check(
            "stale memories",
            WARN,
            f"{stale} memories anchored to files changed since: `local-recall stale`",
        )
    else:
        yield Check("stale memories", OK, "none")


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
        "filelock",
    ):
        if importlib.util.find_spec(module) is None:
            yield Check(f"package {module}", FAIL, "not installed: reinstall local-recall")


def check_search(health: Callable[[], IndexHealth]) -> Iterable[Check]:
    """The embedder, the index and the last search (see search.status.IndexHealth)."""
    try:
        h = health()
    except RecallError as exc:
        yield Check("search", FAIL, str(exc))
        return
    if h.embedder_error:
        yield Check(
            "embedder",
            WARN,
            f"{h.embedder}: {h.embedder_error} — search falls back to full-text + fuzzy",
        )
    else:
        yield Check("embedder", OK, str(h.embedder_fingerprint))
    if not h.index_exists:
        yield Check("index", WARN, "not built yet: run `local-recall index` (or any search)")
    elif h.index_error:
        yield Check(
            "index",
            WARN,
            f"{h.index_error} — it is rebuilt on the next `local-recall index` or search",
        )
    elif h.embedder_fingerprint and h.index_embedder != h.embedder_fingerprint:
        yield Check(
            "index",
            WARN,
            f"built with {h.index_embedder or 'no embedder'}, config says "
            f"{h.embedder_fingerprint}: the next `local-recall index` rebuilds it",
        )
    elif h.indexed != h.files:
        yield Check(
            "index",
            WARN,
            f"{h.indexed} rows for {h.files} memory files: run "
            "`local-recall index` (searches sync it too)",
        )
    else:
        ann = ", ANN vector index" if h.has_ann else ""
        yield Check("index", OK, f"{h.indexed} memories, {h.index_embedder}{ann}")
    if h.last_fallback:
        yield Check("last search", WARN, f"ran degraded: {h.last_fallback}")


# extractor -> (where its requests go, the command it runs)
AGENT_CLI_DESTINATIONS = {
    "codex": ("OpenAI's API", "codex exec"),
    "gemini": ("Google's Gemini API", "gemini -p"),
}


def check_destinations(
    config: Config, environ: Mapping[str, str], user_config: Path
) -> Iterable[Check]:
    """Where prompts (embedded for search) and transcripts (extraction) are sent. A host off
    this machine can only come from the user's environment or user config
    (repo/config_trust.py); it is shown so that nobody sends prompts somewhere unknowingly."""
    from local_recall.ollama_client import resolve_host
    from local_recall.repo.config_trust import is_loopback_url

    def place(host: str) -> tuple[str, str]:
        return (OK, f"{host} (this machine)") if is_loopback_url(host) else (WARN, host)

    try:
        host = resolve_host(config.embedder.ollama_host or None, environ)
    except RecallError as exc:
        yield Check("prompts go to", FAIL, str(exc))
        return
    if config.embedder.provider == "ollama":
        status, where = place(host)
        yield Check("prompts go to", status, f"Ollama at {where} (embedder)")
    else:
        yield Check("prompts go to", OK, "nowhere: embedded model in this process (minilm)")
    if not config.extraction.enabled:
        yield Check("transcripts go to", OK, "nowhere: extraction is off")
    elif config.extraction.extractor == "ollama":
        status, where = place(host)
        yield Check("transcripts go to", status, f"Ollama at {where} (extraction)")
    elif config.extraction.extractor in AGENT_CLI_DESTINATIONS:
        vendor, command = AGENT_CLI_DESTINATIONS[config.extraction.extractor]
        program = config.extraction.cli_path or command.split()[0]
        yield Check("transcripts go to", OK, f"{vendor} through `{program}` (extraction)")
    else:
        program = (
            config.extraction.claude_path or environ.get("LOCAL_RECALL_CLAUDE_BIN") or "claude"
        )
        yield Check("transcripts go to", OK, f"Anthropic's API through `{program} -p` (extraction)")
    found = "found" if user_config.is_file() else "none"
    yield Check("user config", OK, f"{user_config} ({found})")


__all__ = [
    "FAIL",
    "OK",
    "WARN",
    "Check",
    "check_claude_cli",
    "check_claude_hooks",
    "check_claude_mcp",
    "claude_plugin_enabled",
]
