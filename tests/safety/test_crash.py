"""Crashes, concurrency and input limits on real processes.

- `local-recall index` SIGKILLed again and again mid-work: the next run recovers without a
  rebuild, no row is missing, stale or doubled, and search answers as after a fresh rebuild
  (semantic exactly; text and hybrid by what comes back, their BM25 statistics drift).
- CLI adds, MCP saves and an extraction pass (the real `claude` CLI against the fake Messages
  API), all at once over overlapping content: every distinct memory exactly once, the index in
  step with the files.
- A 10 MB prompt to the prompt hook: exit 0 in its budget, memory bounded (the child's peak RSS).

Figures (iterations, times, peak RSS) are printed with `-s` for the safety review."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from local_recall.capture.transcripts import encode_project_dir
from local_recall.memory.format import render_memory
from local_recall.memory.model import Memory, content_hash
from local_recall.recall import Recall
from local_recall.search.index.plan import IndexPlan, plan_index_sync, row_key
from local_recall.search.query import SearchQuery
from local_recall.settings import Settings
from tests.capture.test_pipeline import exchange_entries
from tests.claude_cli import claude_or_fail, offline_env, requires_claude
from tests.cli_forks import CliForks
from tests.conftest import clean_env
from tests.fake_anthropic import (
    STRUCTURED_OUTPUT_TOOL,
    FakeAnthropic,
    Reply,
    text_reply,
    tool_names,
    tool_use_reply,
    visible_text,
)
from tests.hook_runs import StandIn, hook_env, prompt_input
from tests.waiting import Ceiling

KILL_ITERATIONS = 8
SEED_MEMORIES = 260  # more than one EMBED_BATCH (256): a rebuild writes in two steps
QUERIES = ("option for component", "constraint 3", "team chose", "note 42", "zzz nothing")


def lr(repo: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "local_recall", "--root", str(repo), *args]


def open_recall(repo: Path) -> Recall:
    return Recall.open(settings=Settings(root=repo, environ=clean_env()))


def index_plan(recall: Recall) -> IndexPlan:
    """What a sync would still have to do: empty when the index matches the files."""
    memories = {row_key(m.kind, m.id): m for m in recall.scan().memories}
    index = recall.searcher.index
    return plan_index_sync(index.fingerprints_of(memories), index.fingerprints())


Answer = tuple[list[tuple[float, frozenset[str]]], tuple[float, int] | None]


def ranked(hits: list[tuple[str, float]]) -> Answer:
    """Hits as score groups: ties come back in storage order, which a rebuild may change, and at
    the limit a different member of a tied group may make the cut. So: every group but the last
    by its members, the last by its size."""
    groups: list[tuple[float, set[str]]] = []
    for hit_id, score in hits:
        if groups and groups[-1][0] == score:
            groups[-1][1].add(hit_id)
        else:
            groups.append((score, {hit_id}))
    if not groups:
        return [], None
    *full, (last_score, last) = groups
    return [(score, frozenset(ids)) for score, ids in full], (last_score, len(last))


def test_ranked_compares_ties_by_group() -> None:
    assert ranked([("a", 1.0), ("b", 0.5), ("c", 0.5)]) == ranked(
        [("a", 1.0), ("c", 0.5), ("d", 0.5)]
    )
    assert ranked([("a", 1.0), ("b", 0.9), ("c", 0.5)]) != ranked(
        [("a", 1.0), ("c", 0.9), ("b", 0.5)]
    )
    assert ranked([("a", 1.0), ("b", 0.5)]) != ranked([("a", 1.0), ("b", 0.5), ("c", 0.5)])


def answers(recall: Recall) -> dict[tuple[str, str], object]:
    """What each query answers. Semantic scores must match exactly. BM25 statistics (document
    count, average length) still count rows deleted or not yet folded into the full-text index
    since the last rebuild, so text and hybrid scores drift a little from a fresh rebuild's
    (after crashes or not) and break ties differently: there the answer is how many memories
    come back and that every one of them is a live memory. That no row is missing, stale or
    doubled is `index_plan`'s check."""
    live = {m.id for m in recall.scan().memories}
    out: dict[tuple[str, str], object] = {}
    for query in QUERIES:
        for mode in ("hybrid", "semantic", "text"):
            hits = [
                (h.id, round(h.score, 4))
                for h in recall.search(SearchQuery(query, mode=mode), sync=False)
            ]
            assert {hit_id for hit_id, _ in hits} <= live, (query, mode)
            out[query, mode] = ranked(hits) if mode == "semantic" else len(hits)
    return out


