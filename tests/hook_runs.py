"""Running a hook as Claude Code runs it (a subprocess, JSON on stdin) and standing in for its
daemon (the real QueryServer answering from literals): shared by the hook, safety, relevance
and lifecycle tests."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from local_recall.context.notes import Note
from local_recall.context.prompt import PromptAsk
from local_recall.context.session import SessionAsk, SessionNotes
from local_recall.daemon.hook_requests import answer_reply
from local_recall.daemon.query_client import POINTER_NAME, socket_paths
from local_recall.daemon.query_server import QueryServer
from tests.conftest import clean_env

MEMORY_ID = "0b7a4f7e-1c55-4b8a-9d7e-3f1f2c9a8e01"
HIT: dict[str, Any] = {
    "id": MEMORY_ID,
    "subject": "Use filelock for cross-process dedup",
    "score": 0.91,
    "applies_to": "global",
    "occurred_at": "2025-03-01T10:00:00Z",
    "keywords": ["filelock"],
    "snippet": "We use filelock ...",
    "tokens": 30,
    "kind": "episodic",
    "path": "/x.md",
    "body": "We use filelock because two sessions may save the same memory at once.",
}
NOTE: dict[str, Any] = {k: HIT[k] for k in ("id", "subject", "occurred_at", "applies_to")}
# A deadline no load reaches, for a test about what a hook answers rather than how soon: it
# waits for the answer instead of racing the hook's own 8 s on a busy machine.
PATIENT = {"LOCAL_RECALL_HOOK_DEADLINE_SECONDS": "120"}


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str
    seconds: float  # wall time: printed, never bounded (tests/test_no_wall_clock.py)
    cpu_seconds: float = 0.0  # the hook process's own CPU time, user + system

    def context(self) -> str:
        """The additionalContext of a hook's output (asserting the output is well-formed)."""
        data = json.loads(self.stdout)
        assert set(data) == {"hookSpecificOutput"}
        inner = data["hookSpecificOutput"]
        assert set(inner) == {"hookEventName", "additionalContext"}
        return str(inner["additionalContext"])


def hook_env(repo: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = clean_env(
        {
            "CLAUDE_PROJECT_DIR": str(repo),
            "CLAUDE_CONFIG_DIR": str(repo.parent / "claude-config"),
            "LOCAL_RECALL_HOOKS_START_DAEMON": "false",
            "LOCAL_RECALL_EXTRACTION_ENABLED": "false",
        }
    )
    env.update(extra or {})
    return env


def run_hook(
    event: str,
    stdin: bytes,
    repo: Path,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = 30,
) -> Ran:
    started, cpu = time.monotonic(), children_cpu_seconds()
    proc = subprocess.run(
        [sys.executable, "-m", "local_recall", "hook", event],
        input=stdin,
        capture_output=True,
        cwd=repo,
        env=dict(env) if env is not None else hook_env(repo),
        timeout=timeout,
    )
    return Ran(
        proc.returncode,
        proc.stdout.decode("utf-8"),
        proc.stderr.decode("utf-8", "replace"),
        time.monotonic() - started,
        children_cpu_seconds() - cpu,
    )


def children_cpu_seconds() -> float:
    """CPU time of this process's waited-for children: around one subprocess.run, that child's
    own. Unlike wall time it hardly moves when the machine is busy."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def prompt_input(prompt: str, repo: Path, session: str | None = None) -> bytes:
    """A UserPromptSubmit payload; each in a session of its own unless `session` is given (a
    session is shown a memory in full once: docs/hooks.md#once-per-session)."""
    return json.dumps(
        {
            "session_id": session or f"s-{uuid.uuid4()}",
            "transcript_path": str(repo / "t.jsonl"),
            "cwd": str(repo),
            "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        }
    ).encode()


def note_of(hit: Mapping[str, Any]) -> Note:
    """A literal hit as the daemon's search gives it to the answer code: its Note fields, the
    snippet for a body it lacks."""
    fields = {key: hit[key] for key in Note._fields if key in hit}
    fields.setdefault("body", hit.get("snippet", ""))
    fields.setdefault("occurred_at", "")
    fields.setdefault("applies_to", "global")
    fields["score"] = float(fields.get("score", 0.0))
    return Note(**fields)


class StandIn:
    """Answers like the daemon, from literals, and records what it was asked.

    A hook asks for its whole answer (op `answer`): the stand-in runs the daemon's own answer
    code (daemon/hook_requests.py) over searches that return the literals. `answers` holds
    those requests as they came; `requests` what the answer code asked its searches
    (`{"kind": "prompt" | "session_start", **the ask's fields}`) and every other request
    (`transcript_done`)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root
        self.requests: list[dict[str, Any]] = []
        self.answers: list[dict[str, Any]] = []
        # overrides every answer when set: {"ok": False, "error"} (the daemon's search failed),
        # or {"ok": True, "hits": [...]} (what its search found)
        self.reply: dict[str, Any] | None = None
        self.knows_answer = True  # False: a daemon of a version before the `answer` op
        self.edit_answer: Callable[[dict[str, Any]], dict[str, Any]] | None = None

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        if op == "answer" and self.knows_answer:
            return self._answer(request)
        self.requests.append(request)
        if op == "transcript_done":
            return {"ok": True, "queued": True}
        return {"ok": False, "error": f"unknown op {op!r}"}

    def _answer(self, request: dict[str, Any]) -> dict[str, Any]:
        self.answers.append(request)
        if self.reply is not None and self.reply.get("ok") is not True:
            return self.reply  # the daemon's search failed: so did its answer
        assert self.root is not None, "StandIn(root) answers hooks"
        reply = answer_reply(
            request,
            self.root.resolve(),
            prompt_notes=self._prompt_notes,
            session_notes=self._session_notes,
        )
        return reply if self.edit_answer is None else self.edit_answer(reply)

    def _prompt_notes(self, ask: PromptAsk) -> list[Note]:
        self.requests.append({"kind": "prompt", **ask._asdict()})
        hits = self.reply["hits"] if self.reply is not None else [HIT]
        return [note_of(hit) for hit in hits]

    def _session_notes(self, ask: SessionAsk) -> SessionNotes:
        self.requests.append({"kind": "session_start", **ask._asdict()})
        return SessionNotes(7, [note_of(NOTE)], [])


@contextlib.contextmanager
def served_as_daemon(
    repo: Path, handle: Callable[[dict[str, Any]], dict[str, Any]]
) -> Iterator[None]:
    """`handle` answers where the daemon would serve, announced the way it announces itself;
    `ping` says which root it serves, as the daemon's does (clients ask that first)."""
    pointer = repo / "local-recall" / "state" / POINTER_NAME
    root = str(repo.resolve())

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        if request.get("op") == "ping":
            return {"ok": True, "pid": os.getpid(), "root": root}
        return handle(request)

    server = QueryServer(socket_paths(repo.resolve(), hook_env(repo)), answer, pointer=pointer)
    server.start()
    try:
        yield
    finally:
        server.close()


def log_text(repo: Path) -> str:
    path = repo / "local-recall" / "recall.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def assert_clean(ran: Ran) -> None:
    """Exit 0; stdout empty or exactly one JSON object; nothing on stderr."""
    assert ran.returncode == 0
    assert ran.stderr == ""
    if ran.stdout:
        ran.context()
    assert "Traceback" not in ran.stdout
