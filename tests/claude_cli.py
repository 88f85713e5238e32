"""Running the real Claude Code CLI offline in end-to-end tests (see docs in NOTES.md).

    @pytest.mark.slow
    @requires_claude
    def test_something(tmp_path: Path) -> None:
        claude = claude_or_fail()
        with FakeAnthropic(default_responder()) as api:
            done = run_claude(claude, ["-p", "hello"], cwd=tmp_path,
                              env=offline_env(tmp_path / "home", api.url))

`requires_claude` skips only where Node/npm is absent (Claude Code cannot be installed there).
Where npm exists and the binary is missing, `claude_or_fail` installs the pinned version into
~/.cache/local-recall-e2e once (so the README's test line works on a fresh machine with npm),
and fails the test if that install fails: a skip would hide a gap.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

CLAUDE_BIN_ENV = "LOCAL_RECALL_CLAUDE_BIN"
E2E_INSTALL_DIR = Path.home() / ".cache" / "local-recall-e2e"
# The version docs/ were verified with and tests/fixtures/claude-code/ recorded with (also in
# .ci/run).
CLAUDE_CODE_PACKAGE = "@anthropic-ai/claude-code@2.1.197"
INSTALL_HINT = (
    f"npm install --prefix {E2E_INSTALL_DIR} --no-audit --no-fund {CLAUDE_CODE_PACKAGE} "
    f"(or set {CLAUDE_BIN_ENV})"
)

# Variables of the surrounding session that would point the CLI elsewhere or change its mode
# (CLAUDECODE is set when the tests themselves run inside Claude Code).
_INHERITED_PREFIXES = ("ANTHROPIC_", "CLAUDE_", "CLAUDECODE", "MCP_", "OTEL_")


def find_claude() -> str | None:
    """The CLI to test with: $LOCAL_RECALL_CLAUDE_BIN, else the e2e install, else PATH."""
    configured = os.environ.get(CLAUDE_BIN_ENV)
    if configured:
        return configured if Path(configured).is_file() else None
    local = E2E_INSTALL_DIR / "node_modules" / ".bin" / "claude"
    if local.exists():
        return str(local)
    return shutil.which("claude")


def node_available() -> bool:
    return shutil.which("npm") is not None or shutil.which("node") is not None


requires_claude = pytest.mark.skipif(
    not node_available(),
    reason="Claude Code CLI cannot run here: neither node nor npm is installed",
)


def claude_or_fail() -> str:
    """The CLI path, installed on first use where npm exists; fails the test (never skips)
    when it cannot be had on a machine with npm."""
    found = find_claude()
    if found is None and shutil.which("npm") and not os.environ.get(CLAUDE_BIN_ENV):
        _install_claude()
        found = find_claude()
    if found is None:
        pytest.fail(f"Claude Code CLI not found; install it: {INSTALL_HINT}")
    return found


def _install_claude() -> None:
    from filelock import FileLock  # several xdist workers / test modules may ask at once

    E2E_INSTALL_DIR.mkdir(parents=True, exist_ok=True)
    with FileLock(str(E2E_INSTALL_DIR / ".install.lock"), timeout=900):
        if (E2E_INSTALL_DIR / "node_modules" / ".bin" / "claude").exists():
            return
        subprocess.run(
            [
                "npm",
                "install",
                "--prefix",
                str(E2E_INSTALL_DIR),
                "--no-audit",
                "--no-fund",
                CLAUDE_CODE_PACKAGE,
            ],
            check=False,
            capture_output=True,
            timeout=900,
        )


def offline_env(
    home: Path,
    base_url: str,
    *,
    extra: Mapping[str, str] | None = None,
    mcp_connect_timeout_ms: int = 120_000,  # a hang guard: a loaded machine passed 20 s
) -> dict[str, str]:
    """Environment for a `claude` process that talks only to ``base_url`` (a FakeAnthropic)
    and keeps all its state under ``home`` (created if needed)."""
    config_dir = home / ".claude"
    config_dir.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(_INHERITED_PREFIXES)}
    env.update(
        {
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(config_dir),
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": "sk-test",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            # wait for MCP servers before the first request (see NOTES.md, MCP)
            "MCP_CONNECTION_NONBLOCKING": "false",
            "MCP_CONNECT_TIMEOUT_MS": str(mcp_connect_timeout_ms),
            # `claude mcp list`'s health check (and each MCP request) gives up after MCP_TIMEOUT,
            # 30 s by default, whatever MCP_CONNECT_TIMEOUT_MS says: a loaded machine's server
            # start took longer ("Failed to connect")
            "MCP_TIMEOUT": str(max(mcp_connect_timeout_ms, 120_000)),
            # git/ssh must never prompt inside a test
            "GIT_TERMINAL_PROMPT": "0",
        }
    )
    env.update(extra or {})
    return env


def run_claude(
    claude: str,
    args: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin: str | None = None,
    timeout: float = 600.0,
) -> subprocess.CompletedProcess[str]:
    """Run the CLI to completion (no shell); stdin is closed when not given. `timeout` is a
    hang guard: under six CPU hogs a `claude -p` that starts an MCP server passed 120 s."""
    return subprocess.run(
        [claude, *args],
        cwd=cwd,
        env=dict(env),
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def lr(repo: Path, env: dict[str, str], *args: str) -> str:
    """`local-recall ARGS` in `repo` (a real subprocess); its stdout, asserting it succeeded."""
    done = subprocess.run(
        [sys.executable, "-m", "local_recall", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout
