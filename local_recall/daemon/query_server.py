"""The daemon's side of the query socket (protocol: see query_client.py).

`QueryServer` is transport only: a thread per connection, a per-connection timeout, a bounded
request size, and a handler that can raise anything without taking the server down.
`QueryService` maps requests onto the library (`Recall.query`, `Recall.list`) — the same calls
the CLI and the MCP server make, kept warm in one process.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from local_recall.claude_code.hook_context import SESSION_CANDIDATES, Note, rank_for_session
from local_recall.claude_code.summary_context import SummaryNote, pick_summaries
from local_recall.daemon.query_client import Reply, is_private_dir, socket_paths
from local_recall.errors import InvalidInput, RecallError, StorageError
from local_recall.lifecycle.service import Life
from local_recall.memory.model import Memory, format_timestamp
from local_recall.repo.files import read_text_nofollow, write_text_atomic
from local_recall.search.limits import MAX_LIMIT, MAX_QUERY_CHARS
from local_recall.search.query import SearchHit, SearchQuery, SearchResult

if TYPE_CHECKING:
    from local_recall.recall import Recall

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
        while not self._closing.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError as exc:
                if self._closing.is_set():
                    return
                log.warning("query socket accept failed: %s", exc)
                continue
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


# --- requests -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    limit: int | None
    scope: str | None
    min_score: float | None
    with_body: bool


def parse_search_request(request: Mapping[str, Any]) -> SearchRequest:
    """Validate a search request's fields; InvalidInput names the bad one. The query is a
    prompt, not typed for search: its head (MAX_QUERY_CHARS) is what is searched."""
    query = request.get("query")
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("search: 'query' must be a non-empty string")
    limit = request.get("limit")
    if limit is not None and (
        not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT
    ):
        raise InvalidInput(f"search: 'limit' must be an integer from 1 to {MAX_LIMIT}")
    scope = request.get("scope")
    if scope is not None and not isinstance(scope, str):
        raise InvalidInput("search: 'scope' must be a string")
    min_score = request.get("min_score")
    if min_score is not None and (
        not isinstance(min_score, int | float) or isinstance(min_score, bool)
    ):
        raise InvalidInput("search: 'min_score' must be a number")
    return SearchRequest(
        query=query[:MAX_QUERY_CHARS],
        limit=limit,
        scope=scope,
        min_score=None if min_score is None else float(min_score),
        with_body=request.get("with_body") is True,
    )


def parse_summary_limit(request: Mapping[str, Any]) -> int:
    limit = request.get("limit", SESSION_CANDIDATES)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise InvalidInput("index_summary: 'limit' must be a positive integer")
    return min(limit, 10 * SESSION_CANDIDATES)


class QueryService:
    """Answers requests with one long-lived Recall (warm embedder, open index)."""

    def __init__(
        self,
        recall: Recall,
        *,
        on_transcript_done: Callable[[str], None],
        describe: Callable[[], dict[str, Any]],
        on_query: Callable[[], None] = lambda: None,
    ) -> None:
        self._recall = recall
        # Serialises searches (one Searcher is not meant for concurrent use) and swaps.
        self._lock = threading.Lock()
        self._on_transcript_done = on_transcript_done
        self._describe = describe
        self._on_query = on_query

    def handle(self, request: dict[str, Any]) -> Reply:
        op = request.get("op")
        if op == "ping":
            return {"ok": True, **self._describe()}
        if op == "search":
            self._on_query()
            parsed = parse_search_request(request)
            result = self.search(parsed)
            return {
                "ok": True,
                "hits": [_hit_json(hit, with_body=parsed.with_body) for hit in result.hits],
                "degraded": result.degraded_reason,
            }
        if op == "index_summary":
            self._on_query()
            source = request.get("source")
            total, notes = self.index_summary(
                source if isinstance(source, str) else "startup", parse_summary_limit(request)
            )
            reply: Reply = {"ok": True, "total": total, "notes": [n.to_json() for n in notes]}
            reply["summaries"] = [n.to_json() for n in self.summaries(request, source)]
            return reply
        if op == "transcript_done":
            path = request.get("path", "")  # only a trigger: the pass finds the transcripts
            if not isinstance(path, str):
                raise InvalidInput("transcript_done: 'path' must be a string")
            self._on_transcript_done(path)
            return {"ok": True, "queued": True}
        raise InvalidInput(f"unknown op {op!r}")

    def swap(self, recall: Recall) -> Recall:
        """Serve from `recall` from now on; returns the one served before."""
        with self._lock:
            previous, self._recall = self._recall, recall
        return previous

    def search(self, request: SearchRequest) -> SearchResult:
        query = SearchQuery(
            request.query, scope=request.scope, limit=request.limit, min_score=request.min_score
        )
        if self._recall.config.org.hook:  # opt-in: the local copy `org pull` made (docs/org.md)
            with self._lock:
                return self._recall.query(query, sync=False, org="mirror")
        return self.query(query)

    def query(self, query: SearchQuery) -> SearchResult:
        """Any search on the warm side (the socket's, and the browser viewer's: daemon/ui.py)."""
        # sync=False: the daemon's watchers keep the index current; a query never waits for it
        with self._lock:
            return self._recall.query(query, sync=False)

    def summaries(self, request: Mapping[str, Any], source: object) -> list[SummaryNote]:
        """The session summaries SessionStart shows first (an old hook asks for none)."""
        count, session, branch = (request.get(k) for k in ("summaries", "session_id", "branch"))
        if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
            return []
        with self._lock:
            recall = self._recall
        return pick_summaries(
            [summary_note(m) for m in recall.session_summaries()],
            source=source if isinstance(source, str) else "startup",
            session_id=session if isinstance(session, str) else "",
            branch=branch if isinstance(branch, str) else None,
            count=min(count, 20),
        )

    def index_summary(self, source: str, limit: int) -> tuple[int, list[Note]]:
        with self._lock:
            recall = self._recall
        memories = recall.list()  # reads the store only: no need to hold up searches
        lives = recall.lifecycle.life_of(memories)  # the cached snapshot: no git
        notes = [memory_note(m, life) for m, life in zip(memories, lives, strict=True)]
        return len(notes), rank_for_session(notes, source)[:limit]


def _hit_json(hit: SearchHit, *, with_body: bool) -> dict[str, Any]:
    """A hit for the hook; an org hit's subject names its repository (the hook shows the
    subject, and a memory of another repository must not read as one of this one's)."""
    data = hit.to_json(with_body=with_body)
    if hit.repo is not None:
        data["subject"] = f"[{hit.repo}] {hit.subject}"
    return data


def summary_note(memory: Memory) -> SummaryNote:
    """A session summary as the SessionStart hook shows it."""
    return SummaryNote(
        id=memory.id,
        subject=memory.subject,
        occurred_at=format_timestamp(memory.occurred_at),
        body=memory.body,
        branch=memory.branch or "",
        commit=memory.commit or "",
    )


def memory_note(memory: Memory, life: Life | None = None) -> Note:
    """A listed Memory as a Note (no body: the index shows subjects only), flagged stale or
    unmerged from the lifecycle cache."""
    return Note(
        id=memory.id,
        subject=memory.subject,
        occurred_at=format_timestamp(memory.occurred_at),
        applies_to=memory.applies_to,
        stale=(life.stale or "") if life else "",
        branch=(life.branch or "") if life else "",
        unreviewed=memory.unreviewed,
        superseded_by=memory.superseded_by or "",
    )