# --- (a) SIGKILL during indexing --------------------------------------------------------------


def data_files(index_dir: Path) -> set[Path]:
    """The memories table's data files: a new one means rows are being written."""
    return set((index_dir / "memories.lance" / "data").glob("*"))


def mutate(recall: Recall, rng: random.Random, step: int) -> None:
    """Work for the next index run: new, edited and deleted memories."""
    for n in range(8):
        recall.add(f"Step {step} memory {n}", f"Added at step {step}: note {n} on component {n}.")
    memories = recall.list()
    for memory in rng.sample(memories, 4):
        recall.update(memory.id, body=f"{memory.body} Edited at step {step}.")
    for memory in rng.sample(memories, 3):
        recall.delete(memory.id)


@pytest.mark.slow
def test_sigkill_loop_during_indexing_recovers_to_a_fresh_rebuild(repo: Path) -> None:
    recall = open_recall(repo)
    for n in range(SEED_MEMORIES):  # committed files, as a clone would have them (fast to make)
        body = (
            f"Note {n}: the team chose option {n * 7 % 13} for component {n % 11} "
            f"because of constraint {n % 5}"
        )
        memory = Memory(
            id=str(uuid.UUID(int=n + 1, version=4)),
            subject=f"Memory {n} topic {n % 17}",
            body=body,
            keywords=(f"topic {n % 17}",),
            applies_to="global",
            occurred_at=datetime(2025, 1, 1, tzinfo=UTC) + timedelta(minutes=n),
            content_hash=content_hash(body),
        )
        (recall.layout.episodic_dir / f"{memory.id}.md").write_text(render_memory(memory), "utf-8")
    rng = random.Random(20260301)
    killed, finished = 0, 0
    rows_after: list[int | str] = []  # what each killed run left: where the kills landed
    forks = CliForks(repo.parent / "runs", clean_env())
    try:
        for step in range(KILL_ITERATIONS):
            mutate(recall, rng, step)
            args = ["index", "--json"] + (["--rebuild"] if step % 3 == 2 else [])
            before = data_files(recall.layout.index_dir)
            proc = forks.start("--root", str(repo), *args)
            if step % 2:  # at a random moment: start-up, loading the model, embedding, writing
                time.sleep(rng.uniform(0.1, 2.0))
            else:  # once it writes rows: inside a batch's commit, or between two batches
                while forks.poll(proc) is None and data_files(recall.layout.index_dir) <= before:
                    time.sleep(0.005)
                time.sleep(rng.uniform(0.0, 0.25))
            if forks.poll(proc) is None:
                os.kill(proc.pid, signal.SIGKILL)
                killed += 1
            else:
                finished += 1
            assert forks.wait(proc, 30) in (0, -signal.SIGKILL), proc.stderr
            index = open_recall(repo).searcher.index
            rows_after.append(index.count() if index.exists() else "none")
        assert killed >= KILL_ITERATIONS // 2

        started = time.monotonic()
        done = forks.run("--root", str(repo), "index", "--json")
        recovery = time.monotonic() - started
    finally:
        forks.close()
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    files = list(recall.layout.episodic_dir.glob("*.md"))
    assert report["total"] == len(files) and report["fallback"] is None
    assert recall.scan().problems == ()

    after_crashes = open_recall(repo)
    assert index_plan(after_crashes) == IndexPlan((), (), ())
    crashed = answers(after_crashes)
    fresh = open_recall(repo)
    fresh.sync_index(rebuild=True)
    assert answers(fresh) == crashed
    print(
        f"\nindex SIGKILL loop: {KILL_ITERATIONS} runs ({killed} killed, {finished} finished), "
        f"{len(files)} memories; rows left after each run: {rows_after}; recovery run "
        f"{recovery:.1f} s, rebuilt={report['rebuilt']} ({report['rebuild_reason']}), "
        f"embedded {report['embedded']}"
    )


