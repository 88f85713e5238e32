"""Record real hook payloads and session files of Codex, Gemini CLI and Copilot CLI into
tests/fixtures/<agent>/ (see the README there).

    .venv/bin/python tests/record_agent_fixtures.py [codex] [gemini] [copilot]

Each CLI (the pinned version, tests/agent_clis.py) runs offline against the local fake server
in a scratch git repository whose project config hooks every event we use to a recorder that
saves its stdin. Two prompts make one session (the second resumes the first); the first turn
runs a read-only tool, so the session file holds a tool call and its output. Scratch paths are
rewritten to /home/dev (home) and /home/dev/project (repository), and a fixture that still
names a path of this machine is refused.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.agent_clis import (
    GEMINI_MODEL,
    PACKAGES,
    agent_cli_or_fail,
    codex_env,
    copilot_env,
    gemini_env,
    run_cli,
    trust_codex_project,
    trust_copilot_folder,
)
from tests.fake_gemini import FakeGemini, GeminiCall
from tests.fake_openai import FakeOpenAI, ModelCall, Turn, call_tool, say

FIXTURES = Path(__file__).resolve().parent / "fixtures"
HOME_AS = "/home/dev"
PROJECT_AS = "/home/dev/project"
FIRST_PROMPT = (
    "Why do we deploy with scripts/bluegreen.sh? <private>my badge number is 4471</private> "
    "Remember: never restart pods directly, the load balancer must drain first."
)
SECOND_PROMPT = "And which port does the health check use?"
ANSWERS = (
    "We deploy with scripts/bluegreen.sh because the load balancer drains connections first.",
    "The health check listens on port 8081.",
)

# The hook events each agent fires, and the name its payload is saved under.
EVENTS = {
    "codex": ("SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"),
    "gemini": ("SessionStart", "BeforeAgent", "AfterAgent", "PreCompress", "SessionEnd"),
    "copilot": ("sessionStart", "userPromptSubmitted", "agentStop", "preCompact", "sessionEnd"),
}


def recorder_command(out_dir: Path, event: str) -> str:
    """A hook command that saves its stdin as <out_dir>/<event>-<n>.json and prints nothing."""
    script = (
        "import sys,pathlib;d=pathlib.Path(sys.argv[1]);d.mkdir(parents=True,exist_ok=True);"
        "n=len(list(d.glob(sys.argv[2]+'-*.json')));"
        "(d/(sys.argv[2]+'-'+str(n+1)+'.json')).write_bytes(sys.stdin.buffer.read())"
    )
    return f'{sys.executable} -c "{script}" {out_dir} {event}'


def scripted(
    tool_for: Callable[[Any], tuple[str, dict[str, Any], str | None] | None],
) -> Callable[[Any], Turn]:
    """First request of a turn: call the agent's read-only tool; after its output: answer."""

    def respond(call: Any) -> Turn:
        text = call.visible_text
        turn = 1 if SECOND_PROMPT in text else 0
        has_output = bool(
            call.function_responses if isinstance(call, GeminiCall) else call.tool_outputs
        )
        if turn == 0 and not has_output:
            tool = tool_for(call)
            if tool is not None:
                name, args, namespace = tool
                return call_tool(name, args, namespace=namespace)
        return say(ANSWERS[turn])

    return respond


def _git_repo(root: Path) -> Path:
    import subprocess

    project = root / "project"
    (project / "scripts").mkdir(parents=True)
    (project / "scripts" / "bluegreen.sh").write_text("#!/bin/sh\necho switch\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    subprocess.run(["git", "-C", str(project), "add", "-A"], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(project),
            "-c",
            "user.name=dev",
            "-c",
            "user.email=dev@example.com",
            "commit",
            "-qm",
            "init",
        ],
        check=True,
    )
    return project


# --- per agent ----------------------------------------------------------------------------------


def record_codex(scratch: Path, out: Path) -> None:
    project = _git_repo(scratch)
    home = scratch / "home"
    hooks_dir = scratch / "payloads"
    (project / ".codex").mkdir()
    hooks = {
        event: [{"hooks": [{"type": "command", "command": recorder_command(hooks_dir, event)}]}]
        for event in EVENTS["codex"]
    }
    (project / ".codex" / "hooks.json").write_text(json.dumps({"hooks": hooks}, indent=2))

    def tool(call: ModelCall) -> tuple[str, dict[str, Any], str | None] | None:
        return (
            ("exec_command", {"cmd": "ls scripts"}, None)
            if "exec_command" in call.tool_names
            else None
        )

    codex = agent_cli_or_fail("codex")
    with FakeOpenAI(scripted(tool)) as api:
        env = codex_env(home, api.url)
        trust_codex_project(home, project)
        flags = ["--dangerously-bypass-hook-trust", "--skip-git-repo-check"]
        for args in (
            ["exec", *flags, FIRST_PROMPT],
            ["exec", *flags, "resume", "--last", SECOND_PROMPT],
        ):
            done = run_cli(codex, args, cwd=project, env=env)
            if done.returncode != 0:
                raise SystemExit(f"codex {args[:2]} failed: {done.stderr[-2000:]}")
    sessions = sorted((home / ".codex" / "sessions").rglob("rollout-*.jsonl"))
    _save(out, hooks_dir, sessions, scratch, project, home)


