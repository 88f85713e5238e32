"""What the user-scope hooks cost where they have nothing to do (docs/install.md).

`local-recall init --scope user` puts gated hook commands (claude_code/hooks/gate.py) into
~/.claude/settings.json, so they run in every Claude Code session on the machine. This runs the
real commands the way Claude Code does (`/bin/sh -c <command>`, the hook's JSON on stdin, in the
session's directory) and reports the median wall and CPU time per run of:

- `true`                      Claude Code's floor for any command hook
- gated, no local-recall/     the prompt hook in a repository without local-recall (the gate exits)
- ungated, no local-recall/   what the same hook cost before the gate (a Python start that finds
                              no local-recall/ and exits)
- gated, at the root          the root of a repository whose project hooks answer (gate + grep)

    .venv/bin/python benchmarks/user_scope_gate.py [--runs 200]

With `--claude N`, also the real Claude Code CLI (offline against tests/fake_anthropic.py):
`claude -p` started in a subfolder of a repository without local-recall, N rounds of three
settings — no hooks, the gated user-scope hooks, the same hooks ungated — and the median of
what the CLI reports as `time_to_request_ms` (process start to the model request, so
SessionStart and UserPromptSubmit hooks included).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from local_recall.claude_code.hooks.gate import gated, ungated


def _one(command: str, cwd: Path, env: dict[str, str], stdin: bytes) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(["/bin/sh", "-c", command], cwd=cwd, env=env, input=stdin, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall * 1000, cpu * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--claude", type=int, default=0, metavar="N")
    options = parser.parse_args()
    runs = options.runs
    script = shlex.quote(str(Path(sys.executable).parent / "local-recall"))
    prompt = f"{script} hook user-prompt-submit"
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        other = base / "other"
        (other / "src" / "deep").mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(other)], check=True)
        served = base / "served"
        (served / "local-recall").mkdir(parents=True)
        (served / ".claude").mkdir()
        subprocess.run(["git", "init", "-q", str(served)], check=True)
        project = {
            "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": prompt}]}]}
        }
        (served / ".claude" / "settings.json").write_text(json.dumps(project))
        cases = [
            ("true", "true", other / "src" / "deep"),
            ("gated, no local-recall/ (3 levels down)", gated(prompt), other / "src" / "deep"),
            ("ungated, no local-recall/ (3 levels down)", prompt, other / "src" / "deep"),
            ("gated, root with project hooks", gated(prompt), served),
        ]
        results = {}
        for name, command, cwd in cases:
            env = {**os.environ, "CLAUDE_PROJECT_DIR": str(cwd)}
            env.pop("LOCAL_RECALL_ROOT", None)
            stdin = json.dumps(
                {"hook_event_name": "UserPromptSubmit", "cwd": str(cwd), "prompt": "how do we x"}
            ).encode()
            samples = [_one(command, cwd, env, stdin) for _ in range(runs)]
            results[name] = (
                statistics.median(s[0] for s in samples),
                statistics.median(s[1] for s in samples),
            )
    print(f"{'case':45} {'wall ms':>8} {'cpu ms':>8}")
    for name, (wall, cpu) in results.items():
        print(f"{name:45} {wall:8.1f} {cpu:8.1f}")
    print("load:", os.getloadavg())
    if options.claude:
        _claude_rounds(options.claude)


def _claude_rounds(rounds: int) -> None:
    from local_recall.claude_code.install.plan import Launcher, plan_settings_install
    from tests.claude_cli import claude_or_fail, offline_env
    from tests.fake_anthropic import FakeAnthropic, default_responder

    launcher = Launcher((str(Path(sys.executable).parent / "local-recall"),))
    gated_doc = plan_settings_install({}, launcher, gate=True)
    ungated_doc = plan_settings_install({}, launcher, gate=True)
    for groups in ungated_doc["hooks"].values():
        for group in groups:
            group["hooks"] = [{**h, "command": ungated(h["command"])} for h in group["hooks"]]
    settings = {"no hooks": {}, "gated": gated_doc, "ungated": ungated_doc}
    times: dict[str, list[int]] = {name: [] for name in settings}
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic(default_responder(text="ok")) as api:
        other = Path(tmp) / "other"
        (other / "src").mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(other)], check=True)
        home = Path(tmp) / "home"
        env = offline_env(home, api.url)
        for _ in range(rounds):
            for name, document in settings.items():
                (home / ".claude" / "settings.json").write_text(json.dumps(document))
                done = subprocess.run(
                    [claude_or_fail(), "-p", "hello", "--output-format", "json"],
                    cwd=other / "src",
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=120,
                    input="",
                    check=True,
                )
                times[name].append(int(json.loads(done.stdout)["time_to_request_ms"]))
    for name, values in times.items():
        print(f"claude -p {name:10} median time_to_request_ms {statistics.median(values):7.1f}")
    print("load:", os.getloadavg())


if __name__ == "__main__":
    main()
