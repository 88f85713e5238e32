"""Org index commands: `publish` (and `org pull`, the local copy the prompt hook may search)."""

from __future__ import annotations

import sys

import click

from local_recall.cli.app import AppContext, cli, emit_json, pass_app
from local_recall.cli.search import console_progress


@cli.command()
@click.option(
    "--to",
    "to",
    default=None,
    metavar="URI",
    help="Where to publish (default: [org] uri / LOCAL_RECALL_ORG_URI), e.g. s3://bucket/recall.",
)
@click.option(
    "--name", default=None, help="This repository's dataset name (default: from its remote URL)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@pass_app
def publish(app: AppContext, to: str | None, name: str | None, as_json: bool) -> None:
    """Publish this repository's memories to the org index (only what changed). Credentials
    come from the standard AWS variables and files, never from local-recall's config."""
    recall = app.recall
    if as_json or not sys.stderr.isatty():
        report = recall.org.publish(to=to, name=name)
    else:
        with console_progress("embedding memories") as update:
            report = recall.org.publish(to=to, name=name, progress=update)
    if as_json:
        emit_json(report.to_json())
    else:
        where = f"{report.uri}/{report.dataset}"
        if report.wrote:
            click.echo(
                f"{where}: {report.upserted} written, {report.deleted} removed, "
                f"{report.memories} published (version {report.version_before} → "
                f"{report.version_after}) in {report.seconds:.2f} s"
                + (f" (recreated: {report.recreated})" if report.recreated else "")
            )
        else:
            click.echo(
                f"{where}: up to date, {report.memories} published (version "
                f"{report.version_after}, nothing written)"
            )
    for memory_id in report.withheld:
        click.echo(
            f"warning: memory {memory_id} holds what looks like a secret; not published "
            "(local-recall check)",
            err=True,
        )
