"""`local-recall doctor`: checks of the configuration, memory files and environment.

Each check is a small function returning `Check` values; the CLI only prints them. A check never
raises: what it cannot verify it reports."""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from local_recall.errors import RecallError
from local_recall.logs import escape_controls
from local_recall.memory.repair import is_fixable
from local_recall.repo.config import Config
from local_recall.repo.layout import GITIGNORE_LINES, Layout

if TYPE_CHECKING:
    from local_recall.search.status import IndexHealth

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


def check_config(loaded: Config | RecallError) -> Iterable[Check]:
    """`loaded`: the config the repository was opened with, or why opening it failed."""
    if isinstance(loaded, RecallError):
        yield Check("config", FAIL, str(loaded))
        return
    where = str(loaded.source) if loaded.source else "defaults (no config.toml)"
    yield Check("config", OK, where)
    for problem in loaded.ignored:  # a committed remote host or program: never applied
        yield Check("config", WARN, problem)


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
    for path, reason in problems:  # a file name may hold a newline or escape sequences
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
        "detect_secrets",
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


def _command_found(program: str, which: Callable[[str], str | None]) -> bool:
    if os.path.isabs(program):
        return os.path.isfile(program) and os.access(program, os.X_OK)
    return which(program) is not None


def claude_plugin_enabled(claude_config_dir: Path) -> bool:
    """Is the local-recall plugin enabled in the user's Claude Code settings?"""
    from local_recall.claude_code.install.apply import read_json_object

    try:
        _, document = read_json_object(claude_config_dir / "settings.json")
    except RecallError:
        return False
    plugins = document.get("enabledPlugins")
    return isinstance(plugins, dict) and any(
        str(name).startswith("local-recall@") and on is True for name, on in plugins.items()
    )


def _hooks_file_checks(path: Path, which: Callable[[str], str | None]) -> tuple[list[Check], bool]:
    """Checks of one settings file, and whether it holds our hooks."""
    from local_recall.claude_code.install.apply import read_json_object
    from local_recall.claude_code.install.plan import HOOKS, installed_hooks, settings_problems

    try:
        _, document = read_json_object(path)
    except RecallError as exc:
        return [Check("claude hooks", FAIL, f"{exc} (Claude Code ignores this file)")], False
    checks = []
    problems = settings_problems(document)
    if problems:
        checks.append(
            Check(
                "claude hooks",
                FAIL,
                f"{path}: {problems[0]} — Claude Code ignores every hook in this file",
            )
        )
    found = installed_hooks(document)
    if not found:
        return checks, False
    missing = [spec.event for spec in HOOKS if spec.event not in found]
    if missing:
        checks.append(
            Check(
                "claude hooks",
                WARN,
                f"{path}: no {', '.join(missing)} hook: run `local-recall init`",
            )
        )
    programs = {shlex.split(c)[0] for cs in found.values() for c in cs}
    lost = sorted(p for p in programs if not _command_found(p, which))
    checks.extend(
        Check(
            "claude hooks",
            FAIL,
            f"{path}: runs {program}, which does not exist: run `local-recall init` again",
        )
        for program in lost
    )
    if not missing and not lost and not problems:
        checks.append(Check("claude hooks", OK, str(path)))
    return checks, True


def check_claude_hooks(
    root: Path, claude_config_dir: Path, which: Callable[[str], str | None]
) -> Iterable[Check]:
    """Our hooks in the project, local or user settings (or the plugin): valid, complete, and
    running commands that exist; installed once."""
    from local_recall.claude_code.install.plan import SCOPES, settings_path

    sources = []
    for scope in SCOPES:
        path = settings_path(scope, root, claude_config_dir)
        checks, ours = _hooks_file_checks(path, which)
        yield from checks
        if ours:
            sources.append(str(path))
    if claude_plugin_enabled(claude_config_dir):
        sources.append("the local-recall plugin")
        yield Check("claude plugin", OK, "local-recall plugin enabled in user settings")
    if not sources:
        yield Check(
            "claude hooks",
            WARN,
            "not installed: run `local-recall init` (or install the plugin, docs/install.md)",
        )
    elif len(sources) > 1:
        yield Check(
            "claude hooks",
            WARN,
            f"installed in {' and '.join(sources)}: every hook "
            "runs more than once; `local-recall uninstall --scope ...` one of them",
        )


def check_claude_mcp(
    root: Path, claude_config_dir: Path, which: Callable[[str], str | None]
) -> Iterable[Check]:
    """Our server in <root>/.mcp.json, running a command that exists, for this repository."""
    from local_recall.claude_code.install.apply import read_json_object
    from local_recall.claude_code.install.plan import (
        MCP_SERVER_NAME,
        is_our_mcp_entry,
        mcp_config_path,
    )

    path = mcp_config_path(root)
    try:
        _, document = read_json_object(path)
    except RecallError as exc:
        yield Check("claude mcp", FAIL, f"{exc} (Claude Code cannot load project MCP servers)")
        return
    servers = document.get("mcpServers")
    entry = servers.get(MCP_SERVER_NAME) if isinstance(servers, dict) else None
    if entry is None:
        if claude_plugin_enabled(claude_config_dir):
            return  # the plugin brings the server
        yield Check(
            "claude mcp", WARN, f"no {MCP_SERVER_NAME} server in {path}: run `local-recall init`"
        )
    elif not is_our_mcp_entry(entry):
        yield Check(
            "claude mcp",
            WARN,
            f"{path}: the {MCP_SERVER_NAME} entry does not run `local-recall mcp`",
        )
    elif not _command_found(str(entry["command"]), which):
        yield Check(
            "claude mcp",
            FAIL,
            f"{path}: runs {entry['command']}, which does not exist: run `local-recall init` again",
        )
    else:
        env = entry.get("env")
        pinned = env.get("LOCAL_RECALL_ROOT") if isinstance(env, dict) else None
        if pinned and Path(str(pinned)) != root:
            yield Check(
                "claude mcp",
                WARN,
                f"{path}: serves {pinned}, not {root}: run `local-recall init` again",
            )
        else:
            yield Check("claude mcp", OK, f"{path}: {entry['command']}")


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
    else:
        program = (
            config.extraction.claude_path or environ.get("LOCAL_RECALL_CLAUDE_BIN") or "claude"
        )
        yield Check("transcripts go to", OK, f"Anthropic's API through `{program} -p` (extraction)")
    found = "found" if user_config.is_file() else "none"
    yield Check("user config", OK, f"{user_config} ({found})")


def check_claude_cli(which: Callable[[str], str | None]) -> Iterable[Check]:
    """Information only: the CLI is needed for extraction with extractor = claude."""
    claude = which("claude")
    yield Check(
        "claude cli",
        OK,
        f"found at {claude}"
        if claude
        else "not on PATH (needed only "
        "for extraction with extractor = claude; see extraction.claude_path)",
    )
