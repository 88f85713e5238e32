"""Which connections the viewer keeps (pure; server.py carries it out).

The viewer listens on a loopback TCP port any local user can reach without the token: ~1,100
connections that never finish their headers used to stay open until the daemon ran out of file
descriptors. So the viewer holds at most `max_connections`; a connection must send a whole
request within `header_seconds` of opening (or of its last response), a body within
`body_seconds`; and when a new connection finds the viewer full, the one that has waited
longest without sending a request is closed to make room — a real browser sends its request at
once, so a flood of idle connections cannot keep it out — and the newcomer is refused only when
every connection is serving a request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    max_connections: int = 64  # file descriptors the viewer may hold, whatever arrives
    header_seconds: float = 10.0  # to send a request's headers, after connecting or a response
    idle_seconds: float = 5.0  # keep-alive: an idle connection is closed after this
    body_seconds: float = 30.0  # to send a request's body
    max_body_bytes: int = 4_000_000  # a memory body is capped at 1 MB; JSON escaping grows it
    max_streams: int = 16  # live-update streams (events.py): never all of `max_connections`


REFUSE = -1


def make_room(waiting_since: Sequence[float | None], limits: Limits) -> int | None:
    """A connection arrived; `waiting_since` holds, for every connection open before it, when
    it started waiting for a request (None: serving one). None when there is room, the index
    of the connection to close (the longest waiting), or REFUSE: close the newcomer."""
    if len(waiting_since) < limits.max_connections:
        return None
    waiting = [(since, i) for i, since in enumerate(waiting_since) if since is not None]
    if not waiting:
        return REFUSE
    return min(waiting)[1]


def overdue(waiting_since: float | None, now: float, limits: Limits) -> bool:
    """Has a connection waited too long for its request's headers?"""
    return waiting_since is not None and now - waiting_since >= limits.header_seconds
