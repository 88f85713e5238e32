"""`sync`: one pass of the extraction pipeline in the foreground (docs/pipeline.md)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from local_recall.capture.health import describe, read_health
from local_recall.cli.app import AppContext, cli, emit_json, pass_app
from local_recall.errors import RecallError

PassProgress = Callable[[int, int, str], None]


@contextlib.contextmanager
def pass_progress(enabled: bool) -> Iterator[PassProgress | None]:
    """A rich bar on stderr over the transcripts a pass works on (None: no bar)."""
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("[bold]sync[/bold] {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=False,
    )
    task: list[Any] = []

    def update(done: int, total: int, label: str) -> None:
        if not task:
            task.append(bar.add_task("transcripts", total=max(total, 1)))
        if total == 0:
            bar.update(task[0], completed=1, description="nothing new")
        else:
            bar.update(task[0], completed=done, description=label[:36] or "done")

    with bar:
        yield update


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the pass report as JSON.")
@click.option(
    "--transcript",
    "transcript",
    type=click.Path(dir_okay=False),
    default=None,
    help="Process only this transcript file.",
)
@click.option(
    "--ended",
    "ended",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="This transcript's session ended (or is being compacted): summarise it now.",
)
@pass_app
def sync(app: AppContext, as_json: bool, transcript: str | None, ended: tuple[str, ...]) -> None:
    """Extract memories from new Claude Code transcript turns (one pass, in the foreground).
    Exit 1 when something failed (it is retried by a later pass)."""
    import signal

    from local_recall.capture.pipeline import ALREADY_RUNNING

    stop = {"requested": False}

    def on_term(signum: int, frame: object) -> None:  # finish the current chunk, then stop
        stop["requested"] = True

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        with pass_progress(not as_json and sys.stderr.isatty()) as progress:
            report = app.recall.sync_transcripts(
                progress=progress,
                only_path=Path(transcript) if transcript else None,
                should_stop=lambda: stop["requested"],
                ended=[Path(path) for path in ended],
            )
    finally:
        signal.signal(signal.SIGTERM, previous)
    if as_json:
        health = read_health(app.recall.layout.state_dir, app.settings.clock())
        emit_json({**report.to_json(), "extraction": health.to_json() if health else None})
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
            + (f", {report.summaries_written} summaries" if report.summaries_written else "")
            + f" ({report.seconds:.1f} s)"
        )
        if report.stopped:
            click.echo(f"stopped early: {report.stopped.replace('_', ' ')}", err=True)
    if report.stopped == "already_running":
        raise RecallError(ALREADY_RUNNING)
    if not as_json:
        for line in (*report.notes, *report.errors):
            click.echo(f"local-recall: {line}", err=True)
        health = read_health(app.recall.layout.state_dir, app.settings.clock())
        if health is not None and not health.ok:  # e.g. "5 skipped": they wait for a retry
            click.echo(f"local-recall: extraction {describe(health)}", err=True)
    if report.errors:
        sys.exit(1)
