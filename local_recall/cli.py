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
from typing import Any, NoReturn

import click

from local_recall import __version__
from local_recall.doctor import (
    FAIL,
    Check,
    check_config,
    check_layout,
    check_memory_files,
    check_python,
)
from local_recall.errors import InvalidInput, RecallError
from local_recall.layout import Layout
from local_recall.memory import Memory, format_timestamp, parse_timestamp
from local_recall.recall import Recall, Settings

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


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_app
def init(app: AppContext, as_json: bool) -> None:
    """Create local-recall/ (config.toml, .gitignore, episodic-memory/). Safe to run again."""
    report = app.recall.init()
    if as_json:
        _emit_json(
            {
                "root": str(report.root),
                "created": [str(p) for p in report.created_dirs],
                "wrote_config": report.wrote_config,
                "gitignore_added": list(report.gitignore_added),
            }
        )
        return
    layout = app.recall.layout
    click.echo(f"local-recall ready in {layout.recall_dir}")
    if report.wrote_config:
        click.echo(f"  wrote {layout.config_path}")
    if report.gitignore_added:
        click.echo(f"  .gitignore: added {', '.join(report.gitignore_added)}")


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
    checks.extend(check_python())
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
    from local_recall.mcp_server import serve

    serve(app.settings)


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
