"""The query socket: transport (real unix sockets, real threads) and request validation."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local_recall.daemon.query_client import ask, socket_paths
from local_recall.daemon.query_server import QueryServer, prepare_socket_dir
from local_recall.errors import InvalidInput, StorageError
from local_recall.repo.files import is_private_dir


@pytest.fixture
def sock_dir() -> Iterator[Path]:
    """A short private directory (tmp_path is too long for sun_path on some machines)."""
    base = Path(tempfile.mkdtemp(prefix="lrq", dir="/tmp"))
    try:
        yield base / "s"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def echo(request: dict[str, Any]) -> dict[str, Any]:
    if request.get("op") == "boom":
        raise RuntimeError("handler bug")
    if request.get("op") == "bad":
        raise InvalidInput("bad field")
    return {"ok": True, "echo": request}


@pytest.fixture
def server(sock_dir: Path) -> Iterator[QueryServer]:
    srv = QueryServer([sock_dir / "q.sock"], echo, request_timeout=2.0, max_request_bytes=10_000)
    srv.start()
    try:
        yield srv
    finally:
        srv.close()


def raw_exchange(path: Path, data: bytes, timeout: float = 2.0) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(path))
        sock.sendall(data)
        chunks = b""
        while not chunks.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks += chunk
        return chunks


def test_request_and_reply(server: QueryServer) -> None:
    assert server.path is not None
    reply = ask([server.path], {"op": "ping", "x": "é"}, 2.0)
    assert reply == {"ok": True, "echo": {"op": "ping", "x": "é"}}


def test_socket_and_directory_are_owner_only(server: QueryServer) -> None:
    assert server.path is not None
    assert stat.S_IMODE(os.stat(server.path.parent).st_mode) == 0o700
    assert stat.S_IMODE(os.lstat(server.path).st_mode) == 0o600
    assert stat.S_ISSOCK(os.lstat(server.path).st_mode)


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (b"this is not json\n", "not JSON"),
        (b"[1, 2]\n", "a request is a JSON object"),
        (b'{"op": "bad"}\n', "bad field"),
        (b'{"op": "boom"}\n', "internal error: RuntimeError"),
        (b"\xff\xfe\n", "not JSON"),
    ],
)
def test_bad_requests_get_an_error_and_the_server_lives_on(
    server: QueryServer, line: bytes, error: str
) -> None:
    assert server.path is not None
    reply = json.loads(raw_exchange(server.path, line))
    assert reply == {"ok": False, "error": error}
    assert ask([server.path], {"op": "ping"}, 2.0) == {"ok": True, "echo": {"op": "ping"}}


def test_oversized_request_is_refused(server: QueryServer) -> None:
    assert server.path is not None
    reply = json.loads(raw_exchange(server.path, b'{"op": "' + b"x" * 200_000))
    assert reply == {"ok": False, "error": "request too large"}
    assert ask([server.path], {"op": "ping"}, 2.0) is not None


def test_a_silent_client_does_not_block_others(sock_dir: Path) -> None:
    # The silent client is only dropped after an hour: a server that served one connection at
    # a time could not answer the other within any wait
    srv = QueryServer([sock_dir / "q.sock"], echo, request_timeout=3600)
    path = srv.start()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as idle:
            idle.connect(str(path))  # connects, never sends
            assert ask([path], {"op": "ping"}, 30.0) is not None
    finally:
        srv.close()


def test_concurrent_clients(server: QueryServer) -> None:
    assert server.path is not None
    path = server.path
    replies: list[Any] = []

    def client(i: int) -> None:
        replies.append(ask([path], {"op": "n", "i": i}, 5.0))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r["echo"]["i"] for r in replies) == list(range(20))


def test_several_requests_on_one_connection(server: QueryServer) -> None:
    assert server.path is not None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(2)
        sock.connect(str(server.path))
        sock.sendall(b'{"op": "a"}\n{"op": "b"}\n')
        data = b""
        while data.count(b"\n") < 2:
            data += sock.recv(4096)
    assert [json.loads(line)["echo"]["op"] for line in data.splitlines()] == ["a", "b"]


def test_close_removes_the_socket(sock_dir: Path) -> None:
    srv = QueryServer([sock_dir / "q.sock"], echo)
    path = srv.start()
    srv.close()
    assert not path.exists()
    assert ask([path], {"op": "ping"}, 0.5) is None


def test_stale_socket_file_is_replaced(sock_dir: Path) -> None:
    sock_dir.mkdir(mode=0o700)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(sock_dir / "q.sock"))  # bound, never listening: a killed daemon's leftover
    dead.close()
    srv = QueryServer([sock_dir / "q.sock"], echo)
    srv.start()
    try:
        assert ask([sock_dir / "q.sock"], {"op": "ping"}, 2.0) is not None
    finally:
        srv.close()


def test_a_live_socket_is_not_stolen(server: QueryServer) -> None:
    assert server.path is not None
    second = QueryServer([server.path], echo)
    with pytest.raises(StorageError, match="already serves"):
        second.start()


def test_client_refuses_a_directory_others_can_write(server: QueryServer) -> None:
    assert server.path is not None
    os.chmod(server.path.parent, 0o777)
    try:
        assert not is_private_dir(server.path.parent)
        assert ask([server.path], {"op": "ping"}, 1.0) is None
    finally:
        os.chmod(server.path.parent, 0o700)


def test_server_tightens_its_own_loose_directory(sock_dir: Path) -> None:
    sock_dir.mkdir(mode=0o755)
    os.chmod(sock_dir, 0o755)
    prepare_socket_dir(sock_dir)
    assert stat.S_IMODE(os.stat(sock_dir).st_mode) == 0o700


def test_client_gives_up_on_a_server_that_never_answers(sock_dir: Path) -> None:
    sock_dir.mkdir(mode=0o700)
    path = sock_dir / "hang.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    try:  # a client that ignored its timeout would wait here for ever (pytest's timeout)
        assert ask([path], {"op": "ping"}, 0.2) is None
    finally:
        listener.close()


def test_no_socket_means_no_answer_at_once(sock_dir: Path) -> None:
    sock_dir.mkdir(mode=0o700)
    # an hour's timeout: waiting out any of it for a socket that is not there would show
    assert ask([sock_dir / "missing.sock"], {"op": "ping"}, 3600.0) is None


def test_socket_paths_are_short_private_and_per_repo() -> None:
    long_runtime = "/run/user/1000/" + "x" * 120
    paths = socket_paths(Path("/home/u/repo"), {"XDG_RUNTIME_DIR": long_runtime}, uid=1000)
    assert [str(p.parent) for p in paths] == ["/tmp/local-recall-1000"]  # the long one is dropped
    both = socket_paths(Path("/home/u/repo"), {"XDG_RUNTIME_DIR": "/run/user/1000"}, uid=1000)
    assert [str(p.parent) for p in both] == [
        "/run/user/1000/local-recall",
        "/tmp/local-recall-1000",
    ]
    other = socket_paths(Path("/home/u/other"), {}, uid=1000)
    assert other[0].name != both[0].name and other[0].name.endswith(".sock")
    assert all(len(str(p).encode()) <= 107 for p in both)
    assert socket_paths(Path("/r"), {"XDG_RUNTIME_DIR": "relative"}, uid=1)[0].parent == Path(
        "/tmp/local-recall-1"
    )


def test_query_service_answers_from_the_library(repo: Path) -> None:
    from local_recall.daemon.query_service import QueryService
    from local_recall.recall import Recall
    from local_recall.settings import Settings
    from tests.conftest import clean_env

    recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
    scoped = recall.add("Parser quirk", "The parser drops BOMs.", scope="file:src/parser.py")
    general = recall.add("Use filelock", "Two sessions may save at once.")
    ended: list[str] = []
    queries: list[int] = []
    service = QueryService(
        recall,
        on_transcript_done=ended.append,
        describe=lambda: {"pid": 1},
        on_query=lambda: queries.append(1),
    )
    assert service.handle({"op": "ping"}) == {"ok": True, "pid": 1}
    # a hook's whole answer, decided with the hook's settings (none set here: the defaults)
    found = service.handle(answer_request("prompt", prompt="does the parser drop BOMs?"))
    assert found["ok"] and scoped.id[:8] in found["text"]
    assert found["shown"] is None and found["session_key"] is None  # no session: no record
    started = service.handle(answer_request("session_start", source="startup"))
    assert started["ok"] and general.id in started["text"] and scoped.id in started["text"]
    assert service.handle({"op": "transcript_done", "path": "/t/s.jsonl"}) == {
        "ok": True,
        "queued": True,
    }
    assert service.handle({"op": "transcript_done"})["ok"]
    assert ended == ["/t/s.jsonl", ""]
    assert queries == [1, 1]
    for bad in (
        {"op": "nope"},
        {"op": "search", "query": "an op that is no more"},
        {"op": "index_summary", "source": "startup"},
        {"op": "transcript_done", "path": 3},
        answer_request("prompt", prompt=5),
    ):
        with pytest.raises(InvalidInput):
            service.handle(bad)


def test_a_hook_without_a_daemon_answers_what_the_daemon_answers(repo: Path) -> None:
    """The hook's in-process ContextService and the daemon's give the same answer: one code
    path (context/hook_answers.py) over the same notes, the index or none."""
    from datetime import UTC, datetime

    from local_recall.context.hook_answers import prompt_answer, session_ask, session_start_answer
    from local_recall.context.hook_settings import read_hook_settings
    from local_recall.context.prompt import PromptAsk
    from local_recall.context.service import ContextService
    from local_recall.context.session import SessionAsk
    from local_recall.daemon.query_service import QueryService
    from local_recall.memory.drafts import make_draft
    from local_recall.memory.model import Provenance
    from local_recall.recall import Recall
    from local_recall.settings import Settings
    from tests.conftest import clean_env

    recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
    recall.add("Parser quirk", "The parser drops BOMs.", scope="file:src/parser.py")
    recall.add("Parser speed", "The parser streams lines.", reviewed=False)
    recall.add("Parser errors", "The parser raises ParseError with the line number.")
    recall.sync_index()
    first, second = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
    for session, when in ((first, 1), (second, 2)):
        recall.summaries.put(
            session,
            make_draft(
                subject=f"Session {session}",
                body="## Request\n\nFix the parser",
                keywords=["session-summary"],
                applies_to="global",
                occurred_at=datetime(2025, 3, when, tzinfo=UTC),
                source=f"transcript:{session}",
                provenance=Provenance(branch="main", session=session),
            ),
        )
    daemon = QueryService(recall, on_transcript_done=print, describe=dict)
    in_process = ContextService(recall, use_index=False)

    ask = PromptAsk("parser", limit=10, min_score=0.0)
    unreviewed = [n for n in in_process.prompt_notes(ask) if n.unreviewed]
    assert [n.subject for n in unreviewed] == ["Parser speed"]
    settings = read_hook_settings(recall.layout, {})
    for prompt in ("does the parser drop BOMs?", "what does the parser raise on errors?"):
        here = prompt_answer(
            prompt, settings, recall.layout, in_process.prompt_notes, print, tools=False
        )
        assert here is not None and here.text
        assert daemon.handle(answer_request("prompt", prompt=prompt))["text"] == here.text

    for source in ("startup", "resume", "compact", "clear"):
        session = SessionAsk(source, limit=2, summaries=5, session_id=first, branch="main")
        found = in_process.session_notes(session)
        assert found.total == 3 and len(found.notes) == 2
        continued = source in ("compact", "clear")  # the session id given is continued
        assert found.summaries[0].id == (first if continued else second)
        wanted = session_ask(settings, source, first, repo)
        here_text = session_start_answer(settings, wanted, in_process.session_notes(wanted))
        asked = answer_request("session_start", source=source, session_id=first)
        assert here_text and daemon.handle(asked)["text"] == here_text


def answer_request(kind: str, **fields: Any) -> dict[str, Any]:
    """A hook's `answer` request (daemon/hook_requests.py) with no LOCAL_RECALL_* set."""
    return {"op": "answer", "kind": kind, "agent": "claude_code", "hook_env": {}, **fields}


