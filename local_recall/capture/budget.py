"""The day's extraction spend against its budget, a file of its own beside the progress
(`state/budget.json`; `[extraction] daily_max_calls` / `daily_max_tokens`, UTC days): pure
decisions over `DailySpend` values (`budget_allows`, `calls_left`, `record_spend`; the caller
passes `today`) and the small file that carries the spend between passes (`load_daily_spend`,
`save_daily_spend`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

from local_recall.repo.files import read_bytes_nofollow, write_text_atomic

BUDGET_FILENAME = "budget.json"


@dataclass(frozen=True, slots=True)
class BudgetLimits:
    """Mirrors `[extraction] daily_max_calls` / `daily_max_tokens`; 0 means no limit."""

    max_calls: int = 0
    max_tokens: int = 0  # input + output


@dataclass(frozen=True, slots=True)
class DailySpend:
    date: date
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


def budget_allows(spent: DailySpend, limits: BudgetLimits, today: date) -> bool:
    """Whether one more extraction call may start today. Spend of another day counts as 0."""
    if spent.date != today:
        return True
    if limits.max_calls and spent.calls >= limits.max_calls:
        return False
    return not (limits.max_tokens and spent.input_tokens + spent.output_tokens >= limits.max_tokens)


def calls_left(spent: DailySpend, limits: BudgetLimits, today: date) -> int | None:
    """Calls still allowed today (None: unlimited); 0 when the token budget is spent."""
    if not budget_allows(spent, limits, today):
        return 0
    if not limits.max_calls:
        return None
    used = spent.calls if spent.date == today else 0
    return limits.max_calls - used


def record_spend(
    spent: DailySpend, today: date, *, calls: int = 1, input_tokens: int = 0, output_tokens: int = 0
) -> DailySpend:
    """Add one call's usage; a new day starts from zero."""
    base = spent if spent.date == today else DailySpend(today)
    return replace(
        base,
        calls=base.calls + calls,
        input_tokens=base.input_tokens + input_tokens,
        output_tokens=base.output_tokens + output_tokens,
    )


def load_daily_spend(path: Path, today: date) -> DailySpend:
    """The stored spend; a missing or unreadable file counts as nothing spent today (the file
    is a soft guard and is rewritten whole on the next save)."""
    try:
        data = json.loads(read_bytes_nofollow(path))
        return DailySpend(
            date=date.fromisoformat(str(data["date"])),
            calls=_count(data.get("calls")),
            input_tokens=_count(data.get("input_tokens")),
            output_tokens=_count(data.get("output_tokens")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return DailySpend(today)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def save_daily_spend(path: Path, spent: DailySpend) -> None:
    """Atomic (`repo.files`): a reader sees the old spend or the new one. Raises StorageError."""
    data = {
        "date": spent.date.isoformat(),
        "calls": spent.calls,
        "input_tokens": spent.input_tokens,
        "output_tokens": spent.output_tokens,
    }
    write_text_atomic(path, json.dumps(data, indent=2) + "\n")
