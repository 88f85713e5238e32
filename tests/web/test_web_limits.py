"""The viewer's limits: which connections it keeps, decided over literals;
then the real uvicorn server on a real socket — a body over the cap refused by its
Content-Length or while it streams, a half-sent request closed at its deadline, a crowd of idle
connections never holding more than the cap while a real request still gets through — and the
log's rate limit and the query socket's back-off."""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from local_recall.daemon.backoff import AcceptBackoff
from local_recall.logs import RepeatFilter
from local_recall.web.admission import REFUSE, Limits, make_room, overdue
from tests.waiting import Ceiling

SMALL = Limits(max_connections=4, header_seconds=1.0, idle_seconds=1.0)

# --- decisions over literals ----------------------------------------------------------------------


def test_room_is_made_by_closing_the_longest_idle_connection() -> None:
    assert make_room([1.0, None, 3.0], SMALL) is None  # 3 open, cap 4: room
    assert make_room([5.0, None, 2.0, 9.0], SMALL) == 2  # the oldest waiting one goes
    assert make_room([None, None, None, None], SMALL) == REFUSE  # all serving: refuse the new
    assert not overdue(None, 100.0, SMALL)  # serving a request: never overdue
    assert overdue(10.0, 11.0, SMALL) and not overdue(10.0, 10.5, SMALL)


def test_accept_backs_off_doubling_and_reports_once_per_streak() -> None:
    backoff = AcceptBackoff()
    delays = [backoff.failed() for _ in range(10)]
    assert [d for d, _ in delays][:4] == [0.01, 0.02, 0.04, 0.08]
    assert delays[-1][0] == 1.0  # capped
    assert [report for _, report in delays] == [True] + [False] * 9
    backoff.succeeded()
    assert backoff.failed() == (0.01, True)


def test_repeated_warnings_are_rate_limited_with_a_count() -> None:
    limit = RepeatFilter(window=60, burst=3)

    def record(at: float, msg: str = "accept failed: %s", level: int = logging.WARNING) -> str:
        """'' when dropped, else the message as it will be written."""
        rec = logging.LogRecord("x", level, __file__, 1, msg, ("EMFILE",), None)
        rec.created = at
        return str(rec.msg) if limit.filter(rec) else ""

    burst = [record(t / 1000) for t in range(7700)]  # 7,700 in 7.7 s
    assert [m for m in burst if m] == ["accept failed: %s"] * 3
    assert record(61.0) == "accept failed: %s (7697 like it suppressed)"  # the next window
    assert record(1.0, "another message") == "another message"  # another kind: its own count
    assert all(record(1.0, "info", logging.INFO) for _ in range(50))  # INFO is never limited


# --- the real server -------------------------------------------------------------------------


@contextlib.contextmanager
def serving(tmp_path: Path, limits: Limits) -> Iterator[tuple[int, str]]:
    from local_recall.recall import Recall
    from local_recall.settings import Settings
    from local_recall.web.server import WebServer

    root = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    recall = Recall.open(settings=Settings(root=root, environ={}))
    recall.init()
    recall.add("Deploy with make ship", "We deploy by running make ship.")
    web = WebServer(recall, lambda q: recall.query(q, use_index=False), limits=limits)
    web.start()
    try:
        yield web.port, web.token
    finally:
        web.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[int, str]]:
    with serving(tmp_path, SMALL) as running:
        yield running


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    return sock


def response_head(sock: socket.socket, timeout: float = 10) -> bytes:
    sock.settimeout(timeout)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def post_head(port: int, token: str, extra: str) -> bytes:
    return (
        f"POST /api/review/accept HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"X-Recall-Token: {token}\r\nContent-Type: application/json\r\n{extra}\r\n"
    ).encode()


def test_a_body_over_the_cap_is_refused_by_its_length_unread(server: tuple[int, str]) -> None:
    port, token = server
    sock = connect(port)
    sock.sendall(post_head(port, token, "Content-Length: 300000000\r\n"))
    head = response_head(sock)  # answered though not one byte of the body is ever sent
    assert head.startswith(b"HTTP/1.1 413"), head
    sock.close()


