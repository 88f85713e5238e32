"""Setting up and checking: `init`, `uninstall`, `doctor`, and `mcp` (the server Claude Code
starts)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from local_recall.cli.app import AppContext, cli, emit_json, pass_app
from local_recall.cli.health import (
    check_daemon,
    check_extraction,
    check_file_scopes,
    check_learned,
    check_unreviewed,
)
from local_recall.cli.next_steps import (
    changed_in_repository,
    git_add_line,
    hooks_reach,
    next_steps_text,
)
from local_recall.doctor import (
    FAIL,
    OK,
    WARN,
    Check,
    check_claude_cli,
    check_claude_hooks,
    check_claude_mcp,
    check_config,
    check_destinations,
    check_folder_notes,
    check_layout,
    check_memory_files,
    check_python,
    check_search,
    check_stale,
)
from local_recall.errors import RecallError
from local_recall.learning.usage_log import read_legacy, read_usage
from local_recall.logs import escape_controls, log_to_repo
from local_recall.recall import Recall
from local_recall.repo.git_exclude import exclude_locally
from local_recall.repo.layout import Layout

# Written by init (the MCP approval): this user's, never the team's (docs/install.md).
LOCAL_SETTINGS = ".claude/settings.local.json"

if TYPE_CHECKING:
    from local_recall.search.status import IndexHealth


_CLAUDE_SCOPE = click.Choice(["project", "local", "user"])
_CLAUDE_SCOPE_HELP = (
    "Where the hooks go: project = <repo>/.claude/settings.json, local = "
    "<repo>/.claude/settings.local.json (not committed), user = ~/.claude/settings.json "
    "(honours CLAUDE_CONFIG_DIR). The MCP server always goes in <repo>/.mcp.json."
)


@cli.command()
@click.option(
    "--scope", type=_CLAUDE_SCOPE, default="project", show_default=True, help=_CLAUDE_SCOPE_HELP
)
@click.option("--no-claude", is_flag=True, help="Do not touch Claude Code's settings/.mcp.json.")
@click.option(
    "--agent",
    "agents",
    multiple=True,
    metavar="AGENT",
    help="Wire this agent at project scope: claude (default), codex, gemini, copilot, or all "
    "(every one whose CLI is on PATH). Repeatable. Also the opt-in to reading its sessions.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_app
def init(
    app: AppContext, scope: str, no_claude: bool, agents: tuple[str, ...], as_json: bool
) -> None:
    """Create local-recall/ and install the hooks and MCP server into Claude Code (or the agents
    named with --agent). Safe to run again: nothing that is already right is rewritten."""
    from local_recall.capture.sessions.agent_sessions import record_opt_in
    from local_recall.claude_code.install.apply import (
        InstallReport,
        find_launcher,
        plan_for_copilot,
        plan_install,
    )
    from local_recall.cli.agents import check_agent_files, install_agent, resolve_agents

    settings = app.settings
    chosen = resolve_agents(agents, settings.which)  # a wrong name fails before anything
    check_agent_files(chosen, settings.root)  # every agent's files parse, before any is written
    launcher = find_launcher(search_path=settings.environ.get("PATH", os.defpath))
    # Plan and check everything first: a refusal (a symlinked .mcp.json, a settings file that
    # is not JSON) must leave the repository as it was, local-recall/ included.
    plan = None
    with_claude = not no_claude and "claude" in chosen
    if with_claude:
        plan = plan_install(
            settings.root,
            claude_config_dir=settings.claude_config_dir,
            scope=scope,
            launcher=launcher,
            for_copilot="copilot" in chosen,
        )
    elif not no_claude and "copilot" in chosen:  # Claude Code's hooks, made loadable by Copilot
        plan = plan_for_copilot(
            settings.root, claude_config_dir=settings.claude_config_dir, launcher=launcher
        )
    report = app.recall.init()
    log_to_repo(app.recall)  # recall.log can exist only now
    claude = plan.carry_out() if plan is not None else InstallReport(())
    others = [
        change
        for agent in chosen
        if agent != "claude"
        for change in install_agent(agent, report.root, launcher.argv)
    ]
    now_ns = time.time_ns()
    record_opt_in(app.recall.layout.state_dir, add=chosen, now_ns=now_ns)  # their sessions
    excluded = None
    if not no_claude and (report.root / LOCAL_SETTINGS).is_file():
        excluded = exclude_locally(report.root, LOCAL_SETTINGS, app.settings.environ)
    if as_json:
        emit_json(
            {
                "root": str(report.root),
                "created": [str(p) for p in report.created_dirs],
                "wrote_config": report.wrote_config,
                "gitignore_added": list(report.gitignore_added),
                "gitattributes_added": list(report.gitattributes_added),
                "claude": [c.to_json() for c in claude.changes],
                "agents": [c.to_json() for c in others],
                "excluded": str(excluded) if excluded else None,
                "claude_hooks_fire": None
                if not with_claude
                else ("anywhere" if scope == "user" else "root"),
            }
        )
        return
    layout = app.recall.layout
    click.echo(f"local-recall ready in {layout.recall_dir}")
    if report.wrote_config:
        click.echo(f"  wrote {layout.config_path}")
    if report.gitignore_added:
        click.echo(f"  .gitignore: added {', '.join(report.gitignore_added)}")
    if report.gitattributes_added:
        click.echo(f"  .gitattributes: added {', '.join(report.gitattributes_added)}")
    for change in claude.changes:
        click.echo(f"  Claude Code {change.what}: {change.action} {change.path}")
    for other in others:
        click.echo(f"  {other.agent}: {other.action} {other.path}")
    if any(c.agent == "codex" and c.action in ("created", "updated") for c in others):
        click.echo("  codex: trust the project hooks once in Codex (/hooks) before they run")
    if excluded is not None:
        click.echo(f"  {excluded}: added /{LOCAL_SETTINGS} (personal: kept out of git)")
    if with_claude:
        click.echo(f"  {hooks_reach(scope, str(report.root))}")
    _suggest_ollama(app.recall)
    claude_scope = scope if with_claude else None
    agents_wired = [agent for agent in chosen if agent != "claude"]
    ours = any((report.created_dirs, report.wrote_config, report.gitignore_added))
    touched = [(layout.recall_dir, "created")] if ours or report.gitattributes_added else []
    touched += [(c.path, c.action) for c in claude.changes]
    touched += [(c.path, c.action) for c in others]
    staged = changed_in_repository(report.root, touched, settings.environ)
    click.echo(next_steps_text(claude_scope, agents_wired, staged))


def _suggest_ollama(recall: Recall) -> None:
    """Say how to switch to a running Ollama; the config is never changed silently."""
    from local_recall.search.embedders import ollama_available

    embedder = recall.config.embedder
    if embedder.provider != "minilm":
        return
    if ollama_available(embedder.ollama_host or None, timeout=0.3, env=recall.settings.environ):
        click.echo(
            '  Ollama is running: to embed with it, set provider = "ollama" under '
            "[embedder] in local-recall/config.toml, then run `local-recall index`"
        )


@cli.command()
@click.option(
    "--scope",
    type=_CLAUDE_SCOPE,
    default="project",
    show_default=True,
    help="Which settings file to remove the hooks from (as for init).",
)
@click.option(
    "--agent",
    "agents",
    multiple=True,
    metavar="AGENT",
    help="Remove what init wrote for this agent: claude (default), codex, gemini, copilot, all.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_app
def uninstall(app: AppContext, scope: str, agents: tuple[str, ...], as_json: bool) -> None:
    """Remove local-recall's hooks and MCP server from Claude Code (or the agents named with
    --agent): exactly what init added. Memories and local-recall/ are kept."""
    from local_recall.capture.sessions.agent_sessions import record_opt_in
    from local_recall.claude_code.install.apply import InstallReport, hooks_elsewhere
    from local_recall.claude_code.install.apply import uninstall as uninstall_claude
    from local_recall.cli.agents import AGENTS, check_agent_files, resolve_agents, uninstall_agent

    settings = app.settings
    chosen = list(AGENTS) if "all" in agents else resolve_agents(agents, settings.which)
    check_agent_files(chosen, settings.root)
    report = InstallReport(())
    if "claude" in chosen:
        report = uninstall_claude(
            settings.root, claude_config_dir=settings.claude_config_dir, scope=scope
        )
    others = [
        change
        for agent in chosen
        if agent != "claude"
        for change in uninstall_agent(agent, settings.root)
    ]
    state = settings.layout.state_dir  # a user cache when the checkout is read-only
    if state.is_dir():
        record_opt_in(state, remove=chosen, now_ns=time.time_ns())
    # Left running, it would keep watching transcripts and calling `claude -p`; a
    # hook of an agent still wired starts it again when it needs it.
    from local_recall.daemon.control import stop_daemon

    remaining = hooks_elsewhere(settings.root, settings.claude_config_dir, scope)
    stopped = stop_daemon(settings.layout) if "claude" in chosen and not remaining else None
    if stopped is not None and not stopped.was_running:
        stopped = None
    if as_json:
        changes: list[Any] = [c.to_json() for c in report.changes]
        changes += [c.to_json() for c in others]
        if stopped is not None:
            changes.append({"what": "daemon", "action": "stopped", "pid": stopped.pid})
        emit_json(changes)
        return
    for change in report.changes:
        click.echo(f"Claude Code {change.what}: {change.action} {change.path}")
    for other in others:
        click.echo(f"{other.agent}: {other.action} {other.path}")
    if stopped is not None:
        state_text = "stopped" if stopped.stopped else "asked to stop (still finishing its work)"
        click.echo(f"daemon: {state_text} (pid {stopped.pid})")
    if remaining and "claude" in chosen:
        where = " and ".join(str(p) for p in remaining)
        click.echo(
            f"kept the MCP server, its approval and the daemon: {where} still runs our hooks"
        )
    touched = [(c.path, c.action) for c in report.changes]
    touched += [(c.path, c.action) for c in others]
    staged = changed_in_repository(settings.root, touched, settings.environ)
    if staged:
        click.echo(f"to share the removal: {git_add_line(staged, 'Remove local-recall hooks')}")


@cli.command()
@click.option(
    "--fix",
    is_flag=True,
    help="First rename misnamed memory files to their id and fill in missing fields.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
@pass_app
def doctor(app: AppContext, fix: bool, as_json: bool) -> None:
    """Check configuration, memory files and environment. Exit 1 if anything failed."""
    settings = app.settings
    fixed = _fix_memory_files(app) if fix else []
    layout = settings.layout
    try:  # opened once; a config error is reported by the checks that need the repository
        opened: Recall | RecallError = app.recall
    except RecallError as exc:
        opened = exc

    def recall() -> Recall:
        if isinstance(opened, RecallError):  # said once, on the config line
            raise RecallError("not checked: the repository does not open (see config)")
        return opened

    def scan() -> tuple[int, list[tuple[Path, str]], int]:
        result = recall().scan()
        stale = sum(1 for m in result.memories if m.stale_hash)
        problems = recall().problems()  # memories, thinking, summaries (a symlinked folder too)
        return len(result.memories), [(p.path, p.reason) for p in problems], stale

    def search_health() -> IndexHealth:
        return recall().searcher.health()

    checks: list[Check] = [
        *check_layout(layout),
        *check_config(opened.config if isinstance(opened, Recall) else opened),
    ]
    if layout.recall_dir.is_dir():
        checks.extend(check_memory_files(scan))
        checks.extend(check_folder_notes((layout.episodic_dir, layout.thinking_dir)))
        checks.extend(check_search(search_health))
        checks.extend(check_stale(lambda: len(recall().stale_memories())))
        checks.extend(check_unreviewed(lambda: len(recall().unreviewed())))
        checks.extend(
            check_learned(
                lambda: read_usage(layout),
                lambda: read_legacy(layout),
                lambda: [(m.id, m.disputed.reason) for m in recall().unreviewed() if m.disputed],
            )
        )
        if isinstance(opened, Recall):
            scopes = [(m.id, m.applies_to) for m in opened.scan().memories]
            checks.extend(check_file_scopes(settings.root, scopes))
    checks.extend(_runtime_checks(app, layout))
    checks.extend(check_python())
    checks.extend(
        check_claude_hooks(settings.root, settings.claude_config_dir, settings.which, here=_cwd())
    )
    checks.extend(check_claude_mcp(settings.root, settings.claude_config_dir, settings.which))
    extraction = opened.config.extraction if isinstance(opened, Recall) else None
    checks.extend(check_claude_cli(settings.which, extraction))
    from local_recall.cli.agents import agent_checks

    checks.extend(agent_checks(settings.root, settings.which))
    if isinstance(opened, Recall):
        config, user_config = opened.config, settings.user_config_path
        checks.extend(check_destinations(config, settings.environ, user_config))
        checks.extend(_org_checks(opened))
    checks = fixed + checks
    if as_json:
        emit_json([c.to_json() for c in checks])
    else:
        marks = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}
        for check in checks:
            click.echo(f"[{marks[check.status]}] {check.name}: {check.detail}")
    if any(c.status == FAIL for c in checks):
        sys.exit(1)


def _org_checks(recall: Recall) -> list[Check]:
    """[org]'s index and local copy (doctor/org.py); nothing when no org index is set."""
    if not recall.config.org.uri:
        return []
    from local_recall.doctor.org import check_org
    from local_recall.org.service import STALE_COPY_SECONDS

    service = recall.org
    return list(
        check_org(
            recall.config.org.uri,
            hook=recall.config.org.hook,
            own_name=service.own_name,
            copy_age=service.copy_age,
            stale_after=STALE_COPY_SECONDS,
        )
    )


