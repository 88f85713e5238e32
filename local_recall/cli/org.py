"""Org index commands: `publish`, `org pull` (the local copy the prompt hook may search) and
`org forget` (a dataset an earlier name or remote left behind)."""

from __future__ import annotations

import sys

import click

from local_recall.cli.app import AppContext, cli, emit_json, pass_app
from local_recall.cli.render import printable
from local_recall.cli.search import console_progress
from local_recall.org.plan import shown_uri


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


@cli.group(name="org")
def org_group() -> None:
    """The org index: a local copy for the prompt hook (docs/org.md)."""


@org_group.command()
@click.option("--from", "source", default=None, metavar="URI", help="Default: [org] uri.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@pass_app
def pull(app: AppContext, source: str | None, as_json: bool) -> None:
    """Copy the org index into local-recall/state/org-mirror/ (what changed only), for the
    prompt hook's opt-in ([org] hook = true): searching it makes no request."""
    report = app.recall.org.pull(source)
    for note in report.notes:
        click.echo(f"warning: {printable(note)}", err=True)
    if as_json:
        emit_json(report.to_json())
        return
    click.echo(
        f"{report.uri}: {report.datasets} repositories copied ({report.rows} memories), "
        f"{report.unchanged} unchanged, {report.removed} removed in {report.seconds:.2f} s"
    )


@org_group.command()
@click.argument("name")
@click.option("--from", "source", default=None, metavar="URI", help="Default: [org] uri.")
@click.option("--json", "as_json", is_flag=True, help="Print what was removed as JSON.")
@pass_app
def forget(app: AppContext, name: str, source: str | None, as_json: bool) -> None:
    """Remove the dataset NAME from the org index: the one a repository published under an
    earlier name or remote (its memories are listed twice until then). Its own memories in
    its repository are untouched; `org pull` then drops it from the local copy."""
    uri = app.recall.org.forget(name, source)
    if as_json:
        emit_json({"forgotten": name, "uri": shown_uri(uri)})
    else:
        click.echo(f"{shown_uri(uri)}/{name}: removed")
