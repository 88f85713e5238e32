"""Extraction pipeline: pure planners (literals), the state file, and whole passes.

End-to-end passes run the REAL Claude Code CLI as the extractor against tests/fake_anthropic.py,
over copies of the real transcripts in tests/fixtures/claude-code/."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from filelock import FileLock

from local_recall.capture.extraction.attempts import RetryPolicy
from local_recall.capture.extraction.claude_cli import ClaudeCliExtractor
from local_recall.capture.extraction.prompt import CandidateMemory, ExtractionResult
from local_recall.capture.pipeline import ALREADY_RUNNING
from local_recall.capture.pipeline_plan import (
    Observed,
    PassPlan,
    WorkItem,
    is_near_duplicate,
    is_quiet,
    memory_text,
    plan_chunks,
    plan_pass,
    retry_delay,
    similarity,
    thinking_entries,
)
from local_recall.capture.progress import PipelineState, TranscriptState, advanced, failed
from local_recall.capture.progress_file import load_state, prefix_fingerprint, save_state
from local_recall.capture.report import PassReport
from local_recall.capture.transcripts.model import (
    ParsedTranscript,
    ParseStats,
    ToolCall,
    ToolResult,
    TranscriptFile,
    Turn,
)
from local_recall.capture.transcripts.project_dirs import encode_project_dir
from local_recall.errors import ExtractionFailed
from local_recall.recall import Recall
from local_recall.search.embedders import MiniLMEmbedder
from local_recall.search.query import SearchQuery
from local_recall.settings import Settings
from tests.claude_cli import claude_or_fail, offline_env, requires_claude
from tests.conftest import clean_env
from tests.fake_anthropic import (
    STRUCTURED_OUTPUT_TOOL,
    FakeAnthropic,
    Reply,
    error_reply,
    text_reply,
    tool_names,
    tool_use_reply,
    visible_text,
)
from tests.transcript_fixtures import T01, T02, T03, T04, T04_AGENT, T04_SESSION, T05
from tests.waiting import Ceiling

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
OLD_NS = int((NOW - timedelta(hours=1)).timestamp() * 1e9)  # quiet for an hour
FRESH_NS = int((NOW - timedelta(seconds=5)).timestamp() * 1e9)  # written 5 s ago


def _state(*entries: TranscriptState, paused_until: datetime | None = None) -> PipelineState:
    return PipelineState(MappingProxyType({e.path: e for e in entries}), paused_until)


def _entry(path: str, **kw: object) -> TranscriptState:
    base: dict[str, object] = {
        "session_id": Path(path).stem,
        "offset": 100,
        "read_from": 40,
        "prefix_hash": "h100",
        "size": 100,
        "mtime_ns": OLD_NS,
    }
    base.update(kw)
    return TranscriptState(path=path, **base)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------
# plan_pass
# ------------------------------------------------------------------------------------------


def test_new_appended_rewritten_unchanged_and_vanished() -> None:
    on_disk = [
        Observed("/t/new.jsonl", "new", 50, OLD_NS + 3),
        Observed("/t/grew.jsonl", "grew", 180, OLD_NS + 2, prefix_hash="h100"),
        Observed("/t/edited.jsonl", "edited", 180, OLD_NS + 1, prefix_hash="other"),
        Observed("/t/shrunk.jsonl", "shrunk", 60, OLD_NS + 4, prefix_hash=None),
        Observed("/t/same.jsonl", "same", 100, OLD_NS, prefix_hash="h100"),
    ]
    state = _state(
        _entry("/t/grew.jsonl"),
        _entry("/t/edited.jsonl"),
        _entry("/t/shrunk.jsonl"),
        _entry("/t/same.jsonl"),
        _entry("/t/gone.jsonl", memory_ids=("m1",)),
    )
    plan = plan_pass(on_disk, state, NOW)
    assert plan == PassPlan(
        work=(  # oldest file first
            WorkItem("/t/edited.jsonl", "edited", "rewritten", 0, 0),
            WorkItem("/t/grew.jsonl", "grew", "appended", 40, 100),
            WorkItem("/t/new.jsonl", "new", "new", 0, 0),
            WorkItem("/t/shrunk.jsonl", "shrunk", "rewritten", 0, 0),
        ),
        unchanged=("/t/same.jsonl",),
        waiting=(),
        deferred=(),
        vanished=("/t/gone.jsonl",),
    )


def test_partial_last_line_is_not_work_again_until_the_file_changes() -> None:
    # offset < size: the last line had no newline yet. Same size and mtime: nothing new.
    state = _state(_entry("/t/a.jsonl", offset=90, size=100))
    plan = plan_pass([Observed("/t/a.jsonl", "a", 100, OLD_NS, "h90")], state, NOW)
    assert plan.work == () and plan.unchanged == ("/t/a.jsonl",)


def test_backoff_waits_then_retries_an_unchanged_file() -> None:
    failed = _entry("/t/a.jsonl", attempts=2, next_retry_at=NOW + timedelta(minutes=3))
    on_disk = [Observed("/t/a.jsonl", "a", 100, OLD_NS, "h100")]
    assert plan_pass(on_disk, _state(failed), NOW).waiting == ("/t/a.jsonl",)
    later = plan_pass(on_disk, _state(failed), NOW + timedelta(minutes=4))
    assert later.work == (WorkItem("/t/a.jsonl", "a", "appended", 40, 100),)


def test_backoff_also_holds_a_file_that_grew() -> None:
    failed = _entry("/t/a.jsonl", attempts=1, next_retry_at=NOW + timedelta(minutes=1))
    plan = plan_pass([Observed("/t/a.jsonl", "a", 300, FRESH_NS, "h100")], _state(failed), NOW)
    assert plan.work == () and plan.waiting == ("/t/a.jsonl",)


def test_no_budget_or_pause_defers_all_work() -> None:
    on_disk = [Observed("/t/b.jsonl", "b", 10, OLD_NS + 1), Observed("/t/a.jsonl", "a", 10, OLD_NS)]
    spent = plan_pass(on_disk, _state(), NOW, calls_left=0)
    assert spent.work == () and spent.deferred == ("/t/a.jsonl", "/t/b.jsonl")
    assert plan_pass(on_disk, _state(), NOW, calls_left=1).work != ()
    paused = _state(paused_until=NOW + timedelta(seconds=30))
    assert plan_pass(on_disk, paused, NOW).deferred == ("/t/a.jsonl", "/t/b.jsonl")
    assert len(plan_pass(on_disk, paused, NOW + timedelta(minutes=1)).work) == 2


def test_turns_waiting_for_min_turns_are_sent_once_the_session_is_quiet() -> None:
    waiting = _entry("/t/a.jsonl", pending_turns=1, mtime_ns=FRESH_NS)
    live = plan_pass([Observed("/t/a.jsonl", "a", 100, FRESH_NS, "h100")], _state(waiting), NOW)
    assert live.work == ()
    quiet = _entry("/t/a.jsonl", pending_turns=1, mtime_ns=OLD_NS)
    plan = plan_pass([Observed("/t/a.jsonl", "a", 100, OLD_NS, "h100")], _state(quiet), NOW)
    assert plan.work == (WorkItem("/t/a.jsonl", "a", "idle", 40, 100),)


def test_retry_delay_doubles_up_to_a_cap() -> None:
    assert retry_delay(0) == timedelta(0)
    assert [retry_delay(n) for n in (1, 2, 3)] == [
        timedelta(minutes=5),
        timedelta(minutes=10),
        timedelta(minutes=20),
    ]
    assert retry_delay(50) == timedelta(hours=6)


def test_quiet_is_measured_from_the_last_write() -> None:
    written = int(NOW.timestamp() * 1e9)
    assert not is_quiet(written, NOW + timedelta(minutes=9), timedelta(minutes=10))
    assert is_quiet(written, NOW + timedelta(minutes=10), timedelta(minutes=10))


def test_progress_after_a_failure_and_after_success() -> None:
    entry = TranscriptState("/t/a.jsonl", "a", offset=10, read_from=5, memory_ids=("m1",))
    failed_once = failed(entry, "boom " * 200, retry_at=NOW)
    assert (failed_once.attempts, failed_once.failures) == (1, 1)
    assert failed_once.next_retry_at == NOW and len(failed_once.last_error or "") == 500
    done = advanced(failed_once, 90, 120, "h90", NOW, ("m2", "m1"), ("t1",))
    assert (done.offset, done.read_from, done.prefix_hash) == (90, 90, "h90")
    assert (done.memory_ids, done.thinking_ids) == (("m1", "m2"), ("t1",))
    assert (done.attempts, done.failures, done.next_retry_at, done.last_error) == (0, 1, None, None)
    assert done.processed_at == NOW


# ------------------------------------------------------------------------------------------
# plan_chunks
# ------------------------------------------------------------------------------------------


def _turn(n: int, role: str, text: str, start: int, end: int, **kw: object) -> Turn:
    return Turn(
        uuid=f"u{n}",
        role=role,  # type: ignore[arg-type]
        timestamp=NOW + timedelta(seconds=n),
        text=text,
        session_id="s1",
        start_offset=start,
        end_offset=end,
        **kw,  # type: ignore[arg-type]
    )


CONVERSATION = (
    _turn(1, "user", "How do we run the tests?", 0, 100),
    _turn(2, "assistant", "Use make test; it wraps pytest.", 100, 200),
    _turn(3, "user", "Why does the db test fail?", 200, 300),
    _turn(4, "assistant", "It needs PGHOST set to the socket dir.", 300, 400),
)


def test_only_new_turns_are_sent_after_context() -> None:
    plan = plan_chunks(
        CONVERSATION, offset=200, end_offset=450, min_turns=2, session_over=False, max_chars=4000
    )
    assert plan.action == "extract" and plan.new_turns == 2
    (only,) = plan.chunks
    assert only.chunk.turn_uuids == ("u3", "u4")
    assert only.end_offset == 450  # the last chunk covers trailing bookkeeping lines
    assert only.read_from == 200  # the next pass re-reads the last two turns as context
    text = only.chunk.text
    assert text.index("Use make test") < text.index("[New turns]") < text.index("PGHOST")


def test_too_few_new_turns_wait_while_the_session_is_live() -> None:
    args = {"offset": 300, "end_offset": 400, "min_turns": 2, "max_chars": 4000}
    live = plan_chunks(CONVERSATION, session_over=False, **args)
    assert (live.action, live.chunks, live.new_turns, live.end_offset) == ("wait", (), 1, 300)
    over = plan_chunks(CONVERSATION, session_over=True, **args)
    assert over.action == "extract" and over.chunks[0].chunk.turn_uuids == ("u4",)


def test_nothing_to_send_advances_without_a_call() -> None:
    plan = plan_chunks(
        CONVERSATION, offset=400, end_offset=520, min_turns=1, session_over=False, max_chars=4000
    )
    assert (plan.action, plan.chunks, plan.end_offset) == ("advance", (), 520)


def test_several_chunks_each_store_the_offset_of_their_last_turn() -> None:
    long = tuple(
        _turn(
            i, "user" if i % 2 else "assistant", f"message {i} " + "x" * 300, i * 100, i * 100 + 100
        )
        for i in range(1, 9)
    )
    plan = plan_chunks(
        long, offset=0, end_offset=950, min_turns=1, session_over=False, max_chars=800
    )
    assert len(plan.chunks) > 1
    ends = [c.end_offset for c in plan.chunks]
    assert ends == sorted(ends) and ends[-1] == 950
    for planned in plan.chunks[:-1]:
        last_uuid = planned.chunk.turn_uuids[-1]
        assert planned.end_offset == next(t.end_offset for t in long if t.uuid == last_uuid)
    sent = [u for c in plan.chunks for u in c.chunk.turn_uuids]
    assert sent == [t.uuid for t in long]  # every new turn exactly once


def test_tool_only_turns_do_not_count_towards_min_turns() -> None:
    turns = (
        _turn(1, "assistant", "", 0, 50, tool_calls=(ToolCall("Bash", "ls"),)),
        _turn(2, "user", "", 50, 90, tool_results=(ToolResult(True, "a.txt"),)),
    )
    plan = plan_chunks(
        turns, offset=0, end_offset=90, min_turns=1, session_over=False, max_chars=4000
    )
    assert plan.action == "wait" and plan.new_turns == 0


# ------------------------------------------------------------------------------------------
# near-duplicates
# ------------------------------------------------------------------------------------------

EXISTING = {
    "m1": memory_text(
        "Run tests with make test",
        "The test suite runs with `make test`, which wraps pytest with the right flags.",
    ),
    "m2": memory_text(
        "Postgres tests need PGHOST",
        "Database tests fail unless PGHOST points at the socket directory /var/run/postgresql.",
    ),
}


def test_rephrased_copy_is_a_near_duplicate() -> None:
    candidate = memory_text(
        "Run the tests with make test",
        "The test suite runs with `make test` which wraps pytest with the right flags",
    )
    assert is_near_duplicate(candidate, EXISTING, 0.9) == "m1"


def test_different_fact_is_not_a_near_duplicate() -> None:
    candidate = memory_text(
        "Postgres tests need PGPORT",
        "Integration tests against MySQL need a running container started by docker compose.",
    )
    assert is_near_duplicate(candidate, EXISTING, 0.9) is None


def test_short_memory_inside_a_long_one_is_not_a_copy() -> None:
    # token_set_ratio alone would say 100: every word of the short one is in the long one.
    short = memory_text("make test", "runs pytest")
    assert similarity(short, EXISTING["m1"]) < 0.9
    assert is_near_duplicate(short, EXISTING, 0.9) is None


def test_threshold_one_disables_the_check() -> None:
    assert is_near_duplicate(EXISTING["m1"], EXISTING, 1.0) is None
    assert is_near_duplicate(EXISTING["m1"], EXISTING, 0.99) == "m1"


# ------------------------------------------------------------------------------------------
# thinking entries
# ------------------------------------------------------------------------------------------


def test_thinking_entry_keeps_thinking_and_answer_verbatim() -> None:
    turns = (
        _turn(1, "user", "Which port?", 0, 100),
        _turn(2, "assistant", "Port 8080.", 100, 200, thinking="The config says 8080.\nCheck env."),
        _turn(
            3,
            "assistant",
            "",
            200,
            300,
            thinking="List files.",
            tool_calls=(ToolCall("Bash", "ls"),),
        ),
    )
    entries = thinking_entries(turns, offset=100)
    assert [e.subject for e in entries] == [
        "Thinking: The config says 8080.",
        "Thinking: List files.",
    ]
    assert entries[0].body == (
        "## Prompt\n\nWhich port?\n\n## Thinking\n\nThe config says 8080.\nCheck env."
        "\n\n## Answer\n\nPort 8080."
    )
    assert entries[1].body.endswith("## Answer\n\n[tool] Bash: ls")
    assert entries[0].occurred_at == NOW + timedelta(seconds=2)
    assert thinking_entries(turns, offset=300) == []  # all already processed


# ------------------------------------------------------------------------------------------
# state file
# ------------------------------------------------------------------------------------------


def test_state_round_trips(tmp_path: Path) -> None:
    entry = _entry(
        "/t/a.jsonl",
        memory_ids=("m1", "m2"),
        thinking_ids=("t1",),
        pending_turns=1,
        attempts=2,
        failures=3,
        next_retry_at=NOW,
        last_error="boom",
        processed_at=NOW,
    )
    state = _state(entry, paused_until=NOW)
    save_state(tmp_path, state)
    loaded = load_state(tmp_path)
    assert loaded.problem is None
    assert loaded.state.get("/t/a.jsonl") == entry
    assert loaded.state.paused_until == NOW


def test_missing_state_is_empty(tmp_path: Path) -> None:
    loaded = load_state(tmp_path)
    assert loaded.state == PipelineState() and loaded.problem is None


def test_corrupt_state_is_set_aside_and_starts_over(tmp_path: Path) -> None:
    (tmp_path / "pipeline.json").write_text('{"version": 1, "transcripts": {"/a": {"off', "utf-8")
    loaded = load_state(tmp_path)
    assert loaded.state.transcripts == {} and loaded.problem is not None
    assert (tmp_path / "pipeline.json.corrupt").exists()
    assert not (tmp_path / "pipeline.json").exists()


def test_one_bad_entry_is_dropped_alone(tmp_path: Path) -> None:
    good = _entry("/t/good.jsonl").to_json()
    data = {"version": 1, "transcripts": {"/t/good.jsonl": good, "/t/bad.jsonl": {"offset": -5}}}
    (tmp_path / "pipeline.json").write_text(json.dumps(data), "utf-8")
    loaded = load_state(tmp_path)
    assert list(loaded.state.transcripts) == ["/t/good.jsonl"]
    assert loaded.problem is not None and "1 malformed" in loaded.problem


def test_prefix_fingerprint_sees_rewrites_but_not_appends(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    head = b'{"a": 1}\n' * 20_000  # 180 kB: beyond the sampled head and tail
    path.write_bytes(head)
    before = prefix_fingerprint(path, len(head))
    with path.open("ab") as stream:
        stream.write(b'{"b": 2}\n')
    assert prefix_fingerprint(path, len(head)) == before  # appended: same prefix
    path.write_bytes(b'{"x": 1}\n' + head[9:] + b'{"b": 2}\n')  # first line changed
    assert prefix_fingerprint(path, len(head)) != before
    path.write_bytes(head[:-9] + b'{"z": 9}\n')  # the end of the processed part changed
    assert prefix_fingerprint(path, len(head)) != before
    path.write_bytes(head[:100])
    assert prefix_fingerprint(path, len(head)) is None  # shorter than what was processed


# ==========================================================================================
# Whole passes
# ==========================================================================================

NEW_TURNS = "[New turns]"
SECRET = "sk-ant-api03-" + "Zq7Xk2LmN9pR4tV8wY1bC5dF3gH6jK0sA2eU4iO7" * 2 + "AA"
PRIVATE = "PRIVATE-MARKER-7f3a"


def _session_of(src: Path) -> str:
    for raw in src.read_text("utf-8").splitlines():
        entry = json.loads(raw)
        if isinstance(entry, dict) and entry.get("sessionId"):
            return str(entry["sessionId"])
    raise AssertionError(f"no sessionId in {src}")


def install(src: Path, projects: Path, repo: Path, *, rel: str | None = None) -> Path:
    """Copy a real transcript to `<config>/projects/<encoded repo>/<session>.jsonl` (or `rel`),
    with every `cwd` rewritten to the test repository."""
    target = projects / encode_project_dir(str(repo)) / (rel or f"{_session_of(src)}.jsonl")
    lines = []
    for raw in src.read_text("utf-8").splitlines():
        entry = json.loads(raw)
        if isinstance(entry, dict) and "cwd" in entry:
            entry["cwd"] = str(repo)
        lines.append(json.dumps(entry, ensure_ascii=False))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + "\n", "utf-8")
    return target


def exchange_entries(
    repo: Path, session: str, when: datetime, prompt: str, content: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """A user prompt and the assistant message answering it (`content` blocks), shaped like
    Claude Code's JSONL entries."""
    stamp = when.isoformat().replace("+00:00", "Z")
    common = {"cwd": str(repo), "sessionId": session, "isSidechain": False, "timestamp": stamp}
    return [
        {
            **common,
            "type": "user",
            "uuid": str(uuid.uuid4()),
            "message": {"role": "user", "content": prompt},
        },
        {
            **common,
            "type": "assistant",
            "uuid": str(uuid.uuid4()),
            "message": {
                "id": f"msg_{uuid.uuid4().hex[:12]}",
                "role": "assistant",
                "model": "claude-test",
                "content": content,
            },
        },
    ]


