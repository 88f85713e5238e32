"""What local-recall adds to a prompt, where the user feels it: in the real Claude Code CLI.

    .venv/bin/python benchmarks/prompt_latency.py --claude PATH [--memories 5000]
        [--sessions 8] [--turns 4] [--repo /tmp/local-recall-bench-prompt-5k] [--launcher CMD]

Claude Code (`claude -p`) runs offline against tests/fake_anthropic.py and reports, per prompt,
`time_to_request_ms`: from the prompt being submitted to the model request leaving (UserPromptSubmit
hooks included; start-up and SessionStart hooks are not — they run before the first prompt).
Three configurations, passed with `--settings`, interleaved (every round runs each once, in
rotating order, so load that comes and goes on a shared machine hits all alike):

  * none:          no hooks;
  * true:          a do-nothing `true` command hook on UserPromptSubmit (the price of any hook);
  * local-recall:  the three hooks `local-recall init` writes (SessionStart, UserPromptSubmit,
                   SessionEnd), with the repository's daemon warm (started and past its first
                   pass before the runs).

Each run is one session of `--turns` prompts fed one at a time (`--input-format stream-json`,
the next prompt sent once the previous one's result is out), so turns 2.. are prompts in a warm
session; `--turns 1` runs exactly `claude -p --output-format json PROMPT` per prompt. No MCP
server in any configuration (`--strict-mcp-config`): this measures the hooks. The daemon runs
with the benchmark's environment (extraction enabled as by default; whether `claude` is on its
PATH is up to you — the issue's measurement had it missing).

`--diagnose` adds configurations that take the prompt hook apart (UserPromptSubmit only):
  * py-pass / py-S-pass: `<venv python> -c pass` / `-S -c pass` (interpreter start, with and
    without site-packages processing);
  * lr-standin: the local-recall hook against an instant stand-in daemon (a canned reply: the
    hook process without the search);
  * http-standin / mcp-standin: Claude Code's `http` and `mcp_tool` handlers answered at once by
    a stand-in with the same canned output (what a handler costs without a process).

Prints the per-configuration medians and one markdown table row:
| claude | memories | prompts/config | none p50 | true − none | local-recall − none
| local-recall − true | load |
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.append(str(PROJECT))  # tests.*; local_recall stays whatever the environment gives
sys.path.insert(0, str(HERE))  # hook_latency: the same synthetic memories; harness

from harness import wait_until_ready  # noqa: E402

PROMPTS = (
    "How do we keep two sessions from saving the same memory twice across processes?",
    "Why does the websocket proxy hang when the tls certificate is renewed?",
    "What did we decide about retry backoff in the queue worker?",
    "run the linter",
    "How is the lru cache eviction tuned for the parser?",
    "thanks! now write the changelog entry for the release",
    "Where does the scheduler timeout come from when cron jobs overlap?",
    "Which database migration broke the transaction isolation tests?",
)


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LOCAL_RECALL_", "CLAUDE", "ANTHROPIC_", "MCP_", "OTEL_"))
    }
    env.update(extra or {})
    return env


def lr(launcher: list[str], repo: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [*launcher, *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"local-recall {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def prepare_repo(repo: Path, count: int, launcher: list[str], env: dict[str, str]) -> None:
    """A git repository with `count` memories and an index; kept between runs (--repo)."""
    from hook_latency import generate_memories

    marker = repo / ".bench-ready"
    if not (marker.exists() and marker.read_text() == str(count)):
        if repo.exists():
            shutil.rmtree(repo)
        repo.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        lr(launcher, repo, env, "init", "--no-claude")
        print(f"writing {count} memories ...", flush=True)
        generate_memories(repo / "local-recall" / "episodic-memory", count)
        marker.write_text(str(count))
    print("indexing (slow only the first time) ...", flush=True)
    lr(launcher, repo, env, "index")


def hook_settings(launcher: list[str], repo: Path, env: dict[str, str]) -> dict[str, Any]:
    """The hooks `local-recall init` writes, read back from .claude/settings.json (which is
    then removed: each configuration gets its hooks from --settings only)."""
    lr(launcher, repo, env, "init")
    settings_file = repo / ".claude" / "settings.json"
    hooks = json.loads(settings_file.read_text())["hooks"]
    shutil.rmtree(repo / ".claude")
    (repo / ".mcp.json").unlink(missing_ok=True)
    return {"hooks": hooks}


def user_message(text: str) -> bytes:
    message = {"type": "user", "message": {"role": "user", "content": text}}
    return (json.dumps(message) + "\n").encode()


def run_session(
    claude: str,
    settings: dict[str, Any],
    prompts: list[str],
    repo: Path,
    env: dict[str, str],
    extra_args: list[str] | None = None,
) -> list[float | None]:
    """One Claude Code session; the `time_to_request_ms` of each prompt (None: not reported)."""
    base = [claude, "-p", "--strict-mcp-config", "--settings", json.dumps(settings)]
    base += extra_args or []
    if len(prompts) == 1:
        done = subprocess.run(
            [*base, "--output-format", "json", prompts[0]],
            cwd=repo,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=300,
            check=False,
        )
        result = json.loads(done.stdout)
        return [result.get("time_to_request_ms")]
    args = [*base, "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
    process = subprocess.Popen(
        args, cwd=repo, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    times: list[float | None] = []
    try:
        for prompt in prompts:
            process.stdin.write(user_message(prompt))
            process.stdin.flush()
            for line in process.stdout:
                event = json.loads(line)
                if event.get("type") == "result":
                    times.append(event.get("time_to_request_ms"))
                    break
            else:
                raise SystemExit(f"claude ended early (exit {process.wait()})")
        process.stdin.close()
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return times


MCP_STANDIN = """
import sys
from mcp.server.mcpserver import MCPServer
OUTPUT = open(sys.argv[1], encoding="utf-8").read()
server = MCPServer(name="standin")