def test_pointer_file_names_the_bound_socket_while_serving(sock_dir: Path, tmp_path: Path) -> None:
    from local_recall.daemon.query_client import daemon_sockets, read_pointer

    state = tmp_path / "state"
    pointer = state / "daemon.socket"
    srv = QueryServer([sock_dir / "q.sock"], echo, pointer=pointer)
    path = srv.start()
    try:
        assert read_pointer(state) == path
        assert next(daemon_sockets(tmp_path, state, {})) == path  # the hashed paths come next
        pointer.unlink()  # someone cleaned state/: the daemon's tick writes it again
        srv.write_pointer()
        assert read_pointer(state) == path
    finally:
        srv.close()
    assert not pointer.exists()
    assert next(daemon_sockets(Path("/r"), state, {})).parent.name.startswith("local-recall")


def test_a_pointer_to_someone_elses_socket_is_left_alone(sock_dir: Path, tmp_path: Path) -> None:
    from local_recall.daemon.query_client import read_pointer

    pointer = tmp_path / "daemon.socket"
    srv = QueryServer([sock_dir / "q.sock"], echo, pointer=pointer)
    srv.start()
    pointer.write_text("/tmp/local-recall-0/another.sock\n")
    srv.close()
    assert read_pointer(tmp_path) == Path("/tmp/local-recall-0/another.sock")
    pointer.write_text("relative/path.sock\n")
    assert read_pointer(tmp_path) is None
