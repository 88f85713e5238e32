"""Whole-process latency of the UserPromptSubmit hook at 10k memories.

    .venv/bin/python benchmarks/hook_latency.py [--memories 10000] [--runs 30]
        [--repo /tmp/local-recall-bench-10k] [--write-readme]

Measures, as Claude Code runs it (a new process per prompt, JSON on stdin, the `local-recall`
console script of the venv):
  * baseline: `<venv python> -c pass` — the same interpreter binary, never a shim;
  * warm: a daemon is running for the repo (the hook asks it over the unix socket);
  * cold: no daemon (the hook searches in-process; the index exists, as after any earlier use).
p50 / p95 over --runs runs each, after two unmeasured warm-up runs. The generated repository is
kept (--repo) so re-runs skip the index build. `--write-readme` replaces this benchmark's section
of benchmarks/README.md (between its markers) and nothing else. The package's bytecode is compiled
first (as an install does) and PYTHONDONTWRITEBYTECODE is dropped for the measured processes.
"""

from __future__ import annotations

import argparse
import compileall
import json
import random
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(HERE))  # harness, also when imported by prompt_latency.py

from harness import (  # noqa: E402
    PYTHON,
    SCRIPT,
    Samples,
    Variant,
    daemon,
    fallbacks,
    hook_env,
    interleaved,
    machine,
    percentile,
    wait_until_ready,
)

START_MARK = "<!-- hook-latency:start -->"
END_MARK = "<!-- hook-latency:end -->"
PROMPT = "How do we keep two sessions from saving the same memory twice across processes?"

_TOPICS = (  # noqa: SIM905 - a word list reads better as one string
    "parser tokenizer lexer grammar ast visitor codegen optimizer cache eviction lru ttl "
    "database migration schema index transaction isolation deadlock retry backoff queue "
    "worker scheduler cron timeout socket tls certificate proxy http2 websocket grpc protobuf "
    "serializer json yaml toml config loader env override secret vault token oauth session "
    "cookie csrf cors header middleware router handler controller view template renderer css "
    "bundle webpack vite esbuild typescript mypy ruff pytest fixture mock snapshot coverage "
    "benchmark profiler flamegraph memory leak gc allocator arena pool thread lock mutex "
    "semaphore async await event loop future promise channel actor supervisor restart crash "
    "panic traceback logging metrics tracing span exporter dashboard alert pager oncall "
    "deploy rollback canary feature flag release tag changelog semver wheel sdist docker "
    "image layer registry kubernetes pod helm chart ingress dns resolver certificate renewal"
).split()
_VERBS = "fails breaks hangs slows leaks needs requires avoids replaces wraps retries".split()  # noqa: SIM905


def generate_memories(episodic: Path, count: int, seed: int = 7) -> None:
    """`count` varied synthetic memories, plus a few that answer PROMPT."""
    from local_recall.memory.format import render_memory
    from local_recall.memory.model import Memory, content_hash

    rng = random.Random(seed)
    episodic.mkdir(parents=True, exist_ok=True)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    needles = [
        (
            "Use filelock for cross-process dedup of saved memories",
            "Two Claude sessions can save the same memory at once. MemoryStore.create takes a "
            "filelock in local-recall/state/ and looks the content hash up again inside it, so "
            "the second save returns the existing memory instead of writing a duplicate.",
        ),
        (
            "Content hash identifies a memory's body",
            "content_hash is sha256 of the normalised body; find_by_hash is how duplicate saves "
            "across processes are detected.",
        ),
    ]
    for i in range(count):
        if i < len(needles):
            subject, body = needles[i]
        else:
            words = rng.sample(_TOPICS, 6)
            subject = (
                f"{words[0].capitalize()} {rng.choice(_VERBS)} when {words[1]} meets {words[2]}"
            )
            sentences = [
                f"The {rng.choice(_TOPICS)} {rng.choice(_VERBS)} because of {rng.choice(_TOPICS)}"
                f" in the {rng.choice(_TOPICS)} {rng.choice(_TOPICS)}."
                for _ in range(rng.randint(2, 6))
            ]
            body = " ".join(sentences)
        memory = Memory(
            id=str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            subject=subject,
            body=body,
            keywords=tuple(rng.sample(_TOPICS, 3)),
            applies_to=rng.choice(["global", "global", "global", f"area:{rng.choice(_TOPICS)}"]),
            occurred_at=start + timedelta(minutes=37 * i),
            content_hash=content_hash(body),
            source="benchmark",
        )
        (episodic / f"{memory.id}.md").write_text(render_memory(memory), encoding="utf-8")


