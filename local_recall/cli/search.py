"""Index and search commands: `index`, `search`."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import click

from local_recall.cli.app import AppContext, cli, emit_json, pass_app
from local_recall.cli.notices import skipped_files_notice
from local_recall.cli.render import search_output, search_warnings, skipped_problems
from local_recall.cli.warm import model_notice
from local_recall.daemon.cli_queries import search_reply
from local_recall.search.index.sync import ProgressCallback
from local_recall.search.limits import MAX_LIMIT
from local_recall.search.query import MODES, SearchQuery, check_query_text


@contextlib.contextmanager
def console_progress(label: str = "indexing memories") -> Iterator[ProgressCallback]:
    """A rich progress bar on stderr (shown only once there is something to embed)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    bar = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task: list[Any] = []

    def update(done: int, total: int) -> None:
        if not task:
            bar.start()
            task.append(bar.add_task(label, total=total))
        bar.update(task[0], completed=done, total=total)

    try:
        yield update
    finally:
        if task:
            bar.stop()


@cli.command()
@click.option("--rebuild", is_flag=True, help="Drop the index and embed every memory again.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@pass_app
def index(app: AppContext, rebuild: bool, as_json: bool) -> None:
    """Bring the search index up to date with the memory files (local-recall/index/)."""
    if as_json or not sys.stderr.isatty():
        report = app.recall.sync_index(rebuild=rebuild)
    else:
        with console_progress() as update:
            report = app.recall.sync_index(rebuild=rebuild, progress=update)
    if as_json:
        emit_json(report.to_json())
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
    type=click.IntRange(min=1, max=MAX_LIMIT),
    default=None,
    help="At most N hits (default: [search] default_limit).",
)
@click.option(
    "--scope", default=None, help="Only memories for this scope (file:src/ = under src/)."
)
@click.option("--no-global", is_flag=True, help="With --scope: leave out global memories.")
@click.option(
    "--mode",
    type=click.Choice(MODES),
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
@click.option(
    "--org",
    "org",
    is_flag=True,
    help="Also search the org index ([org] uri): every repository's published memories.",
)
@click.option(
    "--live", is_flag=True, help="With --org: ask the store even when `org pull` made a copy."
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
    org: bool,
    live: bool,
    as_json: bool,
) -> None:
    """Find the memories that answer QUERY, best first. With --org, hits from other
    repositories are labelled with their repository."""
    wanted = SearchQuery(
        check_query_text(query),
        mode=mode,
        scope=scope,
        include_global=not no_global,
        limit=limit,
        min_score=min_score,
        kind=kind,
    )
    if not org and mode in ("hybrid", "semantic") and app.settings.layout.recall_dir.is_dir():
        model_notice(app.settings.layout.state_dir)  # the warm path (warm.py) found no daemon
    reply = search_reply(app.recall, wanted, org=("live" if live else True) if org else False)
    out, err = search_output(reply, as_json=as_json, org=org)
    for line in err:
        click.echo(line, err=True)
    skipped = skipped_files_notice(skipped_problems(reply), app.settings.root)
    if skipped:
        click.echo(skipped, err=True)
    click.echo(out, nl=False)
    for line in search_warnings(reply, as_json=as_json, query=wanted.text, org=org):
        click.echo(line, err=True)
