"""A command hook of two installs, interleaved: wall and CPU time of the whole process.

    .venv/bin/python benchmarks/hook_ab.py --repo /tmp/local-recall-bench-prompt-5000 \
        --launchers BEFORE/bin/local-recall AFTER/bin/local-recall [--rounds 30] \
        [--event user-prompt-submit | session-start]

Each round runs `<launcher> hook <event>` once per install (the order alternates, so load that
comes and goes hits both alike) with a new session and a new prompt, as Claude Code does: JSON
on stdin, the repository as cwd. The repository's daemon must be running (benchmarks/
prompt_latency.py prepares the repository and starts one); both installs ask the same daemon,
so what differs is the hook's own process. Wall time is printed, CPU time (user + system of
the process, from the kernel) is the steadier figure on a shared machine. The first round is
not counted (the OS's caches). Install each checkout as a user does (not editable: a dev
install's path finder costs every Python start ~8 ms more):

    python -m venv /tmp/after && /tmp/after/bin/pip install --no-deps <checkout>
    echo <main venv>/lib/python3.11/site-packages > /tmp/after/lib/python3.11/site-packages/deps.pth
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import time
from pathlib import Path


def run_once(
    launcher: str, repo: Path, event: str, tag: str, env: dict[str, str]
) -> tuple[float, float, int]:
    payload = {
        "session_id": f"ab-{tag}-{time.time_ns()}",
        "hook_event_name": "SessionStart" if event == "session-start" else "UserPromptSubmit",
        "prompt": f"How does the nightly export job retry failed uploads ({tag})?",
        "source": "startup",
        "cwd": str(repo),
        "transcript_path": str(repo / "ab.jsonl"),
    }
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [launcher, "hook", event],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=repo,
        env=env,
        check=False,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall * 1000, cpu * 1000, len(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--launchers", nargs=2, required=True, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--event", default="user-prompt-submit")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOCAL_RECALL_", "CLAUDE"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # installs compile their bytecode
    env["LOCAL_RECALL_EXTRACTION_ENABLED"] = "false"
    names = ("before", "after")
    samples: dict[str, list[tuple[float, float, int]]] = {name: [] for name in names}
    for round_ in range(args.rounds + 1):
        order = list(zip(names, args.launchers, strict=True))
        for name, launcher in order if round_ % 2 else reversed(order):
            got = run_once(launcher, args.repo, args.event, f"{name}-{round_}", env)
            if round_:
                samples[name].append(got)
    print(f"{args.event}, {args.rounds} rounds, load {os.getloadavg()[0]:.2f}")
    for name in names:
        wall, cpu, size = (statistics.median(column) for column in zip(*samples[name], strict=True))
        low = sorted(s[0] for s in samples[name])[len(samples[name]) // 10]
        figures = f"wall p50 {wall:.1f} ms (p10 {low:.1f}), CPU p50 {cpu:.1f} ms"
        print(f"{name}: {figures}, {size:.0f} bytes out")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