def record_gemini(scratch: Path, out: Path) -> None:
    project = _git_repo(scratch)
    home = scratch / "home"
    hooks_dir = scratch / "payloads"
    (project / ".gemini").mkdir()
    hooks = {
        event: [{"hooks": [{"type": "command", "command": recorder_command(hooks_dir, event)}]}]
        for event in EVENTS["gemini"]
    }
    (project / ".gemini" / "settings.json").write_text(json.dumps({"hooks": hooks}, indent=2))

    def tool(call: GeminiCall) -> tuple[str, dict[str, Any], str | None] | None:
        return (
            ("list_directory", {"dir_path": "scripts"}, None)
            if "list_directory" in call.tool_names
            else None
        )

    gemini = agent_cli_or_fail("gemini")
    with FakeGemini(scripted(tool)) as api:
        env = gemini_env(home, api.url)
        for args in (
            ["-m", GEMINI_MODEL, "-p", FIRST_PROMPT],
            ["-m", GEMINI_MODEL, "--resume", "latest", "-p", SECOND_PROMPT],
        ):
            done = run_cli(gemini, args, cwd=project, env=env)
            if done.returncode != 0:
                raise SystemExit(f"gemini failed: {done.stderr[-2000:]}")
    sessions = sorted((home / ".gemini" / "tmp").rglob("chats/session-*.json*"))
    _save(out, hooks_dir, sessions, scratch, project, home)


def record_copilot(scratch: Path, out: Path) -> None:
    project = _git_repo(scratch)
    home = scratch / "home"
    hooks_dir = scratch / "payloads"
    (project / ".github" / "hooks").mkdir(parents=True)
    hooks = {
        event: [{"type": "command", "bash": recorder_command(hooks_dir, event), "timeoutSec": 10}]
        for event in EVENTS["copilot"]
    }
    doc = {"version": 1, "hooks": hooks}
    (project / ".github" / "hooks" / "recorder.json").write_text(json.dumps(doc, indent=2))

    def tool(call: ModelCall) -> tuple[str, dict[str, Any], str | None] | None:
        if "bash" not in call.tool_names:
            return None
        return ("bash", {"command": "ls scripts", "description": "List scripts"}, None)

    copilot = agent_cli_or_fail("copilot")
    with FakeOpenAI(scripted(tool)) as api:
        env = copilot_env(home, api.url)
        trust_copilot_folder(home, project)
        for args in (
            ["-p", FIRST_PROMPT, "--allow-all-tools"],
            ["--continue", "-p", SECOND_PROMPT, "--allow-all-tools"],
        ):
            done = run_cli(copilot, args, cwd=project, env=env)
            if done.returncode != 0:
                raise SystemExit(f"copilot failed: {done.stderr[-2000:]}")
    sessions = sorted((home / ".copilot" / "session-state").glob("*/events.jsonl"))
    _save(out, hooks_dir, sessions, scratch, project, home)


# --- saving -------------------------------------------------------------------------------------


def _save(
    out: Path, payloads: Path, sessions: list[Path], scratch: Path, project: Path, home: Path
) -> None:
    """Payloads as hook-<event>-<n>.json, session files under their own names (Copilot's
    events.jsonl as events-<n>.jsonl), with the scratch paths rewritten."""
    if not sessions:
        raise SystemExit("no session file was written")
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*"):
        if old.name != "README.md":
            old.unlink()
    for source in sorted(payloads.glob("*.json")):
        data = json.loads(source.read_bytes())
        text = json.dumps(data, indent=2, ensure_ascii=False)
        (out / f"hook-{source.name}").write_text(_scrub(text, scratch, project, home) + "\n")
    for index, session in enumerate(sessions, start=1):
        name = session.name if session.name != "events.jsonl" else f"events-{index}.jsonl"
        text = _scrub(session.read_text(encoding="utf-8"), scratch, project, home)
        (out / name).write_text(text, encoding="utf-8")
    leaks = [p.name for p in out.glob("*") if str(scratch) in p.read_text(errors="ignore")]
    if leaks:
        raise SystemExit(f"fixtures still name this machine's paths: {leaks}")


def _scrub(text: str, scratch: Path, project: Path, home: Path) -> str:
    for real, shown in ((project, PROJECT_AS), (home, HOME_AS), (scratch, HOME_AS)):
        for form in {str(real), str(real.resolve())}:
            text = text.replace(form, shown)
    return text.replace(sys.executable, "/usr/bin/python3")


RECORDERS = {"codex": record_codex, "gemini": record_gemini, "copilot": record_copilot}


def main(argv: list[str]) -> int:
    for agent in argv or list(RECORDERS):
        if agent not in RECORDERS:
            print(f"unknown agent {agent!r}: use {', '.join(RECORDERS)}", file=sys.stderr)
            return 2
        with tempfile.TemporaryDirectory(prefix=f"record-{agent}-") as tmp:
            RECORDERS[agent](Path(tmp).resolve(), FIXTURES / agent)
        print(f"{agent}: recorded with {PACKAGES[agent]} into {FIXTURES / agent}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