def append_exchange(
    path: Path, repo: Path, prompt: str, answer: str, *, thinking: str | None = None
) -> None:
    """Append one user prompt and one assistant answer, shaped like Claude Code's entries."""
    content: list[dict[str, Any]] = []
    if thinking:
        content.append({"type": "thinking", "thinking": thinking, "signature": "sig"})
    content.append({"type": "text", "text": answer})
    entries = exchange_entries(repo, _session_of(path), datetime.now(UTC), prompt, content)
    with path.open("a", encoding="utf-8") as stream:
        for entry in entries:
            stream.write(json.dumps(entry) + "\n")


def new_part(body: Mapping[str, Any]) -> str:
    """The condensed transcript's new turns as the model saw them."""
    seen = visible_text(body)
    start = seen.find("<transcript>")
    part = seen[start:] if start >= 0 else seen
    return part.split(NEW_TURNS, 1)[1] if NEW_TURNS in part else part


def echo_memories(body: Mapping[str, Any]) -> dict[str, Any]:
    """A cooperative model: one memory per new user prompt, echoing that exchange (the prompt
    and what followed it) into the body, so whatever reaches the model can reach a file."""
    exchanges: list[list[str]] = []
    for line in new_part(body).strip().splitlines():
        line = line.removeprefix("[subagent] ")
        if line.startswith("User: "):
            exchanges.append([line])
        elif exchanges and line.strip():
            exchanges[-1].append(line)
    return {
        "memories": [
            {
                "subject": f"The user asked: {lines[0][len('User: ') :][:80]}",
                "body": "Exchange:\n" + "\n".join(lines),
                "keywords": ["session"],
                "applies_to": "global",
            }
            for lines in exchanges
        ]
    }