@server.tool()
def prompt_context(prompt: str = "") -> str:
    \"\"\"The canned hook output.\"\"\"
    return OUTPUT


server.run()
"""


def diagnostic_configs(
    repo: Path, launcher: list[str], env: dict[str, str], work: Path
) -> tuple[dict[str, dict[str, Any]], dict[str, list[str]], list[Any]]:
    """The --diagnose configurations, extra claude arguments per configuration, and the
    servers to close afterwards."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from hook_latency import stand_in_repo

    from local_recall.daemon.query_client import ask, daemon_sockets, socket_paths
    from local_recall.daemon.query_server import QueryServer

    request = {"op": "search", "query": PROMPTS[0], "limit": 10, "min_score": 0.35}
    canned = ask(daemon_sockets(repo, repo / "local-recall" / "state", env), request, 30) or {}
    other = stand_in_repo(repo)
    stand_in = QueryServer(
        socket_paths(other.resolve(), env),
        lambda _request: canned,
        pointer=other / "local-recall" / "state" / "daemon.socket",
    )
    stand_in.start()
    hook = [*launcher, "hook", "user-prompt-submit"]
    stdin = json.dumps({"session_id": "d", "cwd": str(repo), "prompt": PROMPTS[0]}).encode()
    output = subprocess.run(
        hook, input=stdin, capture_output=True, cwd=repo, env=env, check=False
    ).stdout
    (work / "canned.json").write_bytes(output)

    class Answer(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(output)))
            self.end_headers()
            self.wfile.write(output)

    http = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    (work / "mcp_standin.py").write_text(MCP_STANDIN, encoding="utf-8")
    mcp = {
        "mcpServers": {
            "standin": {
                "type": "stdio",
                "command": sys.executable,
                "args": [str(work / "mcp_standin.py"), str(work / "canned.json")],
            }
        }
    }
    python = sys.executable

    def ups(handler: dict[str, Any]) -> dict[str, Any]:
        return {"hooks": {"UserPromptSubmit": [{"hooks": [{"timeout": 10, **handler}]}]}}

    configs = {
        "py-pass": ups({"type": "command", "command": f"{python} -c pass"}),
        "py-S-pass": ups({"type": "command", "command": f"{python} -S -c pass"}),
        "lr-standin": ups(
            {"type": "command", "command": f"LOCAL_RECALL_ROOT={other} {' '.join(hook)}"}
        ),
        "http-standin": ups(
            {"type": "http", "url": f"http://127.0.0.1:{http.server_address[1]}/hook"}
        ),
        "mcp-standin": ups(
            {
                "type": "mcp_tool",
                "server": "standin",
                "tool": "prompt_context",
                "input": {"prompt": "${prompt}"},
            }
        ),
    }
    extra_args = {"mcp-standin": ["--mcp-config", json.dumps(mcp)]}
    return configs, extra_args, [stand_in.close, http.shutdown]


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.1f}/{five:.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--claude", required=True, help="the Claude Code CLI binary")
    parser.add_argument("--memories", type=int, default=5000)
    parser.add_argument("--sessions", type=int, default=8, help="rounds (sessions per config)")
    parser.add_argument("--turns", type=int, default=4, help="prompts per session")
    parser.add_argument("--repo", type=Path, default=None)
    parser.add_argument(
        "--launcher",
        default=str(Path(sys.executable).absolute().parent / "local-recall"),
        help="the local-recall command (default: the console script of this interpreter's venv)",
    )
    parser.add_argument("--diagnose", action="store_true", help="add the diagnostic configs")
    args = parser.parse_args()
    warm_prompts = args.sessions * (args.turns - 1 if args.turns > 1 else 1)
    if warm_prompts < 20:
        parser.error("need at least 20 measured prompts per configuration (sessions × turns)")
    repo: Path = (args.repo or Path(f"/tmp/local-recall-bench-prompt-{args.memories}")).absolute()
    launcher = [args.launcher]
    # An install compiles the package's bytecode; a checkout run with PYTHONDONTWRITEBYTECODE
    # would otherwise compile the hook's modules again on every prompt.
    import local_recall

    compileall.compile_dir(str(Path(local_recall.__file__).parent), quiet=1)
    base_env = clean_env()
    prepare_repo(repo, args.memories, launcher, base_env)
    installed = hook_settings(launcher, repo, base_env)
    configs: dict[str, dict[str, Any]] = {
        "none": {},
        "true": {
            "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "true"}]}]}
        },
        "local-recall": installed,
    }

    from tests.claude_cli import offline_env
    from tests.fake_anthropic import FakeAnthropic, default_responder

    home = repo.parent / f"{repo.name}-home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    extra_args: dict[str, list[str]] = {}
    closers: list[Any] = []
    print(lr(launcher, repo, base_env, "daemon", "start").strip(), flush=True)
    try:
        wait_until_ready(repo, deadline=900)
        if args.diagnose:
            more, extra_args, closers = diagnostic_configs(repo, launcher, base_env, home)
            configs.update(more)
        samples: dict[str, list[float]] = {name: [] for name in configs}
        first: dict[str, list[float]] = {name: [] for name in configs}
        missing = 0
        with FakeAnthropic(default_responder(text="OK")) as api:
            env = offline_env(home, api.url, extra={"CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1"})
            names = list(configs)
            loads = [load()]
            for round_ in range(args.sessions + 1):  # round 0 warms caches, unmeasured
                shift = round_ % len(names)
                for name in names[shift:] + names[:shift]:
                    prompts = [
                        PROMPTS[(round_ * args.turns + i) % len(PROMPTS)] for i in range(args.turns)
                    ]
                    times = run_session(
                        args.claude, configs[name], prompts, repo, env, extra_args.get(name)
                    )
                    if round_ == 0:
                        continue
                    missing += sum(t is None for t in times)
                    got = [float(t) for t in times if t is not None]
                    if args.turns == 1:
                        samples[name].extend(got)
                    else:
                        first[name].extend(got[:1])
                        samples[name].extend(got[1:])
                loads.append(load())
            injected = sum(
                "<local-recall-context>" in json.dumps(r.body) for r in api.message_requests()
            )
        status = json.loads((repo / "local-recall" / "state" / "daemon.json").read_text())
    finally:
        for close in closers:
            close()
        lr(launcher, repo, base_env, "daemon", "stop")
    version = subprocess.run(
        [args.claude, "--version"], capture_output=True, text=True, check=False
    ).stdout.split()[0]
    med = {name: statistics.median(v) for name, v in samples.items()}
    label = "warm-session prompts (turns 2..)" if args.turns > 1 else "prompts (one per process)"
    for name, values in samples.items():
        if not values:
            print(f"{name:>13}: no time_to_request_ms reported")
            continue
        extra = ""
        if first[name]:
            extra = f"; first prompt of a session p50 {statistics.median(first[name]):.0f} ms"
        print(
            f"{name:>13}: {label} p50 {med[name]:.0f} ms, min {min(values):.0f}, "
            f"max {max(values):.0f} (n={len(values)}){extra}"
        )
    print(
        f"model requests carrying local-recall context: {injected}; prompts without "
        f"time_to_request_ms: {missing}; daemon counts: {status.get('counts')}; "
        f"load (1/5 min) per round: {' '.join(loads)}"
    )
    print(
        "| claude | memories | prompts/config | none p50 | true − none | local-recall − none "
        "| local-recall − true | load 1 min |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {version} | {args.memories:,} | {len(samples['none'])} | {med['none']:.0f} ms "
        f"| {med['true'] - med['none']:+.0f} ms | {med['local-recall'] - med['none']:+.0f} ms "
        f"| **{med['local-recall'] - med['true']:+.0f} ms** | {loads[0]}–{loads[-1]} |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