def _cwd() -> Path | None:
    """The folder doctor runs in (where the user likely starts Claude Code); None if gone."""
    try:
        return Path.cwd()
    except OSError:
        return None


def _runtime_checks(app: AppContext, layout: Layout) -> list[Check]:
    """The daemon (running, since, last pass) and extraction (failing since, why)."""
    from local_recall.daemon.control import read_status
    from local_recall.daemon.session_env import fingerprint

    status = read_status(layout)
    here = fingerprint(app.settings.environ)
    return [
        *check_daemon(status.running, status.pid, status.status or {}, here),
        *check_extraction(layout.state_dir, app.settings.clock()),
    ]


def _fix_memory_files(app: AppContext) -> list[Check]:
    """`doctor --fix`: what was renamed or completed, and what could not be (memory/repair.py)."""
    from local_recall.memory.repair import Repair, repair_store

    try:
        results = repair_store(app.recall.memories, app.settings.new_id)
    except RecallError as exc:
        return [Check("fix", FAIL, str(exc))]
    checks = []
    for result in results:
        if isinstance(result, Repair):
            moved = "" if result.target == result.source else f" → {result.target.name}"
            detail = f"{result.source}{moved}: {'; '.join(result.changes)}"
            checks.append(Check("fixed", OK, escape_controls(detail)))
        else:
            checks.append(Check("fix", WARN, escape_controls(f"{result.source}: {result.reason}")))
    return checks


@cli.command()
@pass_app
def mcp(app: AppContext) -> None:
    """Run the MCP server on stdin/stdout (Claude Code starts it; see docs/mcp.md)."""
    from local_recall.claude_code.hooks.mcp_tool import PromptHook
    from local_recall.mcp_server.server import serve

    # Claude Code's `mcp_tool` prompt handler calls the hidden tool this hook answers
    serve(app.settings, PromptHook(app.settings))
