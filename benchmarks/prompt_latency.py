"""What local-recall adds to a prompt where the user waits: the real Claude Code CLI, paced.

    .venv/bin/python benchmarks/prompt_latency.py [--claude PATH] [--memories 5000]
        [--sessions 2] [--turns 12] [--single 6] [--configs none,true,local-recall]
        [--candidates] [--search-runs 5] [--repo DIR] [--json OUT]
        [--cold N [--baseline-in-place OTHER_LOCAL_RECALL]]

A temp git repository with `--memories` synthetic memories and one marker memory, `local-recall
init` (its hooks, its MCP server, approved), `index`, the daemon started and past its first
pass. Claude Code runs offline against tests/fake_anthropic.py in its default environment (MCP
servers connect in the background: `claude -p` does not wait for them). Three measurements,
every configuration run once per round in a rotating order (load that comes and goes on a
shared machine hits all alike):

  * paced sessions: one `claude -p --input-format stream-json --output-format stream-json
    --verbose` session of `--turns` prompts typed like a person: the first 8 s after start,
    each next one 1.5 s after the previous answer. Claude Code reports each turn's
    `time_to_request_ms` (prompt in -> model request out, UserPromptSubmit hooks included).
    Per prompt = the median of turns 2.. over all sessions; first prompt = turn 1's median.
  * single runs: `claude -p --output-format json PROMPT` (start-up, SessionStart hooks and a
    first prompt typed before any MCP server connected). Start-up = spawn -> model request,
    minus that prompt's `time_to_request_ms`; `claude -p` first prompt = that
    `time_to_request_ms`.
  * search: the daemon's answer to the prompt hook's own request (socket round trip, warm
    process), p50 / p95 over the session prompts.

Configurations (`--configs`; each is the project's `.claude/settings.json` for a session, the
init's `.mcp.json` and its approval always in place):

  * none:         `init`'s settings with `"disableAllHooks": true` (Claude Code's floor);
  * true:         `init`'s settings with the UserPromptSubmit hooks replaced by the command
                  `true` (what any command hook costs);
  * local-recall: `init`'s settings as this checkout writes them.

With `--cold N` (N rounds after one uncounted; `--sessions 0 --single 0 --search-runs 0` for
these alone), no daemon runs when a session starts (`daemon stop` before each), as after
`init`, a reboot, or in CI: per configuration, a session whose first prompt is sent at once and
whose second is typed COLD_TYPED_DELAY s after the first answer, then a single `claude -p`.
The first prompt then has no daemon to ask (SessionStart starts one for the next prompts) and
no MCP server connected: the command hook answers it in its own process. The table gives its
`time_to_request_ms`, the typed one's, and the `claude -p` start-up, each over hooks disabled.
`--baseline-in-place OTHER` adds configuration `baseline`: another checkout's `local-recall`
(e.g. main's) in this repository's settings, the same store and caches, in the same rounds.

`--candidates` adds the prompt-hook designs measured side by side (prompt_latency_candidates.py).
The marker memory is asked about on turns 1 and 7 of every session and in every single run;
the table says on how many of those it reached the model. Every figure is printed with the
1-minute load average of the rounds it came from.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import platform
import queue
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.append(str(PROJECT))  # tests.*; local_recall stays whatever the environment gives
sys.path.insert(0, str(HERE))  # hook_latency: the same synthetic memories

MARKER_WORD = "QUINCE-7731"
MARKER_SUBJECT = "Nightly export retries use the quince backoff table"
MARKER_BODY = (
    "The nightly export job retries failed uploads with the quince backoff table (1, 4, 16 "
    f"minutes) and then pages the on-call. Codeword {MARKER_WORD}."
)
MARKER_PROMPT = "How does the nightly export job retry failed uploads before it pages on-call?"
# Turns of a paced session, in order (turn 1 and 7 ask for the marker memory). A mix of what a
# person types: questions the store may answer, instructions, and bare go-aheads.
SESSION_PROMPTS = (
    MARKER_PROMPT,
    "Why does the websocket proxy hang when the tls certificate is renewed?",
    "thanks! now run the linter",
    "What did we decide about retry backoff in the queue worker?",
    "How is the lru cache eviction tuned for the parser?",
    "continue",
    "Before you change it again: what retry schedule does the nightly export use?",
    "Where does the scheduler timeout come from when cron jobs overlap?",
    "Which database migration broke the transaction isolation tests?",
    "yes do it",
    "How do we keep two sessions from saving the same memory twice across processes?",
    "write the changelog entry for the release",
)
MARKER_TURNS = (1, 7)
DEFAULT_CONFIGS = "none,true,local-recall"
FIRST_PROMPT_DELAY = 8.0
NEXT_PROMPT_DELAY = 1.5
# --cold: the second prompt of a cold session, typed this long after the first one's answer
COLD_TYPED_DELAY = 3.0
DEFAULT_CLAUDE = Path.home() / ".cache" / "local-recall-e2e" / "node_modules" / ".bin" / "claude"


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LOCAL_RECALL_", "CLAUDE", "ANTHROPIC_", "MCP_", "OTEL_"))
        and k != "PYTHONDONTWRITEBYTECODE"
    }
    # The pipeline's extraction would call `claude -p` after every session: not what is measured.
    env["LOCAL_RECALL_EXTRACTION_ENABLED"] = "false"
    env.update(extra or {})
    return env


def lr(launcher: list[str], repo: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [*launcher, *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"local-recall {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def prepare_repo(repo: Path, count: int, launcher: list[str], env: dict[str, str]) -> None:
    """A git repository with `count` memories + the marker, initialised and indexed; the
    memories are kept between runs, `init` and `index` run every time (this checkout's)."""
    from hook_latency import generate_memories

    ready = repo / ".bench-ready"
    if not (ready.exists() and ready.read_text() == f"{count}+marker"):
        if repo.exists():
            shutil.rmtree(repo)
        repo.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        lr(launcher, repo, env, "init", "--no-claude")
        print(f"writing {count} memories ...", flush=True)
        generate_memories(repo / "local-recall" / "episodic-memory", count)
        lr(launcher, repo, env, "add", "--subject", MARKER_SUBJECT, "--body", MARKER_BODY)
        ready.write_text(f"{count}+marker")
    shutil.rmtree(repo / ".claude", ignore_errors=True)
    (repo / ".mcp.json").unlink(missing_ok=True)
    lr(launcher, repo, env, "init")  # hooks, MCP server and its approval, as a user gets them
    print("indexing (slow only the first time) ...", flush=True)
    lr(launcher, repo, env, "index")


def wait_until_ready(repo: Path, deadline: float = 900) -> None:
    status = repo / "local-recall" / "state" / "daemon.json"
    until = time.monotonic() + deadline
    while time.monotonic() < until:
        try:
            data = json.loads(status.read_text())
            if data.get("state") == "running" and data.get("last_pass"):
                return
        except (OSError, ValueError):
            pass
        time.sleep(0.2)
    raise SystemExit("daemon did not become ready")


# --- configurations ---------------------------------------------------------------------------


@dataclass
class Setup:
    """A checkout under test: its `local-recall` command and a repository it initialised (its
    own daemon, and the settings and MCP server its `init` wrote)."""

    name: str
    launcher: list[str]
    repo: Path
    settings: dict[str, Any] = field(default_factory=dict)
    mcp: dict[str, Any] = field(default_factory=dict)

    def read_installed(self) -> None:
        self.settings = json.loads((self.repo / ".claude" / "settings.json").read_text())
        self.mcp = json.loads((self.repo / ".mcp.json").read_text())


@dataclass
class Config:
    """What one session runs with: the project's `.claude/settings.json` and `.mcp.json` in
    `setup`'s repository (None: as its `init` wrote them), extra arguments and environment."""

    name: str
    setup: Setup
    settings: dict[str, Any] | None = None
    mcp: dict[str, Any] | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)

    def write(self) -> None:
        """The project files Claude Code reads at start: its settings and its MCP servers."""
        write_project(
            self.setup.repo, self.settings or self.setup.settings, self.mcp or self.setup.mcp
        )


