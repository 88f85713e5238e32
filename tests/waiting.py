"""The suite's one way to wait for something: poll the condition, give up only at a
hang guard. A ceiling here is never a speed limit: it only turns a hang into a failure with a
message, so it is generous (minutes), and it is the one place in tests/ that compares the clock
with a deadline (tests/test_no_wall_clock.py names it as the exception)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

HANG_CEILING_SECONDS = 300.0


class Ceiling:
    """A hang guard for a loop that cannot be a `wait_for` (it awaits, or polls a process):
    `ceiling.check(what)` on each turn raises once the ceiling has passed."""

    def __init__(self, seconds: float = HANG_CEILING_SECONDS) -> None:
        self.seconds = seconds
        self._deadline = time.monotonic() + seconds

    def passed(self) -> bool:
        return time.monotonic() >= self._deadline

    def check(self, what: str) -> None:
        if self.passed():
            raise AssertionError(f"{what} (hang guard: not within {self.seconds:g} s)")


def wait_for(
    condition: Callable[[], T],
    seconds: float = HANG_CEILING_SECONDS,
    *,
    step: float = 0.1,
    what: str = "condition not met",
) -> T:
    """`condition`'s first true value, polled every `step`; AssertionError at the hang guard."""
    ceiling = Ceiling(seconds)
    while True:
        value = condition()
        if value:
            return value
        ceiling.check(what)
        time.sleep(step)