# --- (b) concurrent writers ---------------------------------------------------------------------

POOL = [
    (
        f"Pool fact {n}: {topic}",
        f"POOL-{n:02d} {topic} — the reason is recorded in ticket {1000 + n * 37}.",
    )
    for n, topic in enumerate(
        [
            "retries use exponential backoff capped at thirty seconds",
            "the staging database is refreshed every Sunday night",
            "feature flags live in flags.yaml, never in code",
            "the parser rejects tabs in indentation",
            "image uploads are resized to 2048 pixels on the long edge",
            "the CI cache key includes the lockfile hash",
            "timestamps are stored as UTC and rendered in the user's zone",
            "the billing job must not run twice in one hour",
            "API tokens rotate every ninety days",
            "log lines are JSON with a trace id field",
            "the search page debounces input by 250 milliseconds",
            "migrations are forward-only; no down scripts",
            "PDF export uses a headless browser in a sidecar",
            "the mobile client pins certificates",
            "webhooks are signed with HMAC-SHA256",
            "the queue consumer acknowledges after the database commit",
            "translations are loaded lazily per route",
            "the admin panel requires hardware keys",
            "cron jobs run in the Europe/Paris timezone",
            "the ORM is configured to forbid lazy loading",
        ]
    )
]
POOL_TAG = re.compile(r"POOL-(\d\d)")


@dataclass(frozen=True)
class Submitted:
    source: str
    index: int
    memory_id: str


def cli_writer(
    repo: Path,
    picks: list[int],
    out: list[Submitted],
    errors: list[str],
    extracting: threading.Event,
) -> None:
    """`local-recall add` runs, forked from a warmed process (`CliForks`): the first at once,
    with the MCP server's start and warm-up index and the runner's start; the others once the
    extraction's model request is in, so they race its dedup and writes."""
    try:
        forks = CliForks(repo.parent / f"cli-{uuid.uuid4().hex[:8]}", clean_env())
        try:
            for i, n in enumerate(picks):
                if i == 1:
                    extracting.wait(timeout=180)
                subject, body = POOL[n]
                done = forks.run("--root", str(repo), "add", "--subject", subject, "--body", body)
                if done.returncode != 0:
                    errors.append(done.stderr)
                out.append(Submitted("cli", n, done.stdout.strip()))
        finally:
            forks.close()
    except Exception as exc:  # reported by the test, not lost in the thread
        errors.append(repr(exc))


def mcp_writer(repo: Path, picks: list[int], out: list[Submitted], errors: list[str]) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "local_recall", "mcp"],
        env=clean_env({"LOCAL_RECALL_ROOT": str(repo)}),
        cwd=str(repo),
    )

    async def session() -> None:
        async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
            await client.list_tools()  # starts the server's index warm-up: one more writer
            for n in picks:
                subject, body = POOL[n]
                result = await client.call_tool(
                    "save_memory", {"subject": subject, "content": body, "keywords": ["pool"]}
                )
                if result.is_error or not isinstance(result.structured_content, dict):
                    errors.append(str(result.content))
                    continue
                out.append(Submitted("mcp", n, result.structured_content["id"]))

    try:
        anyio.run(session)
    except Exception as exc:  # reported by the test, not lost in the thread
        errors.append(repr(exc))


