"""The background daemon's commands: `daemon start|stop|status|run` (docs/daemon.md)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from local_recall.capture.health import ExtractionHealth, describe, read_health
from local_recall.cli.app import AppContext, cli, emit_json, pass_app
from local_recall.errors import RecallError

if TYPE_CHECKING:
    from local_recall.settings import Settings


@cli.group()
def daemon() -> None:
    """The per-repo background daemon: warm searches for the hooks, watches memories and
    transcripts, runs the extraction pipeline."""


@daemon.command(name="start")
@click.option(
    "--wait",
    "wait_seconds",
    type=float,
    default=None,
    help="Seconds to wait until it answers [default: daemon.start_wait_seconds, 20].",
)
@pass_app
def daemon_start(app: AppContext, wait_seconds: float | None) -> None:
    """Start the daemon in the background (no-op if one already runs)."""
    from local_recall.daemon.control import start_daemon

    wait = start_wait(app.settings) if wait_seconds is None else wait_seconds
    result = start_daemon(app.settings, wait_seconds=wait)
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
    from local_recall.daemon.control import stop_daemon

    result = stop_daemon(app.settings.layout, wait_seconds=wait_seconds)
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
    from local_recall.daemon.control import read_status

    layout = app.settings.layout
    status = read_status(layout)
    health = read_health(layout.state_dir, app.settings.clock()) or ExtractionHealth()
    if as_json:
        emit_json({**status.to_json(), "extraction": health.to_json()})
    elif not status.running:
        click.echo("not running")
        click.echo(f"  extraction: {describe(health)}")
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
        click.echo(f"  extraction: {describe(health)}")
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


def start_wait(settings: Settings) -> float:
    """`[daemon] start_wait_seconds` (a loaded machine may need more than 20 s for a new
    daemon's imports); the default when config.toml does not parse."""
    from local_recall.repo.config import load_config_or_defaults

    config, _ = load_config_or_defaults(
        settings.layout.config_path, settings.environ, user_path=settings.user_config_path
    )
    return config.daemon.start_wait_seconds