def write_project(repo: Path, settings: dict[str, Any], mcp: dict[str, Any]) -> None:
    for path, document in (
        (repo / ".claude" / "settings.json", settings),
        (repo / ".mcp.json", mcp),
    ):
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def base_configs(setup: Setup) -> dict[str, Config]:
    installed = setup.settings
    true_hooks = dict(installed.get("hooks") or {})
    true_hooks["UserPromptSubmit"] = [
        {"hooks": [{"type": "command", "command": "true", "timeout": 10}]}
    ]
    return {
        "none": Config("none", setup, {**installed, "disableAllHooks": True}),
        "true": Config("true", setup, {**installed, "hooks": true_hooks}),
        "local-recall": Config("local-recall", setup),
    }


def prepare_baseline(source: Path, launcher: list[str], env: dict[str, str]) -> Setup:
    """A copy of the benchmark repository (memories and index) set up by another checkout's
    `local-recall` (e.g. main's), to measure it in the same rounds."""
    repo = source.parent / f"{source.name}-baseline"
    shutil.rmtree(repo, ignore_errors=True)
    # its own config.toml too: an older checkout refuses sections it does not know yet
    skip = shutil.ignore_patterns("state", "recall.log*", ".claude", ".mcp.json", "config.toml")
    shutil.copytree(source, repo, ignore=skip, symlinks=True)
    lr(launcher, repo, env, "init")
    lr(launcher, repo, env, "index")
    setup = Setup("baseline", launcher, repo)
    setup.read_installed()
    return setup