def prepare_repo(repo: Path, count: int) -> None:
    """The repository with `count` memories, written once and kept; the index is brought up to
    date on every run (a no-op unless its format or the embedder changed)."""
    from local_recall.recall import Recall
    from local_recall.settings import Settings

    marker = repo / ".bench-ready"
    fresh = not (marker.exists() and marker.read_text() == str(count))
    if fresh:
        if repo.exists():
            shutil.rmtree(repo)
        repo.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
    recall = Recall.open(settings=Settings(root=repo, environ=hook_env(repo)))
    if fresh:
        recall.init()
        print(f"writing {count} memories ...", flush=True)
        generate_memories(recall.layout.episodic_dir, count)
        marker.write_text(str(count))
    print("bringing the index up to date (slow only the first time) ...", flush=True)
    started = time.monotonic()
    report = recall.sync_index()
    print(
        f"  {report.total} memories, {report.embedded} embedded in "
        f"{time.monotonic() - started:.0f} s",
        flush=True,
    )


def daemon_round_trips(
    repo: Path, env: dict[str, str], runs: int
) -> tuple[Samples, dict[str, Any]]:
    """The daemon's share: one `answer` request over the socket, as the hook sends it."""
    from local_recall.context.hook_settings import hook_environment
    from local_recall.daemon.query_client import ask, socket_paths

    paths = socket_paths(repo.resolve(), env)
    request = {
        "op": "answer",
        "kind": "prompt",
        "agent": "claude_code",
        "prompt": PROMPT,
        "hook_env": hook_environment(env),
    }
    reply: dict[str, Any] = {}
    samples = Samples()
    for i in range(runs + 2):
        started = time.perf_counter()
        reply = ask(paths, request, 10.0) or {}
        if i >= 2:
            samples.wall.append(time.perf_counter() - started)
    return samples, reply


def stand_in_repo(repo: Path) -> Path:
    """A second, empty repository whose hook is answered by an instant stand-in daemon."""
    from local_recall.recall import Recall
    from local_recall.settings import Settings

    other = repo.parent / f"{repo.name}-standin"
    if not (other / "local-recall").is_dir():
        other.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", str(other)], check=True)
        Recall.open(settings=Settings(root=other, environ=hook_env(other))).init()
    return other


def hook_import_ms(repo: Path, env: dict[str, str], stdin: bytes) -> float:
    done = subprocess.run(
        [str(PYTHON), "-X", "importtime", "-m", "local_recall", "hook", "user-prompt-submit"],
        input=stdin,
        env=env,
        cwd=repo,
        capture_output=True,
        check=False,
    )
    for line in done.stderr.decode().splitlines():
        parts = [part.strip() for part in line.split("|")]
        if len(parts) == 3 and parts[2] == "local_recall.claude_code.hooks.events":
            return int(parts[1]) / 1000
    return float("nan")


_IMPORT_PROBE = """
import sys, time
for name in sys.argv[1:]:
    started = time.perf_counter()
    __import__(name)
    print(name, time.perf_counter() - started)
"""


