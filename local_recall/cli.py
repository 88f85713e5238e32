"""The `local-recall` command line: a thin adapter over `Recall` (click is imported here only).

Errors: a `RecallError` becomes one line on stderr and exit 1; a usage error one line and exit 2;
anything unexpected one line (the traceback goes to recall.log) and exit 1."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from local_recall import __version__
from local_recall.doctor import (
    FAIL,
    Check,
    check_claude_cli,
    check_claude_hooks,
    check_claude_mcp,
    check_config,
    check_layout,
    check_memory_files,
    check_python,
    check_search,
)
from local_recall.errors import InvalidInput, RecallError
from local_recall.memory.model import Memory, format_timestamp, parse_timestamp
from local_recall.recall import Recall, Settings
from local_recall.repo.layout import Layout

if TYPE_CHECKING:
    from local_recall.search.searcher import IndexHealth

log = logging.getLogger("local_recall.cli")


class AppContext:
    """Per-invocation state: the --root option and the lazily opened library."""

    def __init__(self, root: str | None) -> None:
        self.root_option = root
        self._recall: Recall | None = None

    @property
    def settings(self) -> Settings:
        return Settings.discover(self.root_option)

    @property
    def recall(self) -> Recall:
        if self._recall is None:
            self._recall = Recall.open(settings=self.settings)
        return self._recall


pass_app = click.make_pass_decorator(AppContext)


def _emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def _parse_when(value: str | None, option: str) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_timestamp(value)
    except InvalidInput:
        raise InvalidInput(f"{option}: expected an ISO date or time, got {value!r}") from None


def _memory_row(memory: Memory) -> dict[str, Any]:
    data = memory.to_json()
    data.pop("body")
    return data


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="local-recall")
@click.option(
    "--root",
    type=click.Path(file_okay=False),
    default=None,
    help="Repository root (default: $LOCAL_RECALL_ROOT, else the git top level of the cwd).",
)
@click.pass_context
def cli(ctx: click.Context, root: str | None) -> None:
    """local-recall: a coding agent's memory, kept as markdown files in your repository."""
    ctx.obj = AppContext(root)


# --- setup --------------------------------------------------------------------------------------


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
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_app
def init(app: AppContext, scope: str, no_claude: bool, as_json: bool) -> None:
    """Create local-recall/ and install the hooks and MCP server into Claude Code. Safe to run
    again: nothing that is already right is rewritten."""
    from local_recall.claude_code.install import InstallReport, install

    report = app.recall.init()
    claude = InstallReport(())
    if not no_claude:
        claude = install(report.root, claude_config_dir=app.settings.claude_config_dir, scope=scope)
    if as_json:
        _emit_json(
            {
                "root": str(report.root),
                "created": [str(p) for p in report.created_dirs],
                "wrote_config": report.wrote_config,
                "gitignore_added": list(report.gitignore_added),
                "claude": [c.to_json() for c in claude.changes],
            }
        )
        return
    layout = app.recall.layout
    click.echo(f"local-recall ready in {layout.recall_dir}")
    if report.wrote_config:
        click.echo(f"  wrote {layout.config_path}")
    if report.gitignore_added:
        click.echo(f"  .gitignore: added {', '.join(report.gitignore_added)}")
    for change in claude.changes:
        click.echo(f"  Claude Code {change.what}: {change.action} {change.path}")
    _suggest_ollama(app.recall)


def _suggest_ollama(recall: Recall) -> None:
    """Say how to switch to a running Ollama; the config is never changed silently."""
    from local_recall.search.embedders import ollama_available

    config = recall.config
    if config.get("embedder", "provider") != "minilm":
        return
    if ollama_available(config.get("embedder", "ollama_host") or None, timeout=0.3):
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
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_app
def uninstall(app: AppContext, scope: str, as_json: bool) -> None:
    """Remove local-recall's hooks and MCP server from Claude Code (exactly what init added).
    Memories and local-recall/ are kept."""
    from local_recall.claude_code.install import uninstall as uninstall_claude

    settings = app.settings
    report = uninstall_claude(
        settings.root, claude_config_dir=settings.claude_config_dir, scope=scope
    )
    if as_json:
        _emit_json([c.to_json() for c in report.changes])
        return
    for change in report.changes:
        click.echo(f"Claude Code {change.what}: {change.action} {change.path}")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
