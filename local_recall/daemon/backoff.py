"""How the query socket's accept loop waits out a failing accept() (pure state: no clock, no
I/O). Out of file descriptors (EMFILE) the pending connection stays queued and accept() fails
again at once: retried in a tight loop it logged ~7,700 warnings in seconds."""

from __future__ import annotations


class AcceptBackoff:
    """How long the accept loop waits after a failed accept (pure state: no clock, no I/O):
    doubling from 10 ms to 1 s while the failures last; `report` is true for the first failure
    of a streak only, so a streak is one log line and its end another."""

    FIRST, LAST = 0.01, 1.0

    def __init__(self) -> None:
        self.streak = 0

    def failed(self) -> tuple[float, bool]:
        """(seconds to wait, whether to log). No accept error is fixed by retrying at once."""
        self.streak += 1
        return min(self.LAST, self.FIRST * 2 ** (self.streak - 1)), self.streak == 1

    def succeeded(self) -> None:
        self.streak = 0
