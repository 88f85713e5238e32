"""The full command line: importing the command modules registers them on the `cli` group of
app.py.

Errors: a `RecallError` becomes one line on stderr and exit 1; a usage error one line and exit 2;
anything unexpected one line (the traceback goes to recall.log) and exit 1."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import NoReturn

import click

from local_recall.cli import (  # noqa: F401  (registers)
    daemon,
    lifecycle,
    memories,
    org,
    review,
    search,
    setup,
    sync,
    ui,
    why,
)
from local_recall.cli.app import cli
from local_recall.errors import RecallError

__all__ = ["cli", "run_cli"]

log = logging.getLogger("local_recall.cli")


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
