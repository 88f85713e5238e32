"""The `local-recall` command line: a thin adapter over `Recall` (click is imported in this
package only). Commands are grouped by topic, one module each; importing `main` registers them
on the `cli` group of app.py.

This package's own import is light: `local-recall search` and `list` first try the running
daemon (warm.py, render.py) before click, the library or the model are imported."""

from __future__ import annotations

from typing import Any

__all__ = ["cli", "run_cli"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from local_recall.cli import main

        return getattr(main, name)
    raise AttributeError(name)
