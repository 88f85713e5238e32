"""The click group every command hangs on, the per-invocation context and output helpers."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import click

from local_recall import __version__
from local_recall.errors import InvalidInput
from local_recall.logs import log_to_repo
from local_recall.memory.timestamps import parse_timestamp
from local_recall.recall import Recall
from local_recall.settings import Settings


class AppContext:
    """Per-invocation state: the settings, resolved once from --root and the environment, and
    the lazily opened library."""

    def __init__(self, root: str | None) -> None:
        self.root_option = root
        self._settings: Settings | None = None
        self._recall: Recall | None = None

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = Settings.discover(self.root_option)
        return self._settings

    @property
    def recall(self) -> Recall:
        if self._recall is None:
            self._recall = Recall.open(settings=self.settings)
            log_to_repo(self._recall)
        return self._recall


pass_app = click.make_pass_decorator(AppContext)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def parse_when(value: str | None, option: str) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_timestamp(value)
    except InvalidInput:
        raise InvalidInput(f"{option}: expected an ISO date or time, got {value!r}") from None


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