def test_a_streamed_body_is_counted_and_cut_at_the_cap(server: tuple[int, str]) -> None:
    port, token = server
    sock = connect(port)
    sock.sendall(post_head(port, token, "Transfer-Encoding: chunked\r\n"))
    chunk = b"x" * 1_000_000
    sent = 0
    head = b""
    try:
        for _ in range(300):  # up to 300 MB, if nobody stops us
            sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            sent += len(chunk)
            sock.settimeout(0.01)
            try:
                head = sock.recv(65536)
            except TimeoutError:
                continue
            if head:
                break
    except (BrokenPipeError, ConnectionResetError):
        pass
    head = head or response_head(sock)
    assert head.startswith(b"HTTP/1.1 413"), head
    assert sent <= 12_000_000, sent  # the 4 MB cap plus what the socket buffers held
    sock.close()


def test_a_half_sent_request_is_closed_at_its_deadline(server: tuple[int, str]) -> None:
    port, _ = server
    sock = connect(port)
    sock.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: ".encode())
    # Dribble a byte every 0.2 s (it keeps uvicorn's own timer alive) for up to 20x the
    # deadline: the server must close the request while it is still coming in.
    for dribbled in range(int(20 * SMALL.header_seconds / 0.2)):
        try:
            sock.sendall(b"a")
        except OSError:
            break
        time.sleep(0.2)
    else:
        pytest.fail(f"still open after {dribbled + 1} bytes dribbled")
    sock.settimeout(5)
    try:
        closed = sock.recv(1) == b""
    except ConnectionResetError:
        closed = True
    assert closed
    sock.close()


def test_idle_connections_never_hold_more_than_the_cap(tmp_path: Path) -> None:
    # Deadlines of an hour: only the cap can close the crowd's connections, so the test may
    # wait for that (polling, a generous ceiling) instead of a fixed 0.5 s on a busy machine
    patient = Limits(max_connections=4, header_seconds=3600, idle_seconds=3600)
    with serving(tmp_path, patient) as (port, token):
        crowd = [connect(port) for _ in range(40)]
        for sock in crowd:
            sock.sendall(b"GET / HTTP/1.1\r\n")  # never finished

        def alive() -> int:
            count = 0
            for sock in crowd:
                sock.setblocking(False)
                try:
                    count += sock.recv(1, socket.MSG_PEEK) != b""
                except BlockingIOError:
                    count += 1
                except OSError:
                    pass
            return count

        ceiling = Ceiling()
        while alive() > patient.max_connections and not ceiling.passed():
            time.sleep(0.1)
        assert alive() <= patient.max_connections
        real = connect(port)
        real.sendall(
            f"GET /api/counts HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Recall-Token: {token}\r\n"
            "Connection: close\r\n\r\n".encode()
        )
        answer = response_head(real)
        assert answer.startswith(b"HTTP/1.1 200"), answer
        body = answer.split(b"\r\n\r\n", 1)[1] or real.recv(65536)
        counts = json.loads(body)
        assert (counts["unreviewed"], counts["stale"]) == (0, 0)
        for sock in [*crowd, real]:
            sock.close()


def counts_answer(port: int, token: str) -> bytes:
    """The head and body of GET /api/counts on a new connection (b"" when refused)."""
    real = connect(port)
    try:
        real.sendall(
            f"GET /api/counts HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Recall-Token: {token}\r\n"
            "Connection: close\r\n\r\n".encode()
        )
        return response_head(real)
    except OSError:
        return b""
    finally:
        real.close()


def open_stream(port: int, token: str) -> socket.socket | None:
    """An event stream, as a page (or someone with the token) opens it; None when refused."""
    sock = connect(port)
    try:
        sock.sendall(
            f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Recall-Token: {token}\r\n"
            "Accept: text/event-stream\r\n\r\n".encode()
        )
        if response_head(sock, timeout=5).startswith(b"HTTP/1.1 200"):
            return sock
    except OSError:
        pass
    sock.close()
    return None


@pytest.mark.parametrize("count", [30, 300])
def test_open_event_streams_never_keep_the_api_out(tmp_path: Path, count: int) -> None:
    """Every stream once held a connection for good, and 300 of them (default limits)
    left none for the API. A new stream now ends the oldest past `max_streams`, and the
    connection it held is idle again: the first to go when the viewer is full."""
    limits = SMALL if count == 30 else Limits()
    with serving(tmp_path, limits) as (port, token):
        streams = [open_stream(port, token) for _ in range(count)]
        opened = [s for s in streams if s is not None]
        answer = counts_answer(port, token)
        for sock in opened:
            sock.close()
    assert answer.startswith(b"HTTP/1.1 200"), answer
    assert len(opened) == count  # every page still gets its stream (the oldest ones end)
