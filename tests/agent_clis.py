"""The real Codex, Gemini and Copilot CLIs, pinned, run offline against tests/fake_openai.py and
tests/fake_gemini.py (docs/agents.md says what each was verified to do).

    codex = agent_cli_or_fail("codex")
    with FakeOpenAI(responder) as api:
        env = codex_env(tmp_path / "home", api.url, project=repo)
        done = run_cli(codex, ["exec", "--skip-git-repo-check", "hello"], cwd=repo, env=env)

`.ci/run` installs the pinned packages into ~/.cache/local-recall-agents; where npm exists and a
binary is missing, `agent_cli_or_fail` installs it there once (so the README's test line works on
a fresh machine with npm) and fails the test if that install fails: a skip would hide a gap.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

AGENTS_INSTALL_DIR = Path.home() / ".cache" / "local-recall-agents"
# The versions docs/agents.md and tests/fixtures/{codex,gemini,copilot}/ were verified with
# (also in .ci/run).
PACKAGES = {
    "codex": "@openai/codex@0.169.0",
    "gemini": "@google/gemini-cli@0.61.0",
    "copilot": "@github/copilot@1.0.102",
}
BIN_ENV = {
    "codex": "LOCAL_RECALL_CODEX_BIN",
    "gemini": "LOCAL_RECALL_GEMINI_BIN",
    "copilot": "LOCAL_RECALL_COPILOT_BIN",
}
# The Gemini model the tests name: an explicit model skips the CLI's routing classifier request.
GEMINI_MODEL = "gemini-2.5-flash"
COPILOT_MODEL = "gpt-4.1"
CODEX_MODEL = "gpt-5-codex"
CODEX_PROVIDER = "localfake"

# Variables of the surrounding session that would point a CLI elsewhere or change its mode.
_INHERITED_PREFIXES = (
    "OPENAI_",
    "CODEX_",
    "GEMINI_",
    "GOOGLE_",
    "COPILOT_",
    "GITHUB_",
    "GH_",
    "ANTHROPIC_",
    "CLAUDE_",
    "CLAUDECODE",
    "OTEL_",
    "LOCAL_RECALL_",
)


def find_agent_cli(agent: str) -> str | None:
    """$LOCAL_RECALL_<AGENT>_BIN, else the pinned install, else PATH."""
    configured = os.environ.get(BIN_ENV[agent])
    if configured:
        return configured if Path(configured).is_file() else None
    local = AGENTS_INSTALL_DIR / "node_modules" / ".bin" / agent
    if local.exists():
        return str(local)
    return shutil.which(agent)


def node_available() -> bool:
    return shutil.which("npm") is not None or shutil.which("node") is not None


requires_node = pytest.mark.skipif(
    not node_available(), reason="the agents' CLIs cannot run here: node/npm is not installed"
)


def agent_cli_or_fail(agent: str) -> str:
    found = find_agent_cli(agent)
    if found is None and shutil.which("npm") and not os.environ.get(BIN_ENV[agent]):
        _install(agent)
        found = find_agent_cli(agent)
    if found is None:
        hint = f"npm install --prefix {AGENTS_INSTALL_DIR} {PACKAGES[agent]}"
        pytest.fail(f"{agent} CLI not found; install it: {hint} (or set {BIN_ENV[agent]})")
    return found


def _install(agent: str) -> None:
    from filelock import FileLock

    AGENTS_INSTALL_DIR.mkdir(parents=True, exist_ok=True)
    with FileLock(str(AGENTS_INSTALL_DIR / ".install.lock"), timeout=900):
        if (AGENTS_INSTALL_DIR / "node_modules" / ".bin" / agent).exists():
            return
        subprocess.run(
            [
                "npm",
                "install",
                "--prefix",
                str(AGENTS_INSTALL_DIR),
                "--no-audit",
                "--no-fund",
                PACKAGES[agent],
            ],
            check=False,
            capture_output=True,
            timeout=900,
        )


def _base_env(home: Path, extra: Mapping[str, str] | None) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(_INHERITED_PREFIXES)}
    env.update({"HOME": str(home), "GIT_TERMINAL_PROMPT": "0", "NO_COLOR": "1"})
    # our hooks, run by the agent, must not leave a daemon behind a test
    env["LOCAL_RECALL_HOOKS_START_DAEMON"] = "false"
    env.update(extra or {})
    return env


def codex_env(
    home: Path, base_url: str, *, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """A Codex home whose config.toml routes every model call to ``base_url`` (a FakeOpenAI):
    a custom provider speaking the Responses API (the only wire API Codex 0.169 accepts)."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    config = (
        f'model = "{CODEX_MODEL}"\n'
        f'model_provider = "{CODEX_PROVIDER}"\n'
        "check_for_update_on_startup = false\n\n"
        f"[model_providers.{CODEX_PROVIDER}]\n"
        'name = "local fake"\n'
        f'base_url = "{base_url}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "LOCAL_FAKE_OPENAI_KEY"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
    )
    (codex_home / "config.toml").write_text(config, encoding="utf-8")
    return _base_env(
        home, {"CODEX_HOME": str(codex_home), "LOCAL_FAKE_OPENAI_KEY": "sk-test", **(extra or {})}
    )


def trust_codex_project(home: Path, project: Path) -> None:
    """What `codex exec --trust` (or the TUI's trust prompt) records: project `.codex/` config
    and MCP servers load only in a trusted project."""
    config = home / ".codex" / "config.toml"
    with config.open("a", encoding="utf-8") as out:
        out.write(f'\n[projects."{project}"]\ntrust_level = "trusted"\n')


def gemini_env(
    home: Path, base_url: str, *, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """A Gemini home whose settings pick API-key auth (the base URL alone selects a "gateway"
    auth that 0.61 refuses in non-interactive mode) and switch off telemetry and update checks;
    GOOGLE_GEMINI_BASE_URL sends the model calls to ``base_url`` (a FakeGemini)."""
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    return _base_env(
        home,
        {
            "GEMINI_API_KEY": "test-key",
            "GOOGLE_GEMINI_BASE_URL": base_url,
            # the workspace trust prompt, answered yes (project hooks and MCP need a trusted
            # folder; without it `gemini -p` refuses to run)
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            **(extra or {}),
        },
    )


def copilot_env(
    home: Path, base_url: str, *, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Copilot CLI in offline BYOK mode: COPILOT_OFFLINE skips GitHub auth, telemetry and
    updates; the model is served by ``base_url`` (a FakeOpenAI) over Chat Completions."""
    return _base_env(
        home,
        {
            "COPILOT_OFFLINE": "true",
            "COPILOT_PROVIDER_BASE_URL": f"{base_url}/v1",
            "COPILOT_PROVIDER_API_KEY": "sk-test",
            "COPILOT_MODEL": COPILOT_MODEL,
            **(extra or {}),
        },
    )


def trust_copilot_folder(home: Path, project: Path) -> None:
    """What answering Copilot's folder-trust prompt records (~/.copilot/config.json
    `trustedFolders`): repo hooks and workspace MCP load in `-p` only in a trusted folder."""
    config = home / ".copilot" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    data = {"trustedFolders": [str(project)]}
    config.write_text(json.dumps(data, indent=2), encoding="utf-8")


def run_cli(
    binary: str,
    args: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float = 180.0,
) -> subprocess.CompletedProcess[str]:
    """Run a CLI to completion (no shell, stdin closed). Past `timeout` its whole process group
    is killed (the CLIs start helpers of their own) and TimeoutExpired is raised."""
    proc = subprocess.Popen(
        [binary, *args],
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
