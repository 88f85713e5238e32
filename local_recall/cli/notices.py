"""One-line notices (for stderr) that a command changed what the user gave it: secrets redacted
(the kind, never the value), comma-separated keywords split."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from local_recall.errors import InvalidMemoryFile
from local_recall.logs import escape_controls
from local_recall.memory.repair import is_fixable
from local_recall.redaction.findings import redacted_kinds


def redaction_notice(given: Iterable[str], stored: Iterable[str]) -> str | None:
    """One line saying which kinds of secret were redacted (never a value), or None."""
    kinds = redacted_kinds(given, stored)
    total = sum(kinds.values())
    if not total:
        return None
    listed = ", ".join(f"{kind} ×{n}" if n > 1 else kind for kind, n in sorted(kinds.items()))
    noun = "secret" if total == 1 else "secrets"
    return (
        f"local-recall: redacted {total} {noun} ({listed}): the file holds [REDACTED:<kind>] "
        "instead of the value"
    )


def split_keywords(values: Sequence[str]) -> list[str]:
    """`-k a,b -k c` → [a, b, c]: a comma separates keywords as a repeated option does."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def skipped_files_notice(problems: Sequence[InvalidMemoryFile], root: Path) -> str | None:
    """One line: the memory files `list`/`search` did not read, and what to do about them."""
    if not problems:
        return None

    def shown(problem: InvalidMemoryFile) -> str:
        try:
            where = problem.path.relative_to(root)
        except ValueError:
            where = problem.path
        return escape_controls(f"{where} ({problem.reason})")

    fix = (
        "; `local-recall doctor --fix` renames or completes it"
        if any(is_fixable(p.reason) for p in problems)
        else "; `local-recall doctor` says more"
    )
    if len(problems) == 1:
        return f"local-recall: 1 memory file skipped: {shown(problems[0])}{fix}"
    return (
        f"local-recall: {len(problems)} memory files skipped, e.g. {shown(problems[0])}"
        f"{fix.replace(' it', ' them')}"
    )
