"""Record the Claude Code transcripts in tests/fixtures/claude-code/ with the real CLI, offline.

    .venv/bin/python -m tests.record_claude_fixtures            # the pinned CLI (claude_cli.py)
    .venv/bin/python -m tests.record_claude_fixtures --claude PATH --out DIR

Each scenario runs the real `claude -p` in a scratch HOME against tests/fake_anthropic.py, with
scripted model answers, project hooks and a one-tool MCP server; the transcripts it writes under
`~/.claude/projects/` are copied out with the scratch paths rewritten to `/home/dev/...`, so a
recording names no path of the machine that made it. What each file holds and which tests read
it: tests/fixtures/claude-code/README.md. Re-record after upgrading the pinned CLI, then run
tests/capture/test_transcripts.py and tests/capture/test_pipeline.py: they read facts (ids, offsets,
timestamps) from the files, and assert what the parser must make of them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from local_recall.capture.transcripts.project_dirs import encode_project_dir
from tests.claude_cli import CLAUDE_CODE_PACKAGE, claude_or_fail, offline_env, run_claude
from tests.fake_anthropic import (
    FakeAnthropic,
    Reply,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    blocks_reply,
    text_reply,
)

OUT = Path(__file__).resolve().parent / "fixtures" / "claude-code"  # transcript_fixtures.py
FAKE_HOME = "/home/dev"  # what the scratch HOME is rewritten to
ANSWER = "Hello from fake model."
THOUGHT = "Let me check the directory listing first."
BASH = {"command": "echo hello-from-bash && ls", "description": "Print greeting"}
MCP_QUERY = "testing preferences"
AGENT_PROMPT = "List what is in this repo"
COMPACT = "/compact keep memories"

HOOK_SCRIPT = """\
#!{python}
# A test hook: `plain` prints a line, `json` returns additionalContext, `silent` prints nothing.
import json
import sys

mode, event = sys.argv[1], json.load(sys.stdin)["hook_event_name"]
if mode == "plain":
    print(f"PLAIN-{{event}}-MARKER: remember the codeword BANANA")
elif mode == "json":
    context = f"JSON-{{event}}-MARKER: codeword KIWI"
    output = {{"hookEventName": event, "additionalContext": context}}
    print(json.dumps({{"hookSpecificOutput": output}}))
"""

MCP_SERVER = """\
# A third-party-like MCP server with one tool (not ours: its results must reach the extractor).
from mcp.server.mcpserver import MCPServer

server = MCPServer(name="recall")


@server.tool(structured_output=False)  # plain text content, as most servers answer
def search_plain(query: str) -> str:
    \"\"\"Search plain memories.\"\"\"
    return f"PLAIN-MEMORY-RESULT for {query!r}"