@pass_app
def doctor(app: AppContext, as_json: bool) -> None:
    """Check configuration, memory files and environment. Exit 1 if anything failed."""
    settings = app.settings
    layout = Layout(settings.root)
    checks: list[Check] = [*check_layout(layout), *check_config(layout, dict(settings.environ))]

    def scan() -> tuple[int, list[tuple[Path, str]], int]:
        result = Recall.open(settings=settings).scan()
        stale = sum(1 for m in result.memories if m.stale_hash)
        return len(result.memories), [(p.path, p.reason) for p in result.problems], stale

    if layout.recall_dir.is_dir():
        checks.extend(check_memory_files(scan))

        def search_health() -> IndexHealth:  # opened inside the check: config errors stay in it
            return Recall.open(settings=settings).searcher.health()

        checks.extend(check_search(search_health))
    checks.extend(check_python())
    checks.extend(check_claude_hooks(settings.root, settings.claude_config_dir))
    checks.extend(check_claude_mcp(settings.root, settings.claude_config_dir))
    checks.extend(check_claude_cli())
    if as_json:
        _emit_json([c.to_json() for c in checks])
    else:
        marks = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}
        for check in checks:
            click.echo(f"[{marks[check.status]}] {check.name}: {check.detail}")
    if any(c.status == FAIL for c in checks):
        sys.exit(1)


# --- memories -----------------------------------------------------------------------------------


@cli.command()
@click.option("--subject", "-s", required=True, help="One line, 1-200 characters.")
@click.option("--body", "-b", default=None, help="Markdown body; read from stdin when absent.")
@click.option(
    "--keyword",
    "-k",
    "keywords",
    multiple=True,
    help="Repeat for several; extracted automatically when none is given.",
)
@click.option(
    "--scope",
    default="global",
    show_default=True,
    help="global, file:<repo-relative path> or area:<name>.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the memory as JSON.")
@pass_app
def add(
    app: AppContext,
    subject: str,
    body: str | None,
    keywords: Sequence[str],
    scope: str,
    as_json: bool,
) -> None:
    """Add a memory and print its id (the existing id if the same content is already stored)."""
    if body is None:
        if sys.stdin is None or sys.stdin.isatty():
            raise InvalidInput("no body: pass --body or pipe the body on stdin")
        body = sys.stdin.read()
    result = app.recall.save(
        subject, body, keywords=list(keywords) or None, scope=scope, source="cli"
    )
    if as_json:
        _emit_json({**_memory_row(result.memory), "created": result.created})
    else:
        click.echo(result.memory.id)