def import_costs(env: dict[str, str], runs: int = 10) -> dict[str, float]:
    """Median wall time of importing, in this order in a fresh interpreter, what the warm hook
    pulls in (through layout.py: dataclasses, tempfile) and what the cold path adds (lancedb)."""
    names = ["typing", "dataclasses", "tempfile", "hashlib", "socket", "json", "lancedb"]
    seen: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(runs):
        done = subprocess.run(
            [str(PYTHON), "-c", _IMPORT_PROBE, *names],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        for line in done.stdout.splitlines():
            name, seconds = line.split()
            seen[name].append(float(seconds))
    return {name: statistics.median(v) for name, v in seen.items() if v}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--repo", type=Path, default=Path("/tmp/local-recall-bench-10k"))
    parser.add_argument("--write-readme", action="store_true")
    args = parser.parse_args()
    if args.runs < 20:
        parser.error("--runs must be at least 20")
    repo: Path = args.repo.absolute()
    # Installed packages have their bytecode compiled; a checkout may not (for instance with
    # PYTHONDONTWRITEBYTECODE set), and compiling hooks.py on every prompt is not what users pay.
    compileall.compile_dir(str(PROJECT / "local_recall"), quiet=1)
    prepare_repo(repo, args.memories)
    other = stand_in_repo(repo)
    hook = [str(SCRIPT), "hook", "user-prompt-submit"]

    def stdin_for(root: Path) -> bytes:
        event = {"session_id": "b", "cwd": str(root), "prompt": PROMPT}
        return json.dumps({**event, "hook_event_name": "UserPromptSubmit"}).encode()

    env = hook_env(repo)
    baseline = Variant("baseline", [str(PYTHON), "-c", "pass"], b"", env, repo)
    warm = Variant("warm", hook, stdin_for(repo), env, repo)
    instant = Variant("instant", hook, stdin_for(other), hook_env(other), other)
    no_daemon = hook_env(repo, LOCAL_RECALL_HOOKS_START_DAEMON="false")
    cold = Variant("cold", hook, stdin_for(repo), no_daemon, repo)

    print(daemon(repo, env, "start"), flush=True)
    wait_until_ready(repo)
    round_trips, canned = daemon_round_trips(repo, env, args.runs)
    from local_recall.daemon.query_client import socket_paths
    from local_recall.daemon.query_server import QueryServer

    stand_in = QueryServer(
        socket_paths(other.resolve(), instant.env),
        lambda _r: canned,
        pointer=other / "local-recall" / "state" / "daemon.socket",  # as the daemon does
    )
    stand_in.start()
    before = fallbacks(repo)
    try:
        hot = interleaved([baseline, warm, instant], args.runs)
    finally:
        stand_in.close()
    warm_fallbacks = fallbacks(repo) - before
    imports_ms = hook_import_ms(repo, env, warm.stdin)
    costs = import_costs(env)
    daemon(repo, env, "stop")
    before = fallbacks(repo)
    slow = interleaved([baseline, cold], args.runs)
    cold_fallbacks = fallbacks(repo) - before

    def row(name: str, got: Samples, base: Samples | None) -> str:
        wall50 = statistics.median(got.wall)
        cpu = f"{statistics.median(got.cpu) * 1000:.0f} ms" if got.cpu else "—"
        ratio = "—"
        if base is not None:
            ratio = (
                f"{wall50 / statistics.median(base.wall):.1f}× / "
                f"{statistics.median(got.cpu) / statistics.median(base.cpu):.1f}×"
            )
        return f"| {name} | {wall50 * 1000:.0f} ms | {percentile(got.wall, 0.95) * 1000:.0f} ms | {cpu} | {ratio} |"  # noqa: E501

    text = "\n".join(
        [
            f"Machine: {machine()}; {args.memories:,} memories; {args.runs} interleaved runs "
            f"each; {datetime.now(UTC):%Y-%m-%d}.",
            "",
            "| | p50 wall | p95 wall | p50 CPU | p50 vs baseline (wall / CPU) |",
            "|---|---:|---:|---:|---:|",
            row("`python -c pass` (baseline, warm series)", hot["baseline"], None),
            row("prompt hook, warm (daemon up)", hot["warm"], hot["baseline"]),
            row("· the daemon's search: one socket round trip", round_trips, None),
            row(
                "· prompt hook, instant stand-in daemon (the hook's own cost)",
                hot["instant"],
                hot["baseline"],
            ),
            row("`python -c pass` (baseline, cold series)", slow["baseline"], None),
            row("prompt hook, cold (no daemon; index exists)", slow["cold"], slow["baseline"]),
            "",
            f"Warm runs that fell back to in-process search: {warm_fallbacks} of {args.runs + 2}"
            f" (cold: {cold_fallbacks} of {args.runs + 2}). Context injected: warm "
            f"{b'additionalContext' in hot['warm'].last_stdout}, cold "
            f"{b'additionalContext' in slow['cold'].last_stdout}. hooks module import "
            f"(cumulative, `-X importtime`): {imports_ms:.1f} ms. CPU = user + sys of the hook "
            "process, less sensitive than wall time to other load on the machine.",
            "",
            "Import costs in a fresh interpreter (median of 10, wall): "
            + ", ".join(f"`{name}` {ms * 1000:.1f} ms" for name, ms in costs.items())
            + ". The warm hook imports none of `dataclasses`, `tempfile` or `hashlib`: "
            "`layout.Layout` is a NamedTuple, `files.py` imports tempfile only to write, and "
            "`hashlib` is needed only when `state/daemon.socket` is missing.",
        ]
    )
    print(text)
    if args.write_readme:
        write_readme_section(text)
    return 0


def write_readme_section(body: str) -> None:
    readme = HERE / "README.md"
    section = (
        f"{START_MARK}\n## Hook latency (`benchmarks/hook_latency.py`)\n\n"
        "Whole-process time of `local-recall hook user-prompt-submit` as Claude Code runs it "
        "(new process, JSON on stdin), against `python -c pass` of the same venv interpreter. "
        "Targets: warm p50 ≤ 3× baseline; cold ≤ 2.5 s.\n\n"
        f"{body}\n{END_MARK}\n"
    )
    text = readme.read_text(encoding="utf-8") if readme.exists() else "# Benchmarks\n"
    if START_MARK in text and END_MARK in text:
        before, rest = text.split(START_MARK, 1)
        after = rest.split(END_MARK, 1)[1].lstrip("\n")
        text = before + section + ("\n" + after if after else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    readme.write_text(text, encoding="utf-8")
    print(f"wrote {readme}")


if __name__ == "__main__":
    sys.exit(main())
