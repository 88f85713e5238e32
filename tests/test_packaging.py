"""The package a user installs (docs/release.md): a wheel and an sdist that pass `twine check`,
installed as a uv tool from the built wheel and from a git URL, wired into another repository by
the installed `local-recall init`, and working from there: the hook commands `init` wrote run
the installed tool, its MCP server answers, and both work in the real Claude Code CLI.

The tool installs take the versions of uv.lock as constraints (`uv export`), so this test does
not depend on what PyPI serves today (.ci/drift checks the newest versions on purpose), and
they come from uv's cache once the README's test line has run."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from local_recall import __version__
from tests.claude_cli import claude_or_fail, offline_env, requires_claude, run_claude
from tests.claude_code.test_install import search_then_answer, tool_results
from tests.conftest import HANG_GUARDS, REPO_ROOT, git_init
from tests.fake_anthropic import FakeAnthropic, visible_text

pytestmark = pytest.mark.slow

UV = Path(sys.executable).parent / "uv"  # the locked uv of the dev environment
SUBJECT = "Use filelock for cross-process dedup"
MARKER = "PACKAGED-MARKER-4711"
# No daemon or extraction left behind by the hooks (docs/hooks.md).
QUIET = {"LOCAL_RECALL_HOOKS_START_DAEMON": "false", "LOCAL_RECALL_EXTRACTION_ENABLED": "false"}
# In the wheel: the code's data files, without which an installed tool breaks at run time.
DATA_FILES = (
    "local_recall/py.typed",
    "local_recall/models/minilm/tokenizer.json",
    "local_recall/redaction/rules/betterleaks.json",
    "local_recall/web/static/index.html",
    "local_recall/claude_code/agent_files/skills/using-memory/SKILL.md",
    "local_recall/claude_code/agent_files/commands/recall.md",
)


def run(
    args: Sequence[str | Path], *, cwd: Path, env: Mapping[str, str], stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=dict(env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"{args}: {done.stdout}\n{done.stderr}"
    return done


@dataclass(frozen=True)
class Tool:
    """local-recall installed by `uv tool install` into its own folders."""

    tools: Path  # UV_TOOL_DIR: the tool's own venv is tools/local-recall
    bin: Path  # UV_TOOL_BIN_DIR: what a user puts on PATH

    @property
    def script(self) -> Path:
        return self.tools / "local-recall" / "bin" / "local-recall"

    def env(self, home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """A user's shell: the tool's bin folder on PATH, the system's after it, and no
        development venv or LOCAL_RECALL_* setting of the test run."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LOCAL_RECALL_", "UV_"))}
        env.pop("VIRTUAL_ENV", None)
        env.update(
            {"PATH": f"{self.bin}{os.pathsep}/usr/local/bin:/usr/bin:/bin", "HOME": str(home)}
        )
        # the suite's hang guards too: the hooks' 8 s ran out on a loaded machine
        env.update({"CLAUDE_CONFIG_DIR": str(home / ".claude"), **QUIET, **HANG_GUARDS})
        env.update(extra or {})
        return env