server.run("stdio")
"""


def session_id(name: str) -> str:
    """A stable session id (random-looking, version 4 like the CLI's own), so a re-recording
    keeps the file names."""
    digest = hashlib.sha256(f"local-recall/tests/fixtures/{name}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


# --- what the fake model answers ------------------------------------------------------------


def _messages(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [m for m in body.get("messages") or () if isinstance(m, dict)]


def _has_tool_result(body: Mapping[str, Any]) -> bool:
    return any(
        isinstance(block, dict) and block.get("type") == "tool_result"
        for message in _messages(body)
        if isinstance(message.get("content"), list)
        for block in message["content"]
    )


def _user_text(body: Mapping[str, Any]) -> str:
    """The user's own words in the conversation (no tool results, no tool inputs)."""
    parts = []
    for message in _messages(body):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [b.get("text", "") for b in content if isinstance(b, dict)]
    return "\n".join(parts)


def _tools(body: Mapping[str, Any]) -> set[str]:
    return {str(t.get("name")) for t in body.get("tools") or () if isinstance(t, dict)}


def answer(_: Mapping[str, Any]) -> Reply:
    return text_reply(ANSWER)


def bash_with_thinking(body: Mapping[str, Any]) -> Reply:
    if _has_tool_result(body):
        return blocks_reply([ThinkingBlock(THOUGHT), TextBlock("Done with bash.")])
    call = ToolUseBlock("Bash", BASH, id="toolu_01Bash0000000000000000")
    return blocks_reply([ThinkingBlock(THOUGHT), call])


def mcp_call(body: Mapping[str, Any]) -> Reply:
    tool = "mcp__recall__search_plain"
    if _has_tool_result(body) or tool not in _tools(body):
        return text_reply(ANSWER)
    call = ToolUseBlock(tool, {"query": MCP_QUERY}, id="toolu_01Mcp00000000000000000")
    return blocks_reply([call])


def subagent(body: Mapping[str, Any]) -> Reply:
    if _has_tool_result(body) or AGENT_PROMPT in _user_text(body):
        return text_reply("Agent reply.")  # the main session's last answer, or the subagent's
    task = {"description": "Look around", "prompt": AGENT_PROMPT, "subagent_type": "Explore"}
    return blocks_reply([ToolUseBlock("Agent", task, id="toolu_01Agent000000000000000")])


# --- scenarios -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    name: str  # the fixture's file name (or folder, for the subagent) without .jsonl
    project: str  # folder under ~/work the CLI starts in
    prompts: tuple[str, ...]  # the first starts the session, the others resume it
    responder: Callable[[Mapping[str, Any]], Reply]
    # event -> (matcher, hook mode) entries in the project's .claude/settings.json
    hooks: Mapping[str, Sequence[tuple[str, str]]] = field(default_factory=dict)
    args: tuple[str, ...] = ()
    mcp: bool = False  # connect the one-tool MCP server "recall"
    git_branch: str | None = None  # a repository with one commit on this branch
    files: tuple[str, ...] = ()

    @property
    def session(self) -> str:
        return session_id(self.name)


SCENARIOS = (
    Scenario(
        "01-hooks-sessionstart-userpromptsubmit",
        "projA",
        ("hello there",),
        answer,
        hooks={"SessionStart": [("startup", "plain")], "UserPromptSubmit": [("", "json")]},
    ),
    Scenario(
        "02-bash-tooluse-thinking-gitbranch",
        "my.proj_dir with space",
        ("run a command please",),
        bash_with_thinking,
        args=("--allowedTools", "Bash"),
        git_branch="feature/x",
        files=("a.txt",),
    ),
    Scenario(
        "03-mcp-tooluse",
        "proj",
        ("recall?",),
        mcp_call,
        args=("--allowedTools", "mcp__recall", "--strict-mcp-config"),
        mcp=True,
    ),
    Scenario("04-subagent", "proj", ("use a subagent",), subagent),
    Scenario(
        "05-resume-and-compact",
        "proj",
        # too early to compact, three turns, then a compaction that runs both compact hooks
        ("first turn", COMPACT, "turn 2", "turn 3", "turn 4", COMPACT),
        answer,
        hooks={
            "SessionStart": [("compact", "json")],
            "PreCompact": [("", "plain")],
            "PostCompact": [("", "silent")],
        },
    ),
)


def _git(cwd: Path, *args: str) -> None:
    identity = ("-c", "user.name=Dev", "-c", "user.email=dev@example.com")
    subprocess.run(["git", *identity, *args], cwd=cwd, check=True, capture_output=True)


def _project(home: Path, scenario: Scenario, hook: Path) -> Path:
    cwd = home / "work" / scenario.project
    cwd.mkdir(parents=True, exist_ok=True)
    for name in scenario.files:
        (cwd / name).write_text("a\n")
    if scenario.git_branch:
        _git(cwd, "init", "-q", "-b", scenario.git_branch)
        _git(cwd, "add", "-A")
        _git(cwd, "commit", "-q", "-m", "init")
    settings: dict[str, Any] = {"hooks": {}}
    for event, entries in scenario.hooks.items():
        settings["hooks"][event] = [
            {
                **({"matcher": matcher} if matcher else {}),
                "hooks": [{"type": "command", "command": f"{hook} {mode}", "timeout": 10}],
            }
            for matcher, mode in entries
        ]
    (cwd / ".claude").mkdir(exist_ok=True)
    (cwd / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2))
    return cwd


