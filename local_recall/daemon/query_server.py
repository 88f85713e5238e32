"""The daemon's side of the query socket (protocol: see query_client.py).

`QueryServer` is transport only: a thread per connection, a per-connection timeout, a bounded
request size, and a handler that can raise anything without taking the server down. What the
requests mean is query_service.py's business.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from local_recall.daemon.backoff import AcceptBackoff
from local_recall.daemon.query_client import Reply, socket_paths
from local_recall.errors import RecallError, StorageError
from local_recall.repo.files import is_private_dir, read_text_nofollow, write_text_atomic

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 1_000_000
REQUEST_TIMEOUT_SECONDS = 10.0
MAX_CONNECTIONS = 32

Handler = Callable[[dict[str, Any]], Reply]


# --- transport ------------------------------------------------------------------------------


def prepare_socket_dir(directory: Path) -> None:
    """Create the socket directory 0700, or accept an existing one only if it is ours and
    private (tightening our own loose one). Raises StorageError otherwise."""
    try:
        directory.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(directory)
        if info.st_uid == os.getuid() and not is_private_dir(directory):
            os.chmod(directory, 0o700)
    except OSError as exc:
        raise StorageError(f"cannot create socket directory {directory}: {exc}") from None
    if not is_private_dir(directory):
        raise StorageError(f"{directory} is not a private directory owned by this user")


def _someone_listens(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(0.5)
        probe.connect(os.fspath(path))
        return True
    except OSError:
        return False
    finally:
        probe.close()


class QueryServer:
    """Newline-delimited JSON over a unix socket, one thread per connection."""

    def __init__(
        self,
        candidates: list[Path],
        handle: Handler,
        *,
        request_timeout: float = REQUEST_TIMEOUT_SECONDS,
        max_request_bytes: int = MAX_REQUEST_BYTES,
        max_connections: int = MAX_CONNECTIONS,
        pointer: Path | None = None,
    ) -> None:
        self._candidates = candidates
        self._pointer = pointer  # a file that tells clients the bound path (see query_client)
        self._handle = handle
        self._timeout = request_timeout
        self._max_bytes = max_request_bytes
        self._slots = threading.BoundedSemaphore(max_connections)
        self._sock: socket.socket | None = None
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None
        self.path: Path | None = None

    @classmethod
    def for_root(
        cls, root: Path, environ: Mapping[str, str], handle: Handler, *, pointer: Path | None
    ) -> QueryServer:
        return cls(socket_paths(root, environ), handle, pointer=pointer)

    def start(self) -> Path:
        """Bind the first usable candidate path and serve in a background thread."""
        errors: list[str] = []
        for path in self._candidates:
            try:
                self._sock = self._bind(path)
            except StorageError as exc:
                errors.append(str(exc))
                continue
            self.path = path
            break
        if self._sock is None:
            raise StorageError("no usable socket path: " + "; ".join(errors))
        self._thread = threading.Thread(target=self._accept_loop, name="query-accept", daemon=True)
        self._thread.start()
        self.write_pointer()
        return self.path  # type: ignore[return-value]

    def write_pointer(self) -> None:
        """(Re)write the pointer file unless it already names our socket."""
        if self._pointer is None or self.path is None:
            return
        with contextlib.suppress(OSError, ValueError):
            if read_text_nofollow(self._pointer, 4096).strip() == str(self.path):
                return
        try:
            write_text_atomic(self._pointer, f"{self.path}\n")
        except RecallError as exc:  # read-only checkout: clients fall back to the hash paths
            log.warning("cannot write %s: %s", self._pointer, exc)

    def _remove_pointer(self) -> None:
        if self._pointer is None or self.path is None:
            return
        with contextlib.suppress(OSError, ValueError):
            if read_text_nofollow(self._pointer, 4096).strip() == str(self.path):
                self._pointer.unlink()

    def _bind(self, path: Path) -> socket.socket:
        prepare_socket_dir(path.parent)
        if os.path.lexists(path):
            if _someone_listens(path):
                raise StorageError(f"another process already serves {path}")
            with contextlib.suppress(OSError):
                os.unlink(path)  # left by a daemon that was killed
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(os.fspath(path))
            os.chmod(path, 0o600)
            sock.listen(64)
            sock.settimeout(0.5)  # lets the accept loop notice close()
        except OSError as exc:
            sock.close()
            raise StorageError(f"cannot listen on {path}: {exc}") from None
        return sock

    def close(self) -> None:
        self._closing.set()
        if self.path is not None:
            _someone_listens(self.path)  # a connection wakes accept() so the loop sees closing
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        if self._sock is not None:
            self._sock.close()
        self._remove_pointer()
        if self.path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.path)

    def _accept_loop(self) -> None:
        assert self._sock is not None
        backoff = AcceptBackoff()
        while not self._closing.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError as exc:
                if self._closing.is_set():
                    return
                # Out of descriptors (EMFILE) or memory: the connection stays queued, and
                # accept() would fail again at once — ~7,700 warnings a second.
                # Wait, longer each time, and say so once per streak.
                delay, report = backoff.failed()
                if report:
                    log.warning("query socket accept failed: %s; backing off", exc)
                self._closing.wait(delay)
                continue
            if backoff.streak:
                log.warning("query socket accepts again after %d failed attempts", backoff.streak)
            backoff.succeeded()
            if self._closing.is_set():
                conn.close()
                return
            if not self._slots.acquire(blocking=False):
                self._send(conn, {"ok": False, "error": "busy"})
                conn.close()
                continue
            threading.Thread(
                target=self._serve, args=(conn,), name="query-conn", daemon=True
            ).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(self._timeout)
            buffer = b""
            while not self._closing.is_set():
                newline = buffer.find(b"\n")
                if newline < 0:
                    if len(buffer) > self._max_bytes:
                        self._send(conn, {"ok": False, "error": "request too large"})
                        return
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    buffer += chunk
                    continue
                line, buffer = buffer[:newline], buffer[newline + 1 :]
                if line.strip():
                    self._send(conn, self._answer(line))
        except OSError:
            pass  # client went away or timed out: nothing to answer
        finally:
            conn.close()
            self._slots.release()

    def _answer(self, line: bytes) -> Reply:
        try:
            request = json.loads(line)
        except ValueError:
            return {"ok": False, "error": "not JSON"}
        if not isinstance(request, dict):
            return {"ok": False, "error": "a request is a JSON object"}
        try:
            return self._handle(request)
        except RecallError as exc:
            return {"ok": False, "error": str(exc)}
        except Exception as exc:  # a bad request must never take the daemon down
            log.exception("query failed: %s", request.get("op"))
            return {"ok": False, "error": f"internal error: {type(exc).__name__}"}

    @staticmethod
    def _send(conn: socket.socket, reply: Reply) -> None:
        data = json.dumps(reply, ensure_ascii=False, default=str).encode("utf-8") + b"\n"
        with contextlib.suppress(OSError):
            conn.sendall(data)