def uv_env(tools: Path, bin_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UV_")}
    env.pop("VIRTUAL_ENV", None)
    env.update({"UV_TOOL_DIR": str(tools), "UV_TOOL_BIN_DIR": str(bin_dir)})
    env["UV_PYTHON_DOWNLOADS"] = "never"  # the interpreter running the tests, nothing fetched
    return env


def install_tool(source: str, where: Path, constraints: Path) -> Tool:
    tool = Tool(where / "tools", where / "bin")
    run(
        [UV, "tool", "install", "--python", sys.executable, "--constraints", constraints, source],
        cwd=where,
        env=uv_env(tool.tools, tool.bin),
    )
    return tool


def add_memory(repo: Path, env: Mapping[str, str]) -> str:
    added = run(
        ["local-recall", "add", "-s", SUBJECT, "-b", f"Codeword {MARKER}."], cwd=repo, env=env
    )
    return added.stdout.strip()


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    run([UV, "build", "--out-dir", out, REPO_ROOT], cwd=out, env=uv_env(out, out))
    return out


@pytest.fixture(scope="module")
def constraints(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lock's run-time versions, as constraints for a tool install."""
    path = tmp_path_factory.mktemp("constraints") / "constraints.txt"
    run(
        [UV, "export", "--frozen", "--no-emit-project", "--no-hashes", "-q", "-o", path],
        cwd=REPO_ROOT,
        env=uv_env(path.parent, path.parent),
    )
    return path


@pytest.fixture(scope="module")
def tool(dist: Path, constraints: Path, tmp_path_factory: pytest.TempPathFactory) -> Tool:
    (wheel,) = dist.glob("*.whl")
    return install_tool(str(wheel), tmp_path_factory.mktemp("wheel-tool"), constraints)


def test_wheel_and_sdist_pass_twine_check_and_carry_the_data_files(dist: Path) -> None:
    (wheel,) = dist.glob(f"local_recall-{__version__}-py3-none-any.whl")
    (sdist,) = dist.glob(f"local_recall-{__version__}.tar.gz")
    checked = run(
        [Path(sys.executable).parent / "twine", "check", "--strict", wheel, sdist],
        cwd=dist,
        env=os.environ,
    )
    assert checked.stdout.count("PASSED") == 2, checked.stdout
    names = set(zipfile.ZipFile(wheel).namelist())
    assert set(DATA_FILES) <= names
    assert not any(name.startswith("tests/") for name in names)
    entry_points = zipfile.ZipFile(wheel).read(
        f"local_recall-{__version__}.dist-info/entry_points.txt"
    )
    assert b"local-recall = local_recall.__main__:main" in entry_points
    with tarfile.open(sdist) as bundle:
        members = {name.split("/", 1)[-1] for name in bundle.getnames()}
    assert {"pyproject.toml", "README.md", "LICENSE", "local_recall/__init__.py"} <= members
    assert {m for m in members if m.startswith("tests/")} == set()  # MANIFEST.in: no half copy


def test_init_from_the_installed_tool_wires_hooks_and_mcp_to_it(tool: Tool, tmp_path: Path) -> None:
    repo = git_init(tmp_path / "my repo")
    env = tool.env(tmp_path / "home")
    assert shutil.which("local-recall", path=env["PATH"]) == str(tool.bin / "local-recall")
    run(["local-recall", "init"], cwd=repo, env=env)
    memory_id = add_memory(repo, env)

    # The bare name, since `local-recall` on PATH is the very script that ran init: committed
    # files hold no path of this machine, and resolve to the installed tool.
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    commands = {
        event: hook["command"]
        for event, groups in settings["hooks"].items()
        for group in groups
        for hook in group["hooks"]
        if hook["type"] == "command"  # UserPromptSubmit also has an mcp_tool (docs/hooks.md)
    }
    assert set(commands) == {"SessionStart", "UserPromptSubmit", "SessionEnd", "PreCompact"}
    # the prompt's command stands behind a shell guard: the launcher ends it either way
    assert all(shlex.split(c)[-3:-1] == ["local-recall", "hook"] for c in commands.values())
    server = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["local-recall"]
    assert (server["command"], server["args"]) == ("local-recall", ["mcp"])
    resolved = shutil.which(server["command"], path=env["PATH"])
    assert resolved is not None and os.path.samefile(resolved, tool.script)

    # The hook commands, run as Claude Code runs them: through a shell, JSON on stdin.
    event = {"session_id": "s1", "transcript_path": str(tmp_path / "none.jsonl"), "cwd": str(repo)}
    start = run(
        ["/bin/sh", "-c", commands["SessionStart"]],
        cwd=repo,
        env=env,
        stdin=json.dumps({**event, "hook_event_name": "SessionStart", "source": "startup"}),
    )
    assert SUBJECT in start.stdout
    prompt = {**event, "hook_event_name": "UserPromptSubmit", "prompt": "Why filelock for dedup?"}
    submit = run(
        ["/bin/sh", "-c", commands["UserPromptSubmit"]],
        cwd=repo,
        env=env,
        stdin=json.dumps(prompt),
    )
    assert MARKER in submit.stdout

    # The MCP server .mcp.json names, through the real MCP client.
    async def search() -> str:
        params = StdioServerParameters(
            command=resolved, args=server["args"], env=env, cwd=str(repo)
        )
        async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
            result = await client.call_tool("search_memories", {"query": "filelock dedup"})
            assert not result.is_error, result.content
            return json.dumps(result.structured_content)

    assert memory_id in anyio.run(search)


def test_installs_from_a_git_url(constraints: Path, tmp_path: Path) -> None:
    clone = tmp_path / "clone"  # a clone of the commit under test, as a user's git URL gives
    subprocess.run(["git", "clone", "-q", str(REPO_ROOT), str(clone)], check=True, timeout=300)
    tool = install_tool(f"git+{clone.as_uri()}", tmp_path, constraints)
    version = run(["local-recall", "--version"], cwd=tmp_path, env=tool.env(tmp_path / "home"))
    assert __version__ in version.stdout
    assert tool.script.is_file() and (tool.bin / "local-recall").exists()


@requires_claude
def test_the_installed_tool_works_in_claude_code(tool: Tool, tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    home = tmp_path / "home"
    env = tool.env(home)
    run(["local-recall", "init"], cwd=repo, env=env)
    memory_id = add_memory(repo, env)
    search = "mcp__local-recall__search_memories"
    with FakeAnthropic(search_then_answer(search, "filelock dedup")) as api:
        claude_env = offline_env(home, api.url, extra={"PATH": env["PATH"], **QUIET})
        done = run_claude(
            claude_or_fail(),
            ["-p", "Why do we use filelock for dedup?", "--allowedTools", "mcp__local-recall"],
            cwd=repo,
            env=claude_env,
            timeout=240,
        )
        requests = [r.body for r in api.message_requests()]
    assert done.returncode == 0, done.stderr
    assert "Found it." in done.stdout
    first, last = requests[0], requests[-1]
    assert MARKER in visible_text(first)  # the hooks (installed tool) injected the memory
    assert search in [t.get("name") for t in first.get("tools") or ()]
    (answer,) = tool_results(last)
    assert memory_id in answer and SUBJECT in answer  # the MCP server (installed tool) answered