def pool_memories(body: Mapping[str, Any]) -> Reply:
    """The model: one memory per POOL-nn tag in the transcript it was sent."""
    if STRUCTURED_OUTPUT_TOOL not in tool_names(body):
        return text_reply("OK")
    picked = sorted({int(n) for n in POOL_TAG.findall(visible_text(body))})
    memories = [
        {"subject": POOL[n][0], "body": POOL[n][1], "keywords": ["pool"], "applies_to": "global"}
        for n in picked
    ]
    return tool_use_reply(STRUCTURED_OUTPUT_TOOL, {"memories": memories})


def write_session(projects: Path, repo: Path, picks: list[int]) -> None:
    session = str(uuid.uuid4())
    tags = " ".join(f"POOL-{n:02d}" for n in picks)
    entries = exchange_entries(
        repo,
        session,
        datetime(2026, 1, 1, 10, tzinfo=UTC),
        f"Please remember {tags}.",
        [{"type": "text", "text": f"Noted: {tags}."}],
    )
    path = projects / encode_project_dir(str(repo)) / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), "utf-8")
    old = time.time_ns() - 3600 * 10**9  # a finished session
    os.utime(path, ns=(old, old))


def daemon_pass_report(repo: Path) -> dict[str, Any] | None:
    """The report of the daemon's last transcript pass, from its status file, once there is one."""
    try:
        status = json.loads((repo / "local-recall" / "state" / "daemon.json").read_text())
    except (OSError, ValueError):
        return None
    last = status.get("last_pass") if isinstance(status, dict) else None
    report = last.get("report") if isinstance(last, dict) else None
    pipeline = report.get("pipeline") if isinstance(report, dict) else None
    return pipeline if isinstance(pipeline, dict) else None