def model(structured: Callable[[Mapping[str, Any]], Mapping[str, Any]]) -> Callable[[Any], Reply]:
    def respond(body: Any) -> Reply:
        if STRUCTURED_OUTPUT_TOOL in tool_names(body):
            return tool_use_reply(STRUCTURED_OUTPUT_TOOL, structured(body))
        return text_reply("OK")

    return respond


@dataclass
class World:
    """A git repo with local-recall, a Claude config dir holding its transcripts, and the real
    `claude` CLI pointed at a fake Messages API."""

    repo: Path
    projects: Path
    api: FakeAnthropic
    env: dict[str, str]
    claude: str
    embedder: MiniLMEmbedder

    def recall(self, *, clock: Callable[[], datetime] | None = None, **extra: str) -> Recall:
        settings = Settings(
            root=self.repo,
            environ={**self.env, **extra},
            embedder_factory=lambda _config: self.embedder,  # loaded once per test session
        )
        if clock is not None:
            settings = replace(settings, clock=clock)
        return Recall.open(settings=settings)

    def extractor(self, **options: Any) -> ClaudeCliExtractor:
        """Retries without sleeping (the CLI's own backoff is real time)."""
        retry = RetryPolicy(sleep=lambda _: None, **options)
        return ClaudeCliExtractor(self.claude, environ=self.env, retry=retry)

    def install(self, src: Path, **kw: Any) -> Path:
        return install(src, self.projects, self.repo, **kw)

    def requests(self) -> list[Mapping[str, Any]]:
        return [r.body for r in self.api.message_requests()]

    def memory_files(self) -> list[Path]:
        return sorted((self.repo / "local-recall" / "episodic-memory").glob("*.md"))

    def thinking_files(self) -> list[Path]:
        return sorted((self.repo / "local-recall" / "thinking-memory").glob("*.md"))

    def state(self) -> dict[str, Any]:
        path = self.repo / "local-recall" / "state" / "pipeline.json"
        return dict(json.loads(path.read_text("utf-8"))["transcripts"])


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    embedder = MiniLMEmbedder()
    embedder.load()
    return embedder