def _run(claude: str, scenario: Scenario, cwd: Path, home: Path, mcp_config: str) -> None:
    for number, prompt in enumerate(scenario.prompts):
        session = ("--session-id" if number == 0 else "--resume", scenario.session)
        args = [*scenario.args, *(("--mcp-config", mcp_config) if scenario.mcp else ())]
        # A fresh fake API per run: its message ids restart at msg_fake000001, so one id recurs
        # across the prompts of a resumed session, which the parser must not merge.
        with FakeAnthropic(scenario.responder) as api:
            env = offline_env(home, api.url)
            done = run_claude(
                claude, ["-p", prompt, *session, *args], cwd=cwd, env=env, timeout=180
            )
        if done.returncode != 0:
            raise SystemExit(f"{scenario.name}: claude -p {prompt!r} failed: {done.stderr}")


def _rewrite(text: str, home: Path) -> str:
    text = text.replace(str(home), FAKE_HOME)
    return text.replace(encode_project_dir(str(home)), encode_project_dir(FAKE_HOME))


def _copy_out(home: Path, scenario: Scenario, cwd: Path, out: Path) -> list[Path]:
    source = home / ".claude" / "projects" / encode_project_dir(str(cwd))
    main = source / f"{scenario.session}.jsonl"
    if scenario.name == "04-subagent":
        target_dir = out / scenario.name
        shutil.rmtree(target_dir, ignore_errors=True)
        pairs = [(main, target_dir / main.name)]
        for path in sorted((source / scenario.session).rglob("*")):
            if path.is_file():
                pairs.append((path, target_dir / path.relative_to(source)))
    else:
        pairs = [(main, out / f"{scenario.name}.jsonl")]
    written = []
    for src, dst in pairs:
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(_rewrite(src.read_text("utf-8"), home), "utf-8")
        written.append(dst)
    return written


def _check_clean(paths: Sequence[Path], scratch: Path) -> None:
    """No path of the recording machine may remain in a committed fixture."""
    places = (scratch, Path(tempfile.gettempdir()), Path.home(), Path(sys.prefix), OUT.parents[2])
    leaks = {str(place) + "/" for place in places} | {encode_project_dir(str(scratch))}
    for path in paths:
        text = path.read_text("utf-8")
        found = [leak for leak in leaks if leak in text]
        if found:
            raise SystemExit(f"{path}: still names {found} after rewriting")
        if path.suffix == ".jsonl":
            for line in text.splitlines():
                json.loads(line)  # every line stays one JSON value


def record(claude: str, out: Path) -> list[Path]:
    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="lr-record-") as scratch_dir:
        scratch = Path(scratch_dir)
        home = scratch / "home"
        hook = home / "bin" / "hook.py"
        hook.parent.mkdir(parents=True)
        hook.write_text(HOOK_SCRIPT.format(python=sys.executable))
        hook.chmod(0o755)
        server = scratch / "mcp_plain.py"
        server.write_text(textwrap.dedent(MCP_SERVER))
        mcp_config = json.dumps(
            {"mcpServers": {"recall": {"command": sys.executable, "args": [str(server)]}}}
        )
        for scenario in SCENARIOS:
            cwd = _project(home, scenario, hook)
            _run(claude, scenario, cwd, home, mcp_config)
            written += _copy_out(home, scenario, cwd, out)
        _check_clean(written, scratch)
    return written


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claude", help=f"the CLI (default: {CLAUDE_CODE_PACKAGE}, installed)")
    parser.add_argument("--out", type=Path, default=OUT)
    options = parser.parse_args(argv)
    try:
        claude = options.claude or claude_or_fail()
    except pytest.fail.Exception as exc:  # outside pytest: a message, not a traceback
        raise SystemExit(str(exc)) from None
    version = subprocess.run([claude, "--version"], capture_output=True, text=True, check=True)
    print(f"recording with Claude Code {version.stdout.strip()} into {options.out}")
    for path in record(claude, options.out):
        print(f"  {path.relative_to(options.out)}  {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