@pytest.mark.slow
@requires_claude
@pytest.mark.parametrize("extraction", ["sync", "daemon"])
def test_concurrent_cli_mcp_and_extraction_leave_each_memory_once(
    repo: Path, tmp_path: Path, extraction: str
) -> None:
    """The extraction pass runs as `local-recall sync`, or inside a running daemon, which also
    re-indexes as the other writers' files appear."""
    rng = random.Random(7)
    claude = claude_or_fail()
    cli_picks = [rng.sample(range(len(POOL)), 4) for _ in range(3)]
    mcp_picks = rng.sample(range(len(POOL)), 8)
    extraction_picks = [rng.sample(range(len(POOL)), 4) for _ in range(2)]
    expected = (
        {n for picks in cli_picks for n in picks}
        | set(mcp_picks)
        | {n for picks in extraction_picks for n in picks}
    )
    submitted: list[Submitted] = []
    errors: list[str] = []
    extracting = threading.Event()  # the runner's first memory request reached the API

    def answer(body: Mapping[str, Any]) -> Reply:
        if STRUCTURED_OUTPUT_TOOL in tool_names(body):
            extracting.set()
        return pool_memories(body)

    with FakeAnthropic(answer) as api:
        home = tmp_path / "home"
        env = offline_env(
            home,
            api.url,
            extra={
                "CLAUDE_CODE_MAX_RETRIES": "0",
                "LOCAL_RECALL_CLAUDE_BIN": claude,
                "LOCAL_RECALL_EXTRACTION_MAX_ATTEMPTS": "1",
                # The scripted model answers memory requests only; session summaries (a request
                # of their own, tests/capture/test_summaries*.py) are not what this test counts.
                "LOCAL_RECALL_SUMMARIES_ENABLED": "false",
            },
        )
        for picks in extraction_picks:
            write_session(home / ".claude" / "projects", repo, picks)
        threads = [
            threading.Thread(target=cli_writer, args=(repo, picks, submitted, errors, extracting))
            for picks in cli_picks
        ]
        threads.append(
            threading.Thread(target=mcp_writer, args=(repo, mcp_picks, submitted, errors))
        )
        started = time.monotonic()
        command = ["sync", "--json"] if extraction == "sync" else ["daemon", "run"]
        extra = {"LOCAL_RECALL_DAEMON_DEBOUNCE_SECONDS": "0.2"} if extraction == "daemon" else {}
        runner = subprocess.Popen(
            lr(repo, *command),
            env=clean_env({**env, **extra}),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            for thread in threads:
                thread.start()
            if extraction == "daemon":  # its first pass starts at once; stop it once it is done
                ceiling = Ceiling(180)
                while (report := daemon_pass_report(repo)) is None:
                    assert runner.poll() is None, "the daemon exited before its first pass"
                    ceiling.check("the daemon's first pass never reported")
                    time.sleep(0.1)
            for thread in threads:
                thread.join(timeout=180)
            if extraction == "daemon":
                time.sleep(1.0)  # let it index what the writers just added, then stop it
                runner.send_signal(signal.SIGTERM)
            out, err = runner.communicate(timeout=180)
        finally:
            if runner.poll() is None:
                runner.kill()
                runner.communicate()
        elapsed = time.monotonic() - started
        calls = len(api.message_requests())
    assert errors == []
    assert runner.returncode == 0, err + out
    assert "Traceback" not in err
    if extraction == "sync":
        report = json.loads(out)
    assert report["errors"] == [] and report["transcripts_processed"] == 2
    assert calls >= 2

    recall = open_recall(repo)
    scan = recall.scan()
    assert scan.problems == ()  # every file parses
    by_body = {content_hash(POOL[n][1]): n for n in range(len(POOL))}
    found = sorted(by_body[m.content_hash] for m in scan.memories)
    assert found == sorted(expected)  # nothing lost, nothing twice
    pool_of = {m.id: by_body[m.content_hash] for m in scan.memories}
    assert len(submitted) == 3 * 4 + 8
    for item in submitted:  # every id a writer was given is the file holding what it wrote
        assert pool_of.get(item.memory_id) == item.index, item
    assert len(list(recall.layout.episodic_dir.glob("*.md"))) == len(expected)

    final = open_recall(repo).sync_index()  # what `local-recall index` runs
    assert not final.rebuilt, final  # the concurrent index writers left it sound
    assert final.total == len(expected)
    assert index_plan(open_recall(repo)) == IndexPlan((), (), ())
    print(
        f"\nconcurrent writers ({extraction}): 3 CLI x 4 adds, 8 MCP saves, "
        f"2 extraction chunks x 4 "
        f"({report['memories_created']} created by extraction, {report['duplicates']} already "
        f"there) -> {len(expected)} distinct memories, each once; {elapsed:.1f} s"
    )


# --- (c) a 10 MB prompt ----------------------------------------------------------------------


@dataclass(frozen=True)
class Measured:
    returncode: int
    stdout: bytes
    stderr: bytes
    seconds: float  # wall time: printed, never bounded (tests/test_no_wall_clock.py)
    peak_rss_mb: float
    cpu_seconds: float  # the command's own, user + system


# A small launcher runs the command and reports the command's own rusage: a child forked
# straight from pytest would count pytest's ~0.5 GB (ru_maxrss keeps the pre-exec high-water).
_LAUNCHER = """
import json, os, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
with open(sys.argv[1], "w") as out:
    json.dump({"status": os.waitstatus_to_exitcode(status), "maxrss_kb": usage.ru_maxrss,
               "cpu": usage.ru_utime + usage.ru_stime}, out)
"""


def run_measured(
    args: list[str], stdin: bytes, cwd: Path, env: Mapping[str, str], report: Path
) -> Measured:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, str(report), *args],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        env=dict(env),
        timeout=180,
    )
    seconds = time.monotonic() - started
    measured = json.loads(report.read_text("utf-8"))
    assert proc.returncode == 0
    return Measured(
        measured["status"],
        proc.stdout,
        proc.stderr,
        seconds,
        measured["maxrss_kb"] / 1024,
        measured["cpu"],
    )


