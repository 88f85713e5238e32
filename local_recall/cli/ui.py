"""`local-recall ui`: open the memory viewer in the browser (docs/ui.md). The repo's daemon
serves it; this starts the daemon when none runs, asks it for the viewer's URL over its private
socket, prints the URL and opens a browser unless `--no-browser`."""

from __future__ import annotations

import webbrowser
from pathlib import Path

import click

from local_recall.cli.app import AppContext, cli, pass_app
from local_recall.errors import RecallError

ASK_SECONDS = 30.0  # the first request starts the web server (and may wait for an index build)


@cli.command(name="ui")
@click.option("--no-browser", is_flag=True, help="Print the URL only; do not open a browser.")
@click.option(
    "--wait",
    "wait_seconds",
    type=float,
    default=None,
    help="Seconds to wait for a daemon to start [default: daemon.start_wait_seconds, 20].",
)
@pass_app
def ui(app: AppContext, no_browser: bool, wait_seconds: float | None) -> None:
    """Browse, search, review and edit memories in the browser (served on 127.0.0.1 only,
    behind a random token in the URL)."""
    from local_recall.daemon.control import start_daemon
    from local_recall.daemon.query_client import ask, daemon_sockets, socket_paths

    settings = app.settings
    from local_recall.cli.daemon import start_wait

    wait = start_wait(settings) if wait_seconds is None else wait_seconds
    started = start_daemon(settings, wait_seconds=wait)
    if not started.ready:
        raise RecallError(f"daemon did not start (pid {started.pid}): {started.detail}")
    sockets = daemon_sockets(settings.root, settings.layout.state_dir, settings.environ)
    reply = ask(sockets, {"op": "ui"}, ASK_SECONDS, root=settings.root)
    if reply is None:
        raise RecallError("the daemon did not answer; see local-recall/recall.log")
    url = reply.get("url")
    if reply.get("ok") is not True or not isinstance(url, str):
        raise RecallError(
            "the running daemon cannot serve the viewer "
            f"({reply.get('error', 'no url')}): restart it with `local-recall daemon stop`"
        )
    if no_browser:  # for another browser or a remote shell: the user's own terminal only
        click.echo(url)
        return
    base, token = str(reply.get("base") or url.partition("?")[0]), str(reply.get("token") or "")
    # The folders named after the root, never the pointer's: a clone may have committed one.
    page = _launcher(socket_paths(settings.root, settings.environ), settings.root, base, token)
    # The browser's command line (readable by every local user) holds the page's path, never
    # the token: docs/ui.md#security.
    click.echo(f"{base} (opened in your browser through {page}, readable only by you)")
    if not webbrowser.open(page.as_uri()):
        click.echo(
            "(no browser found: run `local-recall ui --no-browser` and open the URL it prints)",
            err=True,
        )


def _launcher(sockets: list[Path], root: Path, base: str, token: str) -> Path:
    """The token's page, in the daemon socket's private folder."""
    from local_recall.daemon.query_client import socket_name
    from local_recall.repo.files import is_private_dir
    from local_recall.web.launcher import write_launcher

    for socket in sockets:
        if is_private_dir(socket.parent):
            name = "viewer-" + socket_name(root).removesuffix(".sock") + ".html"
            return write_launcher(socket.parent, name, base, token)
    raise RecallError("no private folder for the viewer's page: run `local-recall ui --no-browser`")
