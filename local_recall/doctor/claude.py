"""Doctor checks of the Claude Code install: hooks, MCP server, plugin, CLI."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from local_recall.doctor.check import FAIL, OK, WARN, Check
from local_recall.errors import RecallError
from local_recall.repo.config import ExtractionConfig


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
    from local_recall.claude_code.install.plan import (
        HOOKS,
        hook_program,
        installed_hooks,
        settings_problems,
    )

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
    programs = {p for cs in found.values() for c in cs if (p := hook_program(c)) is not None}
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
    root: Path,
    claude_config_dir: Path,
    which: Callable[[str], str | None],
    *,
    here: Path | None = None,
) -> Iterable[Check]:
    """Our hooks in the project, local or user settings (or the plugin): valid, complete, and
    running commands that exist; installed once. With `here` (the folder doctor runs in): can
    they fire from where the user starts Claude Code (reach.py)."""
    from local_recall.claude_code.install.plan import SCOPES, settings_path
    from local_recall.doctor.reach import check_hooks_reach

    sources = []
    gated_user = False
    for scope in SCOPES:
        path = settings_path(scope, root, claude_config_dir)
        checks, ours = _hooks_file_checks(path, which)
        yield from checks
        if ours and scope == "user" and _all_gated(path):
            gated_user = True  # defers to project/local hooks: never a second answer
        elif ours:
            sources.append(str(path))
    plugin = claude_plugin_enabled(claude_config_dir)
    if plugin:
        sources.append("the local-recall plugin")
        yield Check("claude plugin", OK, "local-recall plugin enabled in user settings")
        if gated_user:  # the gate steps aside for project/local hooks, not for the plugin
            sources.append(str(settings_path("user", root, claude_config_dir)) + " (gated)")
    if not sources and not gated_user:
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
    user_path = settings_path("user", root, claude_config_dir)
    if str(user_path) in sources:
        yield Check(
            "claude hooks",
            WARN,
            f"{user_path}: user-scope hooks without the gate of this version start Python in "
            "every repository and answer twice where project hooks do: run "
            "`local-recall init --scope user` again",
        )
    if here is not None:
        everywhere = gated_user or plugin or str(user_path) in sources
        installed = bool(sources) or gated_user
        yield from check_hooks_reach(
            root, claude_config_dir, everywhere=everywhere, installed=installed, here=here
        )


def _all_gated(path: Path) -> bool:
    """Every hook of ours in the file is a gated command (the user scope of this version)."""
    from local_recall.claude_code.install.apply import read_json_object
    from local_recall.claude_code.install.plan import installed_hooks, is_gated

    try:
        _, document = read_json_object(path)
    except RecallError:
        return False
    commands = [c for cs in installed_hooks(document).values() for c in cs]
    return bool(commands) and all(is_gated(c) for c in commands)


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


def check_claude_cli(
    which: Callable[[str], str | None], extraction: ExtractionConfig | None = None
) -> Iterable[Check]:
    """Where the `claude` CLI is. Information only unless extraction runs it (enabled,
    extractor = claude): then a missing one is a warning, since nothing is extracted without it."""
    needed = extraction is not None and extraction.enabled and extraction.extractor == "claude"
    configured = extraction.claude_path if extraction is not None else ""
    if configured:
        found = os.access(configured, os.X_OK) and Path(configured).is_file()
        detail = f"extraction.claude_path: {configured}"
        yield Check(
            "claude cli",
            OK if found or not needed else WARN,
            detail + ("" if found else " is not an executable file"),
        )
        return
    claude = which("claude")
    if claude:
        yield Check("claude cli", OK, f"found at {claude}")
    elif needed:
        yield Check(
            "claude cli",
            WARN,
            "not on PATH, and extraction runs it (extractor = claude): nothing is extracted "
            "until it is; or set extraction.claude_path, or another extractor",
        )
    else:
        yield Check(
            "claude cli",
            OK,
            "not on PATH (needed only for extraction with extractor = claude; see "
            "extraction.claude_path)",
        )