def hook_args() -> list[str]:
    return [sys.executable, "-m", "local_recall", "hook", "user-prompt-submit"]


PROMPT = "how do we dedupe memory saves?"
TEN_MB = PROMPT + " " + "x" * (10 * 1024 * 1024)


def small_and_10_mb_prompt(
    repo: Path, extra: Mapping[str, str] | None = None
) -> tuple[Measured, Measured]:
    """The prompt hook run on PROMPT, then on TEN_MB, each measured (time, peak RSS, CPU)."""
    env = hook_env(repo, extra)
    report = repo.parent / "rusage.json"
    small = run_measured(hook_args(), prompt_input(PROMPT, repo), repo, env, report)
    big = run_measured(hook_args(), prompt_input(TEN_MB, repo), repo, env, report)
    return small, big


def test_10_mb_prompt_with_a_daemon_bounded_time_and_memory(
    repo: Path,
    stand_in: StandIn,
) -> None:
    small, big = small_and_10_mb_prompt(repo)
    for ran in (small, big):
        assert (ran.returncode, ran.stderr) == (0, b"")
        assert json.loads(ran.stdout)["hookSpecificOutput"]["additionalContext"]
    # drained in 64 KB reads, not parsed whole: about the CPU of the small prompt's run
    assert big.cpu_seconds < 3 * small.cpu_seconds, (small, big)
    # the 10 MB are drained in 64 KB reads, at most 1 MB kept: no copy of the prompt in memory
    assert big.peak_rss_mb < small.peak_rss_mb + 8, (small, big)
    print(
        f"\n10 MB prompt, daemon path: {big.seconds:.2f} s, peak RSS {big.peak_rss_mb:.0f} MB "
        f"(small prompt: {small.seconds:.2f} s, {small.peak_rss_mb:.0f} MB)"
    )


@pytest.mark.slow
def test_10_mb_prompt_without_a_daemon_bounded_time_and_memory(repo: Path) -> None:
    """No daemon: the hook searches in its own process (the library's fallback path)."""
    recall = open_recall(repo)
    recall.add("Dedupe saves with filelock", "Memory saves are deduplicated under a filelock.")
    recall.sync_index()
    # a deadline no load reaches: the in-process search loads the model (seconds when busy)
    small, big = small_and_10_mb_prompt(repo, {"LOCAL_RECALL_HOOK_DEADLINE_SECONDS": "120"})
    for ran in (small, big):
        assert (ran.returncode, ran.stderr) == (0, b"")
        assert b"filelock" in ran.stdout  # answered: its deadline was not reached
    assert big.cpu_seconds < 3 * small.cpu_seconds, (small, big)
    assert big.peak_rss_mb < small.peak_rss_mb + 12, (small, big)
    print(
        f"\n10 MB prompt, in-process fallback: {big.seconds:.2f} s, peak RSS "
        f"{big.peak_rss_mb:.0f} MB (small prompt: {small.seconds:.2f} s, "
        f"{small.peak_rss_mb:.0f} MB)"
    )


def test_measuring_sees_a_child_that_loads_its_whole_input(tmp_path: Path) -> None:
    """The RSS measure itself: a naive hook that reads and parses all of a 10 MB stdin shows
    about 20 MB more than one that drains it, well over the 8 MB the hook tests allow."""
    report = tmp_path / "rusage.json"
    stdin = json.dumps({"prompt": TEN_MB}).encode()
    loads = [sys.executable, "-c", "import json, sys; print(len(json.load(sys.stdin)['prompt']))"]
    drains = [sys.executable, "-c", "import sys\nwhile sys.stdin.buffer.read(65536): pass"]
    naive = run_measured(loads, stdin, tmp_path, clean_env(), report)
    drained = run_measured(drains, stdin, tmp_path, clean_env(), report)
    assert naive.stdout.strip() == str(len(TEN_MB)).encode()
    assert naive.peak_rss_mb > drained.peak_rss_mb + 15, (naive, drained)