@pytest.fixture
def world(repo: Path, tmp_path: Path, minilm: MiniLMEmbedder) -> Iterator[World]:
    claude = claude_or_fail()
    with FakeAnthropic(model(echo_memories)) as api:
        home = tmp_path / "home"
        env = offline_env(
            home,
            api.url,
            extra={
                "CLAUDE_CODE_MAX_RETRIES": "0",
                "LOCAL_RECALL_CLAUDE_BIN": claude,
                "LOCAL_RECALL_EXTRACTION_MAX_ATTEMPTS": "1",
            },
        )
        yield World(repo, home / ".claude" / "projects", api, env, claude, minilm)


def _all_text_under(root: Path) -> str:
    return "\n".join(
        p.read_text("utf-8", errors="replace")
        for p in root.rglob("*")
        if p.is_file() and p.suffix in (".md", ".json")
    )


def test_memory_source_names_the_session(tmp_path: Path) -> None:
    from local_recall.capture.transcripts.model import TranscriptFile
    from local_recall.capture.writer import memory_source

    main = TranscriptFile(tmp_path / "s.jsonl", "s1", False, None, 1, 1)
    agent = TranscriptFile(tmp_path / "a.jsonl", "agent-x", True, "s1", 1, 1)
    assert memory_source(main) == "transcript:s1"
    assert memory_source(agent) == "transcript:s1/agent-x"


