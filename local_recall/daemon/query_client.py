"""Asking the daemon: newline-delimited JSON over a unix socket (socket + json only).

The prompt hook imports this on every prompt, so it stays light. Protocol (one request per line,
one reply per line, UTF-8 JSON objects):

    {"op": "ping"}                                   -> {"ok": true, "pid", "version", "root"}
    {"op": "answer", "kind": "prompt" | "session_start", ...}
                                                     -> {"ok": true, "text", "shown"}: a hook's
                                                        whole answer (daemon/hook_requests.py)
    {"op": "transcript_done", "path"}                -> {"ok": true, "queued": true}
    {"op": "ui"}                                     -> {"ok": true, "url", "base", "token"}
                                                        (daemon/ui.py)
    {"op": "cli_search" | "cli_why" | "cli_list", ...}
                                                     -> a warm `local-recall search` / `why` /
                                                        `list` (daemon/cli_queries.py)
    anything wrong                                   -> {"ok": false, "error": "..."}

The socket lives outside the repository because sun_path holds 108 bytes: in
`$XDG_RUNTIME_DIR/local-recall/` (else `/tmp/local-recall-<uid>/`), mode 0700, named by a hash
of the resolved repo root; the daemon writes the path it bound into
`local-recall/state/daemon.socket` so that clients need not compute it. A client only talks to a
socket in a directory owned by its own user and closed to others: anything else could feed the
model forged memories. And since that pointer is a file in the checkout — a clone may have
committed one naming another repository's daemon of the same user — a client given the root asks
`ping` first on the same connection and sends its request only when the daemon serves that root.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from local_recall.repo.files import is_private_dir, read_text_nofollow

SUN_PATH_MAX = 107  # bytes, without the terminating NUL
MAX_REPLY_BYTES = 16 * 1024 * 1024
_DIR_NAME = "local-recall"
POINTER_NAME = "daemon.socket"  # in local-recall/state/: the socket path of the running daemon

Reply = dict[str, Any]


def socket_dirs(environ: Mapping[str, str], uid: int) -> list[Path]:
    """Where sockets may live, preferred first: the per-user runtime dir, then /tmp."""
    dirs: list[Path] = []
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime):
        dirs.append(Path(runtime) / _DIR_NAME)
    dirs.append(Path("/tmp") / f"{_DIR_NAME}-{uid}")  # noqa: S108 - private 0700 dir, checked
    return dirs


def socket_name(root: Path) -> str:
    import hashlib  # ~3 ms: only the daemon and the no-pointer path pay it

    digest = hashlib.sha256(os.fsencode(str(root))).hexdigest()[:24]
    return f"{digest}.sock"


def socket_paths(root: Path, environ: Mapping[str, str], uid: int | None = None) -> list[Path]:
    """Candidate socket paths for the repo at `root` (already resolved), preferred first; only
    those short enough for sun_path. Client and daemon may see different environments (a
    terminal vs an IDE), so the client tries each; the daemon binds the first it can use."""
    owner = os.getuid() if uid is None else uid
    name = socket_name(root)
    return [
        directory / name
        for directory in socket_dirs(environ, owner)
        if len(os.fsencode(str(directory / name))) <= SUN_PATH_MAX
    ]


def read_pointer(state_dir: Path) -> Path | None:
    """The socket path the running daemon wrote into `state/daemon.socket`, if any."""
    try:
        text = read_text_nofollow(state_dir / POINTER_NAME, 4096).strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not os.path.isabs(text) or len(os.fsencode(text)) > SUN_PATH_MAX:
        return None
    return Path(text)


def daemon_sockets(root: Path, state_dir: Path, environ: Mapping[str, str]) -> Iterator[Path]:
    """Where to ask this repo's daemon: the path it wrote in state/ (one small file read, no
    hashing), then — only if that one does not answer for `root` — the candidate paths (a
    daemon that could not write state/, a stale or forged pointer). Give `ask` the root."""
    pointed = read_pointer(state_dir)
    if pointed is not None:
        yield pointed
    yield from (path for path in socket_paths(root, environ) if path != pointed)


def ask(
    paths: Iterable[Path], message: Mapping[str, Any], timeout: float, *, root: Path | None = None
) -> Reply | None:
    """Send one request and return the reply, or None when no daemon answered in `timeout`
    seconds (no socket, nobody listening, unsafe directory, a hang, or a garbled reply).

    With `root`, a socket counts only when its daemon's `ping` names that root: the request
    (a prompt, a transcript path, the session's environment) is never sent to any other."""
    deadline = time.monotonic() + timeout
    payload = json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n"
    for path in paths:
        if not is_private_dir(path.parent):
            continue
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(remaining)
            try:
                sock.connect(os.fspath(path))
            except (FileNotFoundError, ConnectionRefusedError):
                continue  # no daemon behind this path; try the next one
            if root is not None:
                hello = _exchange(sock, _PING, deadline)
                if hello is None or hello.get("ok") is not True:
                    return hello  # garbled, or "busy": as for any request
                if hello.get("root") != str(root):
                    continue  # another repository's daemon: try this root's own paths
                if message.get("op") == "ping":
                    return hello
            return _exchange(sock, payload, deadline)
        except OSError:  # includes TimeoutError: a hung daemon counts as none
            return None
        finally:
            sock.close()
    return None


_PING = b'{"op": "ping"}\n'


def _exchange(sock: socket.socket, payload: bytes, deadline: float) -> Reply | None:
    sock.sendall(payload)
    return _read_reply(sock, deadline)


def _read_reply(sock: socket.socket, deadline: float) -> Reply | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        sock.settimeout(remaining)
        chunk = sock.recv(65536)
        if not chunk:
            break
        newline = chunk.find(b"\n")
        if newline >= 0:
            chunks.append(chunk[:newline])
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            return None
    try:
        reply = json.loads(b"".join(chunks))
    except ValueError:
        return None
    return reply if isinstance(reply, dict) else None
