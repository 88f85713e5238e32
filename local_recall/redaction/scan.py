"""Scanning committed files (`local-recall scan`, the pre-commit hook)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from local_recall.errors import ScanTargetUnreadable
from local_recall.redaction.engine import find_secrets
from local_recall.redaction.findings import FileFinding
from local_recall.redaction.private import private_tags


def scan_paths(paths: Iterable[str | Path]) -> list[FileFinding]:
    """Secrets, and `<private>` tags that escaped the store, in the given files; directories are
    searched for `*.md`. Raises ScanTargetUnreadable for a path that cannot be read: skipping it
    would report "clean" for a file nobody looked at."""
    findings: list[FileFinding] = []
    for path in _expand(paths):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise ScanTargetUnreadable(path, exc.strerror or str(exc)) from exc
        findings += [FileFinding(path, f.line, f.kind) for f in find_secrets(text)]
        findings += [
            FileFinding(path, text.count("\n", 0, at) + 1, "private-span")
            for at in private_tags(text)
        ]
    return sorted(findings, key=lambda f: (str(f.path), f.line, f.kind))


def _expand(paths: Iterable[str | Path]) -> Iterator[Path]:
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*.md") if p.is_file())
        else:
            yield path