# --- running Claude Code -----------------------------------------------------------------------


class Api:
    """The fake Messages API, noting when each model request arrived and whether it carried
    the marker memory."""

    def __init__(self) -> None:
        from tests.fake_anthropic import FakeAnthropic, default_responder

        answer = default_responder(text="OK")
        self.arrivals: list[tuple[float, bool]] = []
        self._lock = threading.Lock()

        def respond(body: dict[str, Any]) -> Any:
            with self._lock:
                self.arrivals.append((time.monotonic(), MARKER_WORD in json.dumps(body)))
            return answer(body)

        self.server = FakeAnthropic(respond)

    def since(self, moment: float) -> list[tuple[float, bool]]:
        with self._lock:
            return [a for a in self.arrivals if a[0] >= moment]


def _cpu_ticks(pid: int, *, children: bool) -> int:
    """User + system CPU of a process (and of its reaped children), in clock ticks."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0
    # after the command: state is fields[0]; utime, stime, cutime, cstime are fields 11-14
    return sum(int(v) for v in fields[11 : 15 if children else 13])


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            found += [int(p) for p in task.read_text().split()]
    return found


def session_cpu_ms(claude_pid: int, daemon_pid: int | None) -> float:
    """CPU time so far of Claude Code with every hook process it ran (reaped children), its
    MCP servers (live children) and the daemon: what a prompt costs in CPU, which a loaded
    machine distorts far less than wall time."""
    ticks = _cpu_ticks(claude_pid, children=True)
    ticks += sum(_cpu_ticks(child, children=False) for child in _children(claude_pid))
    if daemon_pid:
        ticks += _cpu_ticks(daemon_pid, children=False)
    return ticks * 1000 / os.sysconf("SC_CLK_TCK")


_asked = itertools.count(1)


def fresh(prompt: str) -> str:
    """`prompt` made new for every session: the daemon keeps the embeddings of the last few
    hundred queries, and a person does not type one question twice. Prompts with nothing to
    look up ("continue") are left as they are, so they still skip the search."""
    from local_recall.context.prompt import prompt_query
    from local_recall.search.query_intent import has_nothing_to_look_up

    query = prompt_query(prompt)
    if query is None or has_nothing_to_look_up(query):
        return prompt
    return f"{prompt} (note {next(_asked)})"


def user_message(text: str) -> bytes:
    message = {"type": "user", "message": {"role": "user", "content": text}}
    return (json.dumps(message) + "\n").encode()


@dataclass
class Session:
    times: list[float | None]  # time_to_request_ms per turn
    marker: list[bool]  # per MARKER_TURNS: the marker memory reached the model
    connected: list[bool]  # per turn: the local-recall MCP server was connected (Claude Code says)
    cpu: list[float]  # per turn: CPU ms from prompt sent to answer (session_cpu_ms)


def paced_session(
    claude: str,
    config: Config,
    prompts: list[str],
    env: dict[str, str],
    api: Api,
    *,
    first_delay: float = FIRST_PROMPT_DELAY,
    next_delay: float = NEXT_PROMPT_DELAY,
) -> Session:
    repo = config.setup.repo
    args = [claude, "-p", "--input-format", "stream-json", "--output-format", "stream-json"]
    process = subprocess.Popen(
        [*args, "--verbose", *config.args],
        cwd=repo,
        env={**env, **config.env},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    results: queue.Queue[dict[str, Any] | None] = queue.Queue()

    def read(stream: Any) -> None:
        for line in stream:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("type") == "result" or event.get("subtype") == "init":
                results.put(event)
        results.put(None)

    reader = threading.Thread(target=read, args=(process.stdout,), daemon=True)
    reader.start()
    session = Session([], [], [], [])
    daemon_pid = daemon_pid_of(repo)
    try:
        time.sleep(first_delay)
        for turn, prompt in enumerate(prompts, 1):
            sent = time.monotonic()
            cpu_before = session_cpu_ms(process.pid, daemon_pid)
            process.stdin.write(user_message(fresh(prompt)))
            process.stdin.flush()
            connected = False
            while (event := results.get(timeout=300)) is not None and event["type"] != "result":
                servers = event.get("mcp_servers") or []  # the turn's `system` `init` event
                connected = any(
                    s.get("status") == "connected" and "local-recall" in str(s.get("name"))
                    for s in servers
                )
            if event is None:
                raise SystemExit(f"claude ended early (exit {process.wait()})")
            session.times.append(event.get("time_to_request_ms"))
            session.connected.append(connected)
            session.cpu.append(session_cpu_ms(process.pid, daemon_pid) - cpu_before)
            if turn in MARKER_TURNS:
                session.marker.append(any(hit for _, hit in api.since(sent)))
            time.sleep(next_delay)
        process.stdin.close()
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return session


@dataclass
class Single:
    time_to_request_ms: float | None
    startup_ms: float | None  # spawn -> model request, minus time_to_request_ms
    marker: bool


def single_run(claude: str, config: Config, env: dict[str, str], api: Api) -> Single:
    repo = config.setup.repo
    started = time.monotonic()
    done = subprocess.run(
        [claude, "-p", "--output-format", "json", *config.args, fresh(MARKER_PROMPT)],
        cwd=repo,
        env={**env, **config.env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=300,
        check=False,
    )
    try:
        ttr = json.loads(done.stdout).get("time_to_request_ms")
    except ValueError:
        ttr = None
    arrivals = api.since(started)
    startup = None
    if arrivals and isinstance(ttr, int | float):
        startup = (arrivals[0][0] - started) * 1000 - ttr
    return Single(ttr, startup, any(hit for _, hit in arrivals))


def daemon_pid_of(repo: Path) -> int | None:
    try:
        pid = json.loads((repo / "local-recall" / "state" / "daemon.json").read_text())["pid"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return pid if isinstance(pid, int) else None


# --- the search ---------------------------------------------------------------------------------


def search_times(repo: Path, env: dict[str, str], runs: int) -> list[float]:
    """The daemon's answer to the prompt hook's own request (op `answer`: the whole answer,
    socket round trip included), ms; every prompt new (its embedding included), each in a
    session of its own, as in the sessions."""
    from local_recall.context.hook_settings import hook_environment
    from local_recall.context.prompt import prompt_query
    from local_recall.daemon.query_client import ask, daemon_sockets
    from local_recall.search.query_intent import has_nothing_to_look_up

    sockets = list(daemon_sockets(repo, repo / "local-recall" / "state", env))  # an iterator
    prompts = [
        p for p in SESSION_PROMPTS if (q := prompt_query(p)) and not has_nothing_to_look_up(q)
    ]
    seen: list[float] = []
    for round_ in range(runs + 1):
        for number, prompt in enumerate(prompts):
            request = {
                "op": "answer",
                "kind": "prompt",
                "agent": "claude_code",
                "prompt": fresh(prompt),
                "session_id": f"bench-{round_}-{number}",
                "hook_env": hook_environment(env),
            }
            started = time.perf_counter()
            reply = ask(sockets, request, 10.0)
            if reply is None or reply.get("ok") is not True:
                raise SystemExit(f"the daemon did not answer a prompt: {reply}")
            if round_:
                seen.append((time.perf_counter() - started) * 1000)
    return seen


# --- figures ------------------------------------------------------------------------------------


def load() -> float:
    return os.getloadavg()[0]


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def med(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def signed(value: float | None) -> str:
    return "—" if value is None else f"{value:+.0f} ms"


def machine() -> str:
    cpu = platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


@dataclass
class Figures:
    turns: list[float] = field(default_factory=list)  # turns 2.. of every session
    connected: list[bool] = field(default_factory=list)  # per entry of `turns`: MCP server up
    cpu: list[float] = field(default_factory=list)  # per entry of `turns`: CPU ms (all processes)
    first: list[float] = field(default_factory=list)  # turn 1
    single: list[float] = field(default_factory=list)  # `claude -p` time_to_request_ms
    startup: list[float] = field(default_factory=list)
    marker_sessions: list[bool] = field(default_factory=list)
    marker_single: list[bool] = field(default_factory=list)
    missing: int = 0
    loads: list[float] = field(default_factory=list)
    # --cold: the daemon stopped before each session
    cold_first: list[float] = field(default_factory=list)  # turn 1, sent at once
    cold_typed: list[float] = field(default_factory=list)  # turn 2, COLD_TYPED_DELAY later
    cold_single: list[float] = field(default_factory=list)  # `claude -p` time_to_request_ms
    cold_startup: list[float] = field(default_factory=list)
    cold_marker: list[bool] = field(default_factory=list)
    cold_loads: list[float] = field(default_factory=list)


def report(figures: dict[str, Figures], version: str, memories: int, search: list[float]) -> str:
    base = figures["none"]
    head = [
        f"Claude Code {version}; {memories:,} memories + the marker; {machine()}; "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC.",
    ]
    if not (base.turns or base.single):  # --cold alone
        return "\n".join([*head, "", *cold_report(figures)])
    floor = med(base.turns)
    lines = [
        *head,
        "",
        "| configuration | per prompt, turns 2.. (p50) | added | added, MCP server connected "
        "| first prompt (turn 1) added | `claude -p` first prompt added | start-up added "
        "| CPU per prompt added | marker reached the model | load (1 min) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, got in figures.items():
        turns = med(got.turns)
        rel = None if turns is None or floor is None else turns - floor
        first = _delta(got.first, base.first)
        single = _delta(got.single, base.single)
        startup = _delta(got.startup, base.startup)
        marker = got.marker_sessions + got.marker_single
        loads = f"{min(got.loads):.1f}–{max(got.loads):.1f}" if got.loads else "—"
        shown = "—" if turns is None else f"{turns:.0f} ms"
        up = [t for t, on in zip(got.turns, got.connected, strict=True) if on]
        rel_up = None if not up or floor is None else statistics.median(up) - floor
        lines.append(
            f"| {name} | {shown} (n={len(got.turns)}) | **{signed(rel)}** "
            f"| {signed(rel_up)} (n={len(up)}) | {signed(first)} | {signed(single)} "
            f"| {signed(startup)} | {signed(_delta(got.cpu, base.cpu))} "
            f"| {sum(marker)}/{len(marker)} | {loads} |"
        )
    if search:
        lines += [
            "",
            f"Search (the daemon's answer to the prompt hook's request, socket round trip "
            f"included, {len(search)} requests): p50 {p(search, 0.5):.1f} ms, "
            f"p95 {p(search, 0.95):.1f} ms.",
        ]
    if base.cold_first or base.cold_single:
        lines += ["", *cold_report(figures)]
    missing = sum(f.missing for f in figures.values())
    if missing:
        lines.append(f"Turns without time_to_request_ms: {missing}.")
    return "\n".join(lines)


def cold_report(figures: dict[str, Figures]) -> list[str]:
    """The --cold rounds: no daemon when each session starts."""
    base = figures["none"]
    lines = [
        "No daemon when the session starts (`daemon stop` before each; medians, added over "
        "hooks disabled):",
        "",
        "| configuration | first prompt, sent at once | next prompt, typed "
        f"{COLD_TYPED_DELAY:.0f} s later | `claude -p` first prompt | `claude -p` start-up "
        "| marker reached the model | load (1 min) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, got in figures.items():
        loads = got.cold_loads
        load_text = f"{min(loads):.1f}–{max(loads):.1f}" if loads else "—"
        lines.append(
            f"| {name} | **{signed(_delta(got.cold_first, base.cold_first))}** "
            f"(n={len(got.cold_first)}) | {signed(_delta(got.cold_typed, base.cold_typed))} "
            f"| **{signed(_delta(got.cold_single, base.cold_single))}** "
            f"(n={len(got.cold_single)}) "
            f"| {signed(_delta(got.cold_startup, base.cold_startup))} "
            f"| {sum(got.cold_marker)}/{len(got.cold_marker)} | {load_text} |"
        )
    return lines


def _delta(values: list[float], base: list[float]) -> float | None:
    got, floor = med(values), med(base)
    return None if got is None or floor is None else got - floor


# --- main ---------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--claude",
        default=os.environ.get("LOCAL_RECALL_CLAUDE_BIN") or str(DEFAULT_CLAUDE),
        help="the Claude Code CLI binary (default: $LOCAL_RECALL_CLAUDE_BIN, else the e2e one)",
    )
    parser.add_argument("--memories", type=int, default=5000)
    parser.add_argument("--sessions", type=int, default=2, help="paced sessions per config")
    parser.add_argument("--turns", type=int, default=len(SESSION_PROMPTS))
    parser.add_argument("--single", type=int, default=6, help="single `claude -p` per config")
    parser.add_argument(
        "--configs",
        default=DEFAULT_CONFIGS,
        help="which to run; with --candidates, candidates named here (default: all of them)",
    )
    parser.add_argument("--candidates", action="store_true", help="add the candidate prompt hooks")
    parser.add_argument("--search-runs", type=int, default=5, help="rounds of the search timing")
    parser.add_argument(
        "--cold",
        type=int,
        default=0,
        help="rounds with no daemon when each session starts (`daemon stop` before it): a "
        "session whose first prompt is sent at once and its second typed "
        f"{COLD_TYPED_DELAY:.0f} s later, and a single `claude -p`, per configuration",
    )
    parser.add_argument("--repo", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="write every sample here")
    parser.add_argument(
        "--launcher",
        default=str(Path(sys.executable).absolute().parent / "local-recall"),
        help="the local-recall command (default: the console script of this interpreter's venv)",
    )
    parser.add_argument(
        "--baseline-launcher",
        default=None,
        help="another checkout's local-recall (e.g. main's): adds its init's settings as "
        "configuration `baseline`, in a copy of the repository with its own daemon",
    )
    parser.add_argument(
        "--baseline-in-place",
        default=None,
        help="with --cold: another checkout's local-recall (e.g. main's) as configuration "
        "`baseline` in the same repository (its hooks and MCP server in this checkout's "
        "settings): the same store and caches, and no daemon of either when a session starts",
    )
    args = parser.parse_args()
    if args.baseline_in_place and not args.cold:
        parser.error("--baseline-in-place needs --cold (a warm daemon would be this checkout's)")
    if not 2 <= args.turns <= len(SESSION_PROMPTS):
        parser.error(f"--turns must be 2..{len(SESSION_PROMPTS)}")
    if not Path(args.claude).exists():
        parser.error(f"no Claude Code CLI at {args.claude}")
    repo: Path = (args.repo or Path(f"/tmp/local-recall-bench-prompt-{args.memories}")).absolute()
    env0 = clean_env()
    setups = [Setup("branch", [args.launcher], repo)]
    # Installs compile the package's bytecode; a checkout run with PYTHONDONTWRITEBYTECODE would
    # otherwise compile the hook's modules again on every prompt.
    compile_package(args.launcher, env0)
    prepare_repo(repo, args.memories, setups[0].launcher, env0)
    setups[0].read_installed()
    if args.baseline_launcher:
        compile_package(args.baseline_launcher, env0)
        setups.append(prepare_baseline(repo, [args.baseline_launcher], env0))
    configs = base_configs(setups[0])
    configs = {name: configs[name] for name in args.configs.split(",") if name in configs}
    if "none" not in configs:
        parser.error("--configs must include none (the floor every figure is relative to)")
    configs.update(baselines(args, setups, env0))
    home = repo.parent / f"{repo.name}-home"
    shutil.rmtree(home, ignore_errors=True)
    try:
        for setup in setups:
            start_daemon(setup, env0)
        if args.candidates:
            from prompt_latency_candidates import candidate_configs

            named = set(args.configs.split(","))  # named in --configs: only those; else all
            configs.update(
                (name, config)
                for name, config in candidate_configs(setups[0]).items()
                if name in named or args.configs == DEFAULT_CONFIGS
            )
        search = search_times(repo, env0, args.search_runs) if args.search_runs else []
        figures = {name: Figures() for name in configs}
        api = Api()
        with api.server:
            from tests.claude_cli import offline_env

            env = offline_env(
                home, api.server.url, extra={"LOCAL_RECALL_EXTRACTION_ENABLED": "false"}
            )
            for key in ("MCP_CONNECTION_NONBLOCKING", "MCP_CONNECT_TIMEOUT_MS"):
                env.pop(key)  # Claude Code's default: MCP servers connect in the background
            run_rounds(args, configs, figures, env, api)
            run_cold_rounds(args, configs, figures, env, api, env0)
    finally:
        for setup in setups:
            write_project(setup.repo, setup.settings, setup.mcp)
            lr(setup.launcher, setup.repo, env0, "daemon", "stop")
    version = subprocess.run(
        [args.claude, "--version"], capture_output=True, text=True, check=False
    ).stdout.split()[0]
    text = report(figures, version, args.memories, search)
    print(text)
    if args.json:
        args.json.write_text(
            json.dumps(
                {"figures": {k: asdict(v) for k, v in figures.items()}, "search_ms": search},
                indent=1,
            )
        )
    return 0


def baselines(
    args: argparse.Namespace, setups: list[Setup], env: dict[str, str]
) -> dict[str, Config]:
    """Configuration `baseline`, if asked for: another checkout's in a copy of the repository
    (--baseline-launcher) or in the same one (--baseline-in-place)."""
    if args.baseline_launcher:
        return {"baseline": Config("baseline", setups[1])}
    if args.baseline_in_place:
        compile_package(args.baseline_in_place, env)
        return {"baseline": in_place(setups[0], args.launcher, args.baseline_in_place)}
    return {}


def in_place(setup: Setup, launcher: str, other: str) -> Config:
    """`setup`'s settings and MCP server with `other` in place of `launcher`."""

    def swapped(document: dict[str, Any]) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(json.dumps(document).replace(launcher, other))
        return found

    return Config("baseline", setup, swapped(setup.settings), swapped(setup.mcp))