# ------------------------------------------------------------------------------------------
# End to end: the real `claude` CLI against the fake Messages API (slow)
# ------------------------------------------------------------------------------------------


@pytest.mark.slow
@requires_claude
def test_sync_twice_second_pass_makes_no_call(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from local_recall.search import background

    for src in (T01, T02, T03, T04, T05):
        world.install(src)
    world.install(T04_AGENT, rel=f"{T04_SESSION}/subagents/{T04_AGENT.name}")
    computed = 0
    compute = background.compute_background

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal computed
        computed += 1
        return compute(*args, **kwargs)

    monkeypatch.setattr(background, "compute_background", counted)
    first = (
        world.recall().sync_transcripts()
    )  # extractor built from [extraction] + LOCAL_RECALL_CLAUDE_BIN
    # the similar-memories lookup before each chunk leaves the search background to the
    # pass's own sync at its end (~100 probe searches each time the young store grew)
    assert computed == 1
    requests = world.requests()
    assert first.errors == () and first.stopped is None
    assert first.transcripts_seen == 6 and first.transcripts_processed == 6
    assert first.api_calls == first.chunks_sent == len(requests) == 6
    assert first.input_tokens > 0 and first.output_tokens > 0
    files = world.memory_files()
    assert first.memories_created == len(files) > 0 and first.index_synced
    recall = world.recall()
    sources = {m.source for m in recall.list()}
    assert f"transcript:{T04_SESSION}/{T04_AGENT.stem}" in sources
    assert f"transcript:{T04_SESSION}" in sources
    # what our hooks injected (attachments in 01 and 05) never reaches the extractor
    for body in requests:
        assert "MARKER" not in visible_text(body) and "BANANA" not in visible_text(body)

    world.api.clear()
    second = world.recall().sync_transcripts()
    assert world.requests() == [] and second.api_calls == 0 and second.chunks_sent == 0
    assert second.transcripts_skipped == 6 and second.memories_created == 0
    assert world.memory_files() == files


@pytest.mark.slow
@requires_claude
def test_appended_turns_are_the_only_new_turns_sent(world: World) -> None:
    path = world.install(T01)
    world.recall().sync_transcripts()
    world.api.clear()
    append_exchange(path, world.repo, "Why does the cache break?", "CACHE_DIR is read at import.")
    report = world.recall().sync_transcripts()
    (body,) = world.requests()
    new = new_part(body)
    assert "Why does the cache break?" in new and "CACHE_DIR is read at import." in new
    assert "hello there" not in new  # already extracted: sent only as marked context
    seen = visible_text(body)
    assert seen.index("hello there") < seen.index(NEW_TURNS)
    assert report.memories_created == 1
    assert world.state()[str(path)]["offset"] == path.stat().st_size


@pytest.mark.slow
@requires_claude
@pytest.mark.parametrize("failure", ["server_error", "no_structured_output"])
def test_failed_extraction_is_retried_then_left_for_later(world: World, failure: str) -> None:
    path = world.install(T01)
    bad = error_reply(500, "api_error") if failure == "server_error" else text_reply("None.")
    world.api.responder = lambda body: bad
    now = [datetime.now(UTC)]
    extractor = world.extractor(max_attempts=2)
    report = world.recall(clock=lambda: now[0]).sync_transcripts(extractor=extractor)
    assert len(world.requests()) >= 2  # retried
    assert report.api_calls == 0 and report.memories_created == 0 and len(report.errors) == 1
    entry = world.state()[str(path)]
    assert (entry["offset"], entry["attempts"], entry["failures"]) == (0, 1, 1)
    assert entry["last_error"] and world.memory_files() == []

    world.api.clear()  # still in backoff: nothing is sent
    waiting = world.recall(clock=lambda: now[0]).sync_transcripts(extractor=extractor)
    assert world.requests() == [] and waiting.transcripts_skipped == 1

    world.api.responder = model(echo_memories)  # healthy again, after the backoff
    now[0] += timedelta(minutes=6)
    done = world.recall(clock=lambda: now[0]).sync_transcripts(extractor=extractor)
    assert done.memories_created == 1 and done.errors == ()
    entry = world.state()[str(path)]
    assert entry["offset"] == path.stat().st_size and entry["attempts"] == 0


@pytest.mark.slow
@requires_claude
def test_rate_limit_stops_the_pass_and_pauses_extraction(world: World) -> None:
    first, second = world.install(T01), world.install(T02)
    world.api.responder = lambda body: error_reply(429, "rate_limit_error", retry_after=0)
    extractor = world.extractor(max_attempts=1)
    report = world.recall().sync_transcripts(extractor=extractor)
    assert report.stopped == "rate_limited" and len(world.requests()) == 1  # no second file
    state = world.state()
    assert all(state.get(str(p), {"offset": 0})["offset"] == 0 for p in (first, second))
    world.api.clear()
    again = world.recall().sync_transcripts(extractor=extractor)
    assert again.stopped == "rate_limited" and world.requests() == []
    assert again.transcripts_skipped == 2 and world.memory_files() == []


GOOD = {
    "subject": "Run the test suite with make check",
    "body": "`make check` sets PYTHONHASHSEED=0; bare pytest makes the snapshot tests flaky.",
    "keywords": ["make check", "pytest"],
    "applies_to": "area:testing",
}
REPHRASED = dict(
    GOOD, body="make check sets PYTHONHASHSEED=0, and bare pytest makes snapshot tests flaky."
)


@pytest.mark.slow
@requires_claude
def test_same_content_twice_makes_one_file(world: World) -> None:
    world.install(T01)  # "hello there"
    world.install(T02)  # "run a command please"
    world.install(T03)  # "recall?"

    def answer(body: Mapping[str, Any]) -> dict[str, Any]:
        return {"memories": [REPHRASED if "recall?" in new_part(body) else GOOD]}

    world.api.responder = model(answer)
    report = world.recall().sync_transcripts()
    assert report.api_calls == 3
    assert (report.memories_created, report.duplicates, report.near_duplicates) == (1, 1, 1)
    (only,) = world.memory_files()
    assert "PYTHONHASHSEED=0; bare pytest" in only.read_text("utf-8")
    # every transcript records the memory it produced (or matched)
    assert {tuple(e["memory_ids"]) for e in world.state().values()} == {(only.stem,)}


@pytest.mark.slow
@requires_claude
def test_private_blocks_and_secrets_never_reach_the_model_or_a_file(world: World) -> None:
    path = world.install(T01)
    append_exchange(
        path,
        world.repo,
        f"Deploy with make deploy. Key: {SECRET} <private>{PRIVATE} keep out</private> thanks",
        f"Noted; I will not repeat {SECRET}.",
    )
    report = world.recall().sync_transcripts()
    assert report.memories_created >= 1
    (body,) = world.requests()
    raw = json.dumps(body)
    assert SECRET not in raw and SECRET[:30] not in raw and PRIVATE not in raw
    assert "[REDACTED:anthropic-api-key]" in visible_text(body)
    assert "Deploy with make deploy." in visible_text(body)
    stored = _all_text_under(world.repo / "local-recall")
    assert "Deploy with make deploy." in stored  # the echoing model wrote what it saw
    assert SECRET[:30] not in stored and PRIVATE not in stored


def _pids_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.slow
@requires_claude
def test_kill_9_mid_pass_recovers_without_duplicates_or_losses(world: World) -> None:
    early = world.install(T01)  # "hello there": processed first (older)
    late = world.install(T05)  # "first turn" ... : its call hangs until the process is killed
    os.utime(early, ns=(time.time_ns() - 120 * 10**9,) * 2)
    hang = threading.Event()
    hang.set()

    def respond(body: Any) -> Reply:
        if hang.is_set() and "first turn" in visible_text(body):
            return Reply(hang_seconds=120)
        return model(echo_memories)(body)

    world.api.responder = respond
    tag = str(uuid.uuid4())  # finds the orphaned `claude` child afterwards
    marker = f"PIPELINE_TEST_KILL={tag}"
    env = clean_env({**world.env, "PIPELINE_TEST_KILL": tag})
    command = [sys.executable, "-m", "local_recall", "sync", "--json"]
    proc = subprocess.Popen(
        command, cwd=world.repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        ceiling = Ceiling()
        while not any("first turn" in visible_text(b) for b in world.requests()):
            assert proc.poll() is None, proc.communicate()
            ceiling.check("the second call never started")
            time.sleep(0.1)
        os.kill(proc.pid, signal.SIGKILL)  # mid-call, after the first transcript was done
        proc.communicate(timeout=10)
    finally:
        for pid in _pids_with(marker):  # the orphaned `claude` child, still waiting
            if pid != os.getpid():
                with contextlib.suppress(ProcessLookupError):  # it ended since the listing
                    os.kill(pid, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    kept = world.memory_files()
    assert len(kept) == 1  # "hello there", written before the kill
    state = world.state()
    assert state[str(early)]["offset"] == early.stat().st_size
    assert state.get(str(late), {"offset": 0})["offset"] == 0

    hang.clear()
    world.api.clear()
    done = subprocess.run(
        command,
        cwd=world.repo,
        env=clean_env(world.env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["api_calls"] == 1  # only the interrupted transcript is sent again
    assert all("hello there" not in new_part(b) for b in world.requests())
    files = world.memory_files()
    assert set(kept) <= set(files)  # nothing lost
    assert len(files) == 1 + report["memories_created"]
    hashes = [m.content_hash for m in world.recall().list()]
    assert len(hashes) == len(set(hashes)) == len(files)  # no copies


@pytest.mark.slow
@requires_claude
def test_thinking_memories_are_off_by_default_and_stored_verbatim_when_on(world: World) -> None:
    path = world.install(T02)  # its assistant turns carry thinking
    world.recall().sync_transcripts()
    assert world.thinking_files() == []
    append_exchange(
        path,
        world.repo,
        "Which port does the dev server use?",
        "It listens on 8765 (see devserver.toml).",
        thinking="The devserver.toml sets port = 8765; the README is outdated.",
    )
    report = world.recall(LOCAL_RECALL_THINKING_ENABLED="true").sync_transcripts()
    assert report.thinking_created == 1
    (thought,) = world.thinking_files()
    text = thought.read_text("utf-8")
    assert "The devserver.toml sets port = 8765; the README is outdated." in text
    assert "It listens on 8765 (see devserver.toml)." in text
    assert "Which port does the dev server use?" in text
    hits = world.recall().search(SearchQuery("devserver port README outdated", kind="thinking"))
    assert [h.id for h in hits][:1] == [thought.stem]
    assert all(h.id != thought.stem for h in world.recall().search("devserver port"))


# ------------------------------------------------------------------------------------------
# Whole passes with a scripted extractor (fast): what the pass does around the calls
# ------------------------------------------------------------------------------------------


class ScriptedExtractor:
    """Stands in for `claude -p` at the extractor seam: one memory per chunk, named by the
    first user prompt in the new turns; records each chunk it was sent."""

    def __init__(self, fail_with: Exception | None = None) -> None:
        self.sent: list[str] = []
        self.fail_with = fail_with

    def extract(
        self, condensed: str, *, context: str = "", repo_name: str = "", existing: Any = ()
    ) -> ExtractionResult:
        self.sent.append(condensed)
        if self.fail_with is not None:
            raise self.fail_with
        new = condensed.split(NEW_TURNS, 1)[-1]
        prompt = next(
            (line for line in new.splitlines() if line.startswith("User: ")), "User: (none)"
        )
        memory = CandidateMemory(
            subject=f"Learned: {prompt[6:][:60]}",
            body=f"From the exchange starting with {prompt!r}: {new.strip()[:300]}",
            keywords=("scripted",),
            applies_to="global",
        )
        return ExtractionResult((memory,), (), 1000, 100, 0.001)


@pytest.fixture
def offline(repo: Path, tmp_path: Path, minilm: MiniLMEmbedder) -> World:
    """The world without a Messages API: `claude` cannot be found, so any real call fails."""
    env = clean_env(
        {
            "HOME": str(tmp_path / "home"),
            "CLAUDE_CONFIG_DIR": str(tmp_path / "home" / ".claude"),
            "LOCAL_RECALL_EXTRACTION_CLAUDE_PATH": str(tmp_path / "no-such-claude"),
        }
    )
    projects = tmp_path / "home" / ".claude" / "projects"
    return World(repo, projects, None, env, "", minilm)  # type: ignore[arg-type]


def test_scripted_pass_then_nothing_to_do(offline: World) -> None:
    path = offline.install(T01)
    scripted = ScriptedExtractor()
    report = offline.recall().sync_transcripts(extractor=scripted)
    assert (report.chunks_sent, report.api_calls, report.memories_created) == (1, 1, 1)
    assert (report.input_tokens, report.output_tokens) == (1000, 100)
    assert offline.state()[str(path)]["offset"] == path.stat().st_size
    # nothing new: no extractor is even built, so a missing `claude` does not matter
    again = offline.recall().sync_transcripts()
    assert again.errors == () and again.transcripts_skipped == 1 and again.chunks_sent == 0


class NotesSessions:
    """Another agent's sessions in a made-up format — one JSON object a line, {"role", "text",
    "at"} — as a `SessionSource`: the pass takes it without any other change."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def find(self) -> list[TranscriptFile]:
        found = []
        for path in sorted(self.folder.glob("*.jsonl")):
            size, mtime = path.stat().st_size, path.stat().st_mtime_ns
            found.append(TranscriptFile(path, path.stem, False, None, size, mtime))
        return found

    def read(self, path: Path, start_offset: int) -> ParsedTranscript:
        turns, offset = [], start_offset
        with path.open("rb") as stream:
            stream.seek(start_offset)
            for line in stream:
                if not line.endswith(b"\n"):
                    break  # still being written
                data = json.loads(line)
                at = datetime.fromisoformat(data["at"])
                uuid = f"{path.stem}-{offset}"
                turns.append(
                    Turn(
                        uuid,
                        data["role"],
                        at,
                        data["text"],
                        start_offset=offset,
                        end_offset=offset + len(line),
                    )
                )
                offset += len(line)
        return ParsedTranscript(tuple(turns), offset, ParseStats())

    def memory_source(self, transcript: TranscriptFile) -> str:
        return f"notes:{transcript.session_id}"


def test_another_agents_sessions_plug_in_as_a_source(offline: World, tmp_path: Path) -> None:
    folder = tmp_path / "other-agent"
    folder.mkdir()
    session = folder / "run-1.jsonl"
    at = "2026-01-05T09:00:00+00:00"
    lines = [
        {"role": "user", "text": "Why does the cache miss on Mondays?", "at": at},
        {"role": "assistant", "text": "The key embeds the ISO week.", "at": at},
    ]
    session.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    scripted = ScriptedExtractor()
    report = offline.recall().sync_transcripts(extractor=scripted, source=NotesSessions(folder))
    assert (report.transcripts_seen, report.chunks_sent, report.memories_created) == (1, 1, 1)
    assert "Why does the cache miss on Mondays?" in scripted.sent[0]
    assert [m.source for m in offline.recall().list()] == ["notes:run-1"]  # the agent's name
    assert offline.state()[str(session)]["offset"] == session.stat().st_size
    again = offline.recall().sync_transcripts(extractor=scripted, source=NotesSessions(folder))
    assert again.transcripts_skipped == 1 and len(scripted.sent) == 1


def test_second_pass_waits_while_one_is_running(offline: World) -> None:
    offline.install(T01)
    recall = offline.recall()
    lock = FileLock(str(recall.layout.state_dir / "pipeline.lock"))
    recall.layout.state_dir.mkdir(parents=True, exist_ok=True)
    with lock:
        started = time.monotonic()
        report = recall.sync_transcripts(extractor=ScriptedExtractor(), lock_timeout=0.3)
        waited = time.monotonic() - started
    assert report.stopped == "already_running" and report.errors == (ALREADY_RUNNING,)
    # it waited its lock_timeout, no less (held for ever, ignoring it would hang: pytest's timeout)
    assert waited >= 0.3 and report.chunks_sent == 0
    assert (
        recall.sync_transcripts(extractor=ScriptedExtractor()).memories_created == 1
    )  # lock freed


def test_daily_budget_defers_the_rest(offline: World) -> None:
    older, newer = offline.install(T01), offline.install(T02)
    os.utime(older, ns=(time.time_ns() - 60 * 10**9,) * 2)
    recall = offline.recall(LOCAL_RECALL_EXTRACTION_DAILY_MAX_CALLS="1")
    scripted = ScriptedExtractor()
    report = recall.sync_transcripts(extractor=scripted)
    assert report.stopped == "budget" and len(scripted.sent) == 1
    assert "hello there" in scripted.sent[0]  # oldest first
    state = offline.state()
    assert state[str(older)]["offset"] == older.stat().st_size
    assert state.get(str(newer), {"offset": 0})["offset"] == 0
    budget = json.loads((recall.layout.state_dir / "budget.json").read_text("utf-8"))
    assert budget["calls"] == 1 and budget["input_tokens"] == 1000
    again = recall.sync_transcripts(extractor=scripted)  # spent for today: nothing is sent
    assert again.stopped == "budget" and len(scripted.sent) == 1 and again.transcripts_skipped == 2


def test_stop_request_ends_the_pass_between_items(offline: World) -> None:
    offline.install(T01)
    offline.install(T02)
    scripted = ScriptedExtractor()
    report = offline.recall().sync_transcripts(
        extractor=scripted, should_stop=lambda: len(scripted.sent) >= 1
    )
    assert report.stopped == "stop_requested" and len(scripted.sent) == 1
    assert report.memories_created == 1  # the finished item's memory is kept
    rest = offline.recall().sync_transcripts(extractor=scripted)
    assert rest.stopped is None and len(scripted.sent) == 2


def _write_lines(path: Path, entries: list[dict[str, Any]]) -> None:
    with path.open("a", encoding="utf-8") as stream:
        for entry in entries:
            stream.write(json.dumps(entry) + "\n")


def test_a_lone_prompt_waits_for_its_answer_or_for_the_session_to_go_quiet(offline: World) -> None:
    directory = offline.projects / encode_project_dir(str(offline.repo))
    directory.mkdir(parents=True)
    path = directory / "s-lone.jsonl"
    base = {"cwd": str(offline.repo), "sessionId": "s-lone", "timestamp": "2026-01-01T00:00:00Z"}
    _write_lines(
        path,
        [
            {
                **base,
                "type": "user",
                "uuid": "u1",
                "message": {"role": "user", "content": "Is the build green?"},
            }
        ],
    )
    scripted = ScriptedExtractor()
    report = offline.recall().sync_transcripts(extractor=scripted)
    assert scripted.sent == [] and report.transcripts_skipped == 1
    assert offline.state()[str(path)]["pending_turns"] == 1
    assert offline.recall().sync_transcripts(extractor=scripted).chunks_sent == 0  # still live
    quiet = time.time_ns() - 11 * 60 * 10**9  # [extraction] idle_minutes = 10
    os.utime(path, ns=(quiet, quiet))
    report = offline.recall().sync_transcripts(extractor=scripted)
    assert len(scripted.sent) == 1 and "Is the build green?" in scripted.sent[0]
    assert offline.state()[str(path)]["pending_turns"] == 0


def test_lost_or_corrupt_state_reprocesses_without_duplicates(offline: World) -> None:
    offline.install(T01)
    offline.install(T02)
    first = offline.recall().sync_transcripts(extractor=ScriptedExtractor())
    files = offline.memory_files()
    assert first.memories_created == len(files) == 2
    state_file = offline.repo / "local-recall" / "state" / "pipeline.json"
    state_file.write_text("{not json", "utf-8")  # or lost: the same path
    again = offline.recall().sync_transcripts(extractor=ScriptedExtractor())
    assert again.chunks_sent == 2 and again.memories_created == 0 and again.duplicates == 2
    assert offline.memory_files() == files
    assert again.errors == () and any("starting over" in n for n in again.notes)
    assert (state_file.parent / "pipeline.json.corrupt").exists()


def test_rewritten_transcript_is_read_again_and_keeps_its_memories(offline: World) -> None:
    path = offline.install(T01)
    offline.recall().sync_transcripts(extractor=ScriptedExtractor())
    (kept,) = offline.memory_files()
    lines = path.read_text("utf-8").splitlines()
    path.write_text("\n".join(lines[:8]) + "\n", "utf-8")  # truncated: shorter than processed
    append_exchange(
        path, offline.repo, "Start over: which linter?", "ruff, configured in pyproject."
    )
    scripted = ScriptedExtractor()
    report = offline.recall().sync_transcripts(extractor=scripted)
    assert report.transcripts_processed == 1 and len(scripted.sent) == 1
    assert NEW_TURNS not in scripted.sent[0]  # from 0: no turn is "already processed"
    assert "hello there" in scripted.sent[0] and "which linter?" in scripted.sent[0]
    assert kept in offline.memory_files()
    assert offline.state()[str(path)]["offset"] == path.stat().st_size


def test_failed_call_keeps_state_and_records_the_error(offline: World) -> None:
    path = offline.install(T01)
    failing = ScriptedExtractor(fail_with=ExtractionFailed("invalid structured output"))
    report = offline.recall().sync_transcripts(extractor=failing)
    assert report.errors and "invalid structured output" in report.errors[0]
    entry = offline.state()[str(path)]
    assert entry["offset"] == 0 and entry["attempts"] == 1 and entry["next_retry_at"]
    assert offline.memory_files() == []


def test_sync_cli_reports_a_missing_claude_in_one_line(offline: World) -> None:
    offline.install(T01)
    done = subprocess.run(
        [sys.executable, "-m", "local_recall", "sync"],
        cwd=offline.repo,
        env=offline.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("local-recall: error:") and "claude" in lines[0]
    assert offline.memory_files() == []


def test_sync_cli_json_with_nothing_to_do(offline: World) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "local_recall", "sync", "--json"],
        cwd=offline.repo,
        env=offline.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (
        report["transcripts_seen"] == 0 and report["api_calls"] == 0 and report["stopped"] is None
    )


def test_pass_report_json_has_every_figure() -> None:
    data = PassReport(api_calls=2, input_tokens=5, errors=("x",), seconds=1.23456).to_json()
    assert data["api_calls"] == 2 and data["errors"] == ["x"] and data["seconds"] == 1.235
    assert set(data) >= {
        "transcripts_seen",
        "transcripts_processed",
        "transcripts_skipped",
        "chunks_sent",
        "input_tokens",
        "output_tokens",
        "memories_created",
        "duplicates",
        "near_duplicates",
        "dropped",
        "thinking_created",
        "stopped",
    }


PARAPHRASED = [
    (  # reworded: edit distance 0.75 let it through the 0.9 check
        (
            "Run the tests with pytest via tox",
            "Tests run through tox, which calls pytest; do not run pytest directly.",
        ),
        (
            "Run tests with pytest through tox",
            "The test suite is run with tox, which invokes pytest, rather than calling pytest "
            "by hand.",
        ),
    ),
    (  # restated: the user's subject said again with a detail added (cosine 0.74)
        (
            "Tests run through tox with the uv-venv-lock-runner",
            "tox is configured in pyproject.toml ([tool.tox]) and builds each environment from "
            "uv.lock with the uv-venv-lock-runner. `tox -e py3.13` runs one interpreter.",
        ),
        (
            "Jinja's test suite runs with pytest; tox -e py3.12 for one interpreter",
            "The tests live in tests/ and run with pytest. tox runs the suite on every supported "
            "Python (uv-venv-lock-runner); use `tox -e py3.12` to run a single interpreter.",
        ),
    ),
]


@pytest.mark.slow
@requires_claude
@pytest.mark.parametrize(("user", "extracted"), PARAPHRASED, ids=["reworded", "restated"])
def test_a_paraphrase_of_an_existing_memory_is_not_written(
    world: World, user: tuple[str, str], extracted: tuple[str, str]
) -> None:
    """The prompt listed the user's memory and the extractor wrote it again in other words:
    the paraphrase rule (memory/likeness.py) keeps one memory."""
    recall = world.recall()
    mine = recall.add(*user)
    recall.sync_index()
    world.install(T01)
    world.api.responder = model(
        lambda _body: {
            "memories": [
                {
                    "subject": extracted[0],
                    "body": extracted[1],
                    "keywords": ["tox", "pytest"],
                    "applies_to": "global",
                }
            ]
        }
    )
    report = world.recall().sync_transcripts()
    assert (report.memories_created, report.near_duplicates) == (0, 1)
    assert [p.stem for p in world.memory_files()] == [mine.id]
    assert {tuple(e["memory_ids"]) for e in world.state().values()} == {(mine.id,)}