@cli.command(name="list")
@click.option(
    "--scope", default=None, help="Only memories for this scope (file:src/ = under src/)."
)
@click.option("--no-global", is_flag=True, help="With --scope: leave out global memories.")
@click.option("--keyword", "-k", default=None, help="Only memories with this keyword.")
@click.option("--since", default=None, help="Only memories on or after this ISO date/time.")
@click.option("--until", default=None, help="Only memories on or before this ISO date/time.")
@click.option("--limit", "-n", type=click.IntRange(min=1), default=None, help="At most N.")
@click.option("--newest-first", is_flag=True, help="Newest first (default: oldest first).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
@pass_app
def list_command(
    app: AppContext,
    scope: str | None,
    no_global: bool,
    keyword: str | None,
    since: str | None,
    until: str | None,
    limit: int | None,
    newest_first: bool,
    as_json: bool,
) -> None:
    """List memories, sorted by when they occurred."""
    memories = app.recall.list(
        scope=scope,
        include_global=not no_global,
        keyword=keyword,
        since=_parse_when(since, "--since"),
        until=_parse_when(until, "--until"),
        newest_first=newest_first,
        limit=limit,
    )
    if as_json:
        _emit_json([_memory_row(m) for m in memories])
        return
    for memory in memories:
        click.echo(
            f"{format_timestamp(memory.occurred_at)[:10]}  {memory.id}  "
            f"{memory.applies_to:<20}  {memory.subject}"
        )


@cli.command()
@click.argument("memory_id")
@click.option("--json", "as_json", is_flag=True, help="Print the memory as JSON.")
@pass_app
def show(app: AppContext, memory_id: str, as_json: bool) -> None:
    """Show one memory."""
    memory = app.recall.get(memory_id)
    if as_json:
        _emit_json(memory.to_json())
        return
    click.echo(f"id:          {memory.id}")
    click.echo(f"subject:     {memory.subject}")
    click.echo(f"applies_to:  {memory.applies_to}")
    click.echo(f"occurred_at: {format_timestamp(memory.occurred_at)}")
    click.echo(f"keywords:    {', '.join(memory.keywords)}")
    if memory.source:
        click.echo(f"source:      {memory.source}")
    click.echo(f"path:        {memory.path}")
    click.echo("")
    click.echo(memory.body)


@cli.command()
@click.argument("memory_id")
@click.option("--subject", "-s", default=None, help="New subject.")
@click.option("--body", "-b", default=None, help="New body ('-' reads it from stdin).")
@click.option("--keyword", "-k", "keywords", multiple=True, help="Replace the keywords.")
@click.option("--scope", default=None, help="New scope.")
@click.option("--json", "as_json", is_flag=True, help="Print the memory as JSON.")
@pass_app
def edit(
    app: AppContext,
    memory_id: str,
    subject: str | None,
    body: str | None,
    keywords: Sequence[str],
    scope: str | None,
    as_json: bool,
) -> None:
    """Change fields of a memory (the content hash is recomputed)."""
    if body == "-":
        body = sys.stdin.read()
    if subject is None and body is None and not keywords and scope is None:
        raise InvalidInput("nothing to change: give --subject, --body, --keyword or --scope")
    memory = app.recall.update(
        memory_id, subject=subject, body=body, keywords=list(keywords) or None, scope=scope
    )
    if as_json:
        _emit_json(_memory_row(memory))
    else:
        click.echo(memory.id)


@cli.command()
@click.argument("memory_id")
@click.option("--json", "as_json", is_flag=True, help="Print what was deleted as JSON.")
@pass_app
def rm(app: AppContext, memory_id: str, as_json: bool) -> None:
    """Delete a memory file."""
    memory = app.recall.delete(memory_id)
    if as_json:
        _emit_json({"deleted": memory.id, "path": str(memory.path)})
    else:
        click.echo(f"deleted {memory.id}")


# --- MCP server ---------------------------------------------------------------------------------


@cli.command()
@pass_app
def mcp(app: AppContext) -> None:
    """Run the MCP server on stdin/stdout (Claude Code starts it; see docs/mcp.md)."""
    from local_recall.claude_code.mcp_server import serve

    serve(app.settings)


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print findings as a JSON array.")
@pass_app
def scan(app: AppContext, paths: Sequence[str], as_json: bool) -> None:
    """Report secrets in memory files (default: all of local-recall/). Exit 1 if any is found.

    Prints path, line and kind — never the secret. For CI and the pre-commit hook."""
    from local_recall.redaction.secrets import scan_paths

    targets = list(paths) or [str(Layout(app.settings.root).recall_dir)]
    missing = [p for p in targets if not Path(p).exists()]
    if missing:
        raise InvalidInput(f"no such file or folder: {missing[0]}")
    findings = scan_paths(targets)
    if as_json:
        _emit_json([{"path": str(f.path), "line": f.line, "kind": f.kind} for f in findings])
    else:
        for finding in findings:
            click.echo(f"{finding.path}:{finding.line}: {finding.kind}")
        if not findings:
            click.echo(f"no secrets found in {len(targets)} path(s)", err=True)
    if findings:
        sys.exit(1)


# --- index and search (local_recall/search.py) ----------------------------------------------------


@cli.command()
@click.option("--rebuild", is_flag=True, help="Drop the index and embed every memory again.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@pass_app
def index(app: AppContext, rebuild: bool, as_json: bool) -> None:
    """Bring the search index up to date with the memory files (local-recall/index/)."""
    report = app.recall.sync_index(rebuild=rebuild, progress=not as_json and sys.stderr.isatty())
    if as_json:
        _emit_json(report.to_json())
        return
    click.echo(
        f"{report.total} memories indexed: {report.embedded} embedded, {report.updated} "
        f"updated, {report.removed} removed in {report.seconds:.2f} s"
        + (f" (rebuilt: {report.rebuild_reason})" if report.rebuilt else "")
    )
    if report.fallback:
        click.echo(f"warning: {report.fallback}; full-text search still works", err=True)


@cli.command()
@click.argument("query")
@click.option(
    "--limit",
    "-n",
    type=click.IntRange(min=1, max=1000),
    default=None,
    help="At most N hits (default: [search] default_limit).",
)
@click.option(
    "--scope", default=None, help="Only memories for this scope (file:src/ = under src/)."
)
@click.option("--no-global", is_flag=True, help="With --scope: leave out global memories.")
@click.option(
    "--mode",
    type=click.Choice(["hybrid", "semantic", "text", "fuzzy"]),
    default="hybrid",
    show_default=True,
    help="Which signals rank the memories.",
)
@click.option(
    "--min-score",
    type=click.FloatRange(0.0, 1.0),
    default=None,
    help="Drop hits scoring below this (0..1).",
)
@click.option(
    "--kind",
    type=click.Choice(["episodic", "thinking"]),
    default="episodic",
    show_default=True,
    help="Which memories to search.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of hits, best first.")
@pass_app
def search(
    app: AppContext,
    query: str,
    limit: int | None,
    scope: str | None,
    no_global: bool,
    mode: str,
    min_score: float | None,
    kind: str,
    as_json: bool,
) -> None:
    """Find the memories that answer QUERY, best first."""
    hits = app.recall.search(
        query,
        limit=limit,
        scope=scope,
        include_global=not no_global,
        mode=mode,
        min_score=min_score,
        kind=kind,
    )
    if as_json:
        _emit_json([hit.to_json() for hit in hits])
        return
    for hit in hits:
        click.echo(f"{hit.score:.2f}  {hit.id}  {hit.applies_to:<20}  {hit.subject}")
    fallback = app.recall.search_status().fallback
    if fallback:
        click.echo(f"warning: {fallback}", err=True)


# --- daemon (local_recall/daemon.py, docs/daemon.md) ---------------------------------------------


@cli.group()
def daemon() -> None:
    """The per-repo background daemon: warm searches for the hooks, watches memories and
    transcripts, runs the extraction pipeline."""


@daemon.command(name="start")
@click.option(
    "--wait",
    "wait_seconds",
    type=float,
    default=20.0,
    show_default=True,
    help="Seconds to wait until it answers.",
)
@pass_app
def daemon_start(app: AppContext, wait_seconds: float) -> None:
    """Start the daemon in the background (no-op if one already runs)."""
    from local_recall.daemon.runtime import start_daemon

    settings = app.settings
    result = start_daemon(settings.root, settings.environ, wait_seconds=wait_seconds)
    if result.already_running:
        click.echo(f"already running (pid {result.pid})")
    elif result.ready:
        click.echo(f"started (pid {result.pid})")
    else:
        raise RecallError(f"daemon did not start (pid {result.pid}): {result.detail}")


@daemon.command(name="stop")
@click.option(
    "--wait",
    "wait_seconds",
    type=float,
    default=30.0,
    show_default=True,
    help="Seconds to wait for it to finish its current work.",
)
@pass_app
def daemon_stop(app: AppContext, wait_seconds: float) -> None:
    """Stop the daemon (it finishes the current item first)."""
    from local_recall.daemon.runtime import stop_daemon

    result = stop_daemon(Layout(app.settings.root), wait_seconds=wait_seconds)
    if not result.was_running:
        click.echo("not running")
    elif result.stopped:
        click.echo(f"stopped (pid {result.pid})")
    else:
        raise RecallError(f"daemon (pid {result.pid}) still running after {wait_seconds:g} s")


@daemon.command(name="status")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@pass_app
def daemon_status(app: AppContext, as_json: bool) -> None:
    """Is the daemon running, and what did it do last? Exit 3 when it is not running."""
    from local_recall.daemon.runtime import read_status

    status = read_status(Layout(app.settings.root))
    if as_json:
        _emit_json(status.to_json())
    elif not status.running:
        click.echo("not running")
    else:
        data = status.status or {}
        click.echo(f"running (pid {status.pid})")
        for key in ("state", "started", "socket"):
            if data.get(key):
                click.echo(f"  {key}: {data[key]}")
        for kind in ("last_sync", "last_pass"):
            item = data.get(kind)
            if isinstance(item, dict):
                label = kind.replace("_", " ")
                click.echo(f"  {label}: {item.get('at')} ({item.get('seconds')} s)")
        counts = data.get("counts")
        if isinstance(counts, dict):
            click.echo("  counts: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        for error in data.get("last_errors") or []:
            click.echo(f"  error {error.get('at')} [{error.get('where')}]: {error.get('error')}")
    if not status.running:
        sys.exit(3)


@daemon.command(name="run")
@pass_app
def daemon_run(app: AppContext) -> None:
    """Run the daemon in the foreground until SIGTERM / Ctrl-C."""
    from local_recall.daemon.runtime import run_daemon

    outcome = run_daemon(app.recall)
    if outcome.already_running is not None:
        click.echo(f"already running (pid {outcome.already_running})")
    if outcome.exit_code:
        sys.exit(outcome.exit_code)


# --- extraction pipeline (local_recall/pipeline.py, docs/pipeline.md) ----------------------------


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the pass report as JSON.")
@click.option(
    "--transcript",
    "transcript",
    type=click.Path(dir_okay=False),
    default=None,
    help="Process only this transcript file.",
)
@pass_app
def sync(app: AppContext, as_json: bool, transcript: str | None) -> None:
    """Extract memories from new Claude Code transcript turns (one pass, in the foreground).
    Exit 1 when something failed (it is retried by a later pass)."""
    import signal

    from local_recall.capture.pipeline import ALREADY_RUNNING, run_pass

    stop = {"requested": False}

    def on_term(signum: int, frame: object) -> None:  # finish the current chunk, then stop
        stop["requested"] = True

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        report = run_pass(
            app.recall,
            progress=not as_json and sys.stderr.isatty(),
            only_path=Path(transcript) if transcript else None,
            should_stop=lambda: stop["requested"],
        )
    finally:
        signal.signal(signal.SIGTERM, previous)
    if as_json:
        _emit_json(report.to_json())
    elif report.stopped == "already_running":
        pass
    elif report.stopped == "disabled":
        click.echo("extraction is disabled ([extraction] enabled = false)")
    else:
        click.echo(
            f"{report.transcripts_seen} transcripts: {report.transcripts_processed} processed, "
            f"{report.transcripts_skipped} skipped; {report.api_calls} calls, "
            f"{report.input_tokens} in / {report.output_tokens} out tokens; "
            f"{report.memories_created} memories created, {report.duplicates} duplicates, "
            f"{report.near_duplicates} near-duplicates, {report.dropped} dropped"
            + (f", {report.thinking_created} thinking" if report.thinking_created else "")
            + f" ({report.seconds:.1f} s)"
        )
        if report.stopped:
            click.echo(f"stopped early: {report.stopped.replace('_', ' ')}", err=True)
    if report.stopped == "already_running":
        raise RecallError(ALREADY_RUNNING)
    if not as_json:
        for line in (*report.notes, *report.errors):
            click.echo(f"local-recall: {line}", err=True)
    if report.errors:
        sys.exit(1)


# --- entry point --------------------------------------------------------------------------------


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"local-recall: error: {message}", err=True)
    sys.exit(code)


def run_cli(args: Sequence[str]) -> int:
    try:
        cli.main(list(args), prog_name="local-recall", standalone_mode=False)
    except click.exceptions.Abort:
        _fail("aborted", 130)
    except click.ClickException as exc:  # usage errors: one line, no usage dump
        _fail(exc.format_message().replace("\n", " "), exc.exit_code)
    except RecallError as exc:
        log.info("command failed: %s", exc)
        _fail(str(exc).replace("\n", " "), 1)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except BrokenPipeError:
        return 0  # `local-recall list | head`
    except Exception as exc:
        log.exception("unexpected error")
        _fail(
            f"internal error: {type(exc).__name__}: {exc} (details in local-recall/recall.log)", 1
        )
    return 0