def compile_package(launcher: str, env: dict[str, str]) -> None:
    """Compile the bytecode of the local_recall that `launcher`'s interpreter imports, and of
    its site-packages: `uv sync` writes none, and with PYTHONDONTWRITEBYTECODE in the
    environment every hook would compile numpy and onnxruntime's Python again (a checkout
    against another venv then measures its installer, not its code)."""
    python = Path(launcher).parent / "python"
    code = (
        "import compileall, local_recall, os, sysconfig; "
        "compileall.compile_dir(os.path.dirname(local_recall.__file__), quiet=1); "
        "compileall.compile_dir(sysconfig.get_path('purelib'), quiet=1, workers=2)"
    )
    subprocess.run([str(python), "-c", code], env=env, check=True)


def start_daemon(setup: Setup, env: dict[str, str]) -> None:
    # `daemon start` may give up waiting on a loaded machine; the daemon still comes up
    started = subprocess.run(
        [*setup.launcher, "daemon", "start"],
        cwd=setup.repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    print(f"{setup.name}: {(started.stdout + started.stderr).strip()}", flush=True)
    wait_until_ready(setup.repo)


def run_rounds(
    args: argparse.Namespace,
    configs: dict[str, Config],
    figures: dict[str, Figures],
    env: dict[str, str],
    api: Api,
) -> None:
    names = list(configs)
    prompts = list(SESSION_PROMPTS[: args.turns])
    # round 0 warms caches (the OS's, Claude Code's, the daemon's model and index; not its query
    # embeddings: every prompt is new, see fresh()) and is not counted
    for round_ in range(args.sessions + 1 if args.sessions else 0):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            config, got = configs[name], figures[name]
            config.write()
            before = load()
            session = paced_session(args.claude, config, prompts, env, api)
            first_up = session.connected.index(True) + 1 if any(session.connected) else "-"
            print(
                f"session {round_} {name}: {session.times} cpu "
                f"{[round(c) for c in session.cpu]} marker {session.marker} "
                f"MCP connected from turn {first_up}",
                flush=True,
            )
            if round_ == 0:
                continue
            got.loads += [before, load()]
            got.missing += sum(t is None for t in session.times)
            if session.times[0] is not None:
                got.first.append(float(session.times[0]))
            for t, on, spent in zip(
                session.times[1:], session.connected[1:], session.cpu[1:], strict=True
            ):
                if t is not None:
                    got.turns.append(float(t))
                    got.connected.append(on)
                    got.cpu.append(spent)
            got.marker_sessions += session.marker
    for round_ in range(args.single):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            config, got = configs[name], figures[name]
            config.write()
            before = load()
            single = single_run(args.claude, config, env, api)
            print(f"single {round_} {name}: {single}", flush=True)
            got.loads += [before, load()]
            if single.time_to_request_ms is not None:
                got.single.append(float(single.time_to_request_ms))
            if single.startup_ms is not None:
                got.startup.append(single.startup_ms)
            got.marker_single.append(single.marker)


def stop_daemon(setup: Setup, env: dict[str, str]) -> None:
    lr(setup.launcher, setup.repo, env, "daemon", "stop")


def run_cold_rounds(
    args: argparse.Namespace,
    configs: dict[str, Config],
    figures: dict[str, Figures],
    env: dict[str, str],
    api: Api,
    env0: dict[str, str],
) -> None:
    """--cold: as after `init`, a reboot, or in CI: no daemon when the session starts. Each
    configuration's session then its single `claude -p`, each after `daemon stop`; round 0
    (the OS's caches) is not counted."""
    names = list(configs)
    prompts = [MARKER_PROMPT, SESSION_PROMPTS[1]]
    for round_ in range(args.cold + 1 if args.cold else 0):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            config, got = configs[name], figures[name]
            config.write()
            stop_daemon(config.setup, env0)
            before = load()
            session = paced_session(
                args.claude,
                config,
                prompts,
                env,
                api,
                first_delay=0.0,
                next_delay=COLD_TYPED_DELAY,
            )
            stop_daemon(config.setup, env0)
            single = single_run(args.claude, config, env, api)
            stop_daemon(config.setup, env0)
            print(
                f"cold {round_} {name}: session {session.times} marker {session.marker}; "
                f"single {single}",
                flush=True,
            )
            if round_ == 0:
                continue
            got.cold_loads += [before, load()]
            if session.times[0] is not None:
                got.cold_first.append(float(session.times[0]))
            if session.times[1] is not None:
                got.cold_typed.append(float(session.times[1]))
            if single.time_to_request_ms is not None:
                got.cold_single.append(float(single.time_to_request_ms))
            if single.startup_ms is not None:
                got.cold_startup.append(single.startup_ms)
            got.cold_marker += [*session.marker, single.marker]


if __name__ == "__main__":
    sys.exit(main())
