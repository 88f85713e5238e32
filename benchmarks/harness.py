"""What the hook benchmarks share: the environment a hook runs with, the repository's daemon
(start/stop, ready), timed subprocess runs interleaved across variants, percentiles, the
machine line. Scripts import it as `harness` (their own folder is on sys.path)."""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

PYTHON = Path(sys.executable).absolute()  # the venv's python (symlink kept: it is the venv)
SCRIPT = PYTHON.parent / "local-recall"


def hook_env(repo: Path, **extra: str) -> dict[str, str]:
    """This process's environment without local-recall's and Claude Code's variables, as
    Claude Code would run the hooks of `repo` (extraction off: no pass competes)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LOCAL_RECALL_", "CLAUDE")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    env["CLAUDE_PROJECT_DIR"] = str(repo)
    env["CLAUDE_CONFIG_DIR"] = str(repo.parent / f"{repo.name}-claude")
    env["LOCAL_RECALL_EXTRACTION_ENABLED"] = "false"
    env.update(extra)
    return env


def daemon(repo: Path, env: dict[str, str], action: str) -> str:
    """`local-recall daemon <action>` for `repo`; what it printed."""
    done = subprocess.run(
        [str(SCRIPT), "--root", str(repo), "daemon", action],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    return (done.stdout + done.stderr).strip()


def wait_until_ready(repo: Path, deadline: float = 600) -> None:
    """Until the daemon has done its start-up sync and first pass (both run right after start
    and would compete with the measured runs for the CPU)."""
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
    raise SystemExit(f"the daemon of {repo} did not become ready")


def fallbacks(repo: Path) -> int:
    """How often a hook of `repo` has answered in-process (no daemon), as its log says."""
    log = repo / "local-recall" / "recall.log"
    if not log.exists():
        return 0
    return log.read_text(encoding="utf-8", errors="replace").count("searching in-process")


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank `q` quantile (0.5: the median); 0 for no values."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


@dataclass(frozen=True, slots=True)
class Variant:
    """One way of running a hook: its command, stdin, environment and working directory."""

    name: str
    argv: list[str]
    stdin: bytes
    env: dict[str, str]
    cwd: Path


@dataclass
class Samples:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # user + sys of the child process
    last_stdout: bytes = b""


def timed(variant: Variant, into: Samples | None = None) -> None:
    """Run `variant` once; its wall and CPU time go `into` (None: a warm-up run)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        variant.argv,
        input=variant.stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=variant.env,
        cwd=variant.cwd,
        check=False,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if into is not None:
        into.wall.append(wall)
        into.cpu.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        into.last_stdout = done.stdout


def interleaved(variants: list[Variant], runs: int) -> dict[str, Samples]:
    """Each round runs every variant once (rotating the order), so load that comes and goes on
    a shared machine hits all of them alike. Two unmeasured warm-up rounds first."""
    samples = {v.name: Samples() for v in variants}
    for _ in range(2):
        for variant in variants:
            timed(variant)
    for round_ in range(runs):
        shift = round_ % len(variants)
        for variant in variants[shift:] + variants[:shift]:
            timed(variant, samples[variant.name])
    return samples


def cpu_model(unknown: str) -> str:
    """The CPU's model name from /proc/cpuinfo, else `unknown`."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return unknown


def machine() -> str:
    """CPU model, count, Python version and the load average now (for the results' caption)."""
    cpu = cpu_model(platform.processor() or platform.machine())
    try:
        load = f" / load avg {os.getloadavg()[0]:.1f}"
    except OSError:
        load = ""
    return f"{cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()}{load}"
