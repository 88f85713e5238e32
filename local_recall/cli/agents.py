"""`init --agent`, `uninstall --agent` and `doctor` for the agents other than Claude Code: which
agents, their plans (codex/, gemini/, copilot/ install_plan.py) carried out by agents/files.py,
and what `doctor` reports of each one's wiring. docs/agents.md."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from local_recall.agents.files import FileChange, apply_plan, check_text, read_texts
from local_recall.agents.plan import agent_of_command, installed_agent_hooks, section_of
from local_recall.codex import install_plan as codex_plan
from local_recall.copilot import install_plan as copilot_plan
from local_recall.doctor import FAIL, OK, WARN, Check
from local_recall.errors import InvalidInput
from local_recall.gemini import install_plan as gemini_plan

AGENTS = ("claude", "codex", "gemini", "copilot")
# The executable that says an agent is installed (for `--agent all`).
BINARIES = {"claude": "claude", "codex": "codex", "gemini": "gemini", "copilot": "copilot"}
PlanOf = Callable[[Mapping[str, str | None], Sequence[str] | None], dict[str, str | None]]
PLANS: dict[str, tuple[list[str], PlanOf]] = {
    "codex": (codex_plan.FILES, codex_plan.plan),
    "gemini": (gemini_plan.FILES, gemini_plan.plan),
    "copilot": ([*copilot_plan.FILES, copilot_plan.CLAUDE_SETTINGS], copilot_plan.plan),
}


def resolve_agents(chosen: Sequence[str], which: Callable[[str], str | None]) -> list[str]:
    """The agents named (each once, in AGENTS order); `all`: every agent whose CLI is on PATH
    (Claude Code when none is); none named: Claude Code."""
    wanted = set(chosen) or {"claude"}
    unknown = wanted - set(AGENTS) - {"all"}
    if unknown:
        raise InvalidInput(f"unknown agent {sorted(unknown)[0]!r}: use {', '.join(AGENTS)} or all")
    if "all" in wanted:
        found = {agent for agent in AGENTS if which(BINARIES[agent])}
        wanted = (wanted - {"all"}) | (found or {"claude"})
    return [agent for agent in AGENTS if agent in wanted]


def _run(agent: str, root: Path, launcher: Sequence[str] | None) -> list[FileChange]:
    names, plan_of = PLANS[agent]

    def plan(texts: Mapping[str, str | None]) -> dict[str, str | None]:
        return plan_of(texts, launcher)

    return apply_plan(agent, root, names, plan)


def check_agent_files(agents: Sequence[str], root: Path) -> None:
    """InvalidInput when a file one of `agents` would change does not parse: every agent's files
    are checked before any agent's are written (`.codex/` was once written, then a JSONC
    `.gemini/settings.json` stopped init halfway)."""
    for agent in agents:
        names, _ = PLANS.get(agent, ([], None))
        for name, text in read_texts(root, names).items():
            if text is not None:
                check_text(name, text)


def install_agent(agent: str, root: Path, launcher: Sequence[str]) -> list[FileChange]:
    return _run(agent, root, launcher)


def uninstall_agent(agent: str, root: Path) -> list[FileChange]:
    return _run(agent, root, None)


# --- doctor -------------------------------------------------------------------------------------


def _json(text: str | None) -> dict[str, object]:
    try:
        data = json.loads(text) if text and text.strip() else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _command_ok(command: str, which: Callable[[str], str | None]) -> bool:
    try:
        program = shlex.split(command)[0]
    except (ValueError, IndexError):
        return False
    return Path(program).is_file() if "/" in program else which(program) is not None


def repository_program(command: str, root: Path, own: Sequence[str]) -> str | None:
    """The program a hook command runs when it is a file of the repository — a relative path,
    or an absolute one under `root` other than this install's own launcher `own` (a venv in
    the checkout) — rather than an installed local-recall: a committed `./tools/local-recall`
    only has our name. None for a program found on PATH or installed elsewhere."""
    try:
        program = shlex.split(command)[0]
    except (ValueError, IndexError):
        return None
    if "/" not in program or (own and program == own[0]):
        return None
    path = Path(program)
    return program if not path.is_absolute() or root in path.parents else None


def agent_checks(root: Path, which: Callable[[str], str | None]) -> list[Check]:
    """One line per agent whose files hold our wiring (or whose CLI is on PATH): hooks, MCP and
    what the user still has to do (trust) — never trust for hooks that run a repository file."""
    from local_recall.claude_code.install.apply import find_launcher

    own = find_launcher().argv
    checks: list[Check] = []
    for agent in ("codex", "gemini", "copilot"):
        names, _ = PLANS[agent]
        try:
            texts = read_texts(root, names)
        except InvalidInput as exc:
            checks.append(Check(agent, FAIL, str(exc)))
            continue
        hooks, mcp, extra = _wiring(agent, texts)
        cli = which(BINARIES[agent])
        # Copilot shares .mcp.json with Claude Code: only its hooks file says it was wired
        wired = bool(hooks) or (mcp and agent != "copilot")
        if not wired:
            if cli:
                checks.append(
                    Check(
                        f"{agent}", OK, f"CLI found; not wired (local-recall init --agent {agent})"
                    )
                )
            continue
        ran = _commands(agent, texts)
        commands = [c for c in ran if not _command_ok(c, which)]
        foreign = [p for c in ran if (p := repository_program(c, root, own)) is not None]
        # Codex's note (trust) is advice, not a fault; a Copilot without its instructions is
        status = FAIL if commands or foreign else (WARN if extra and agent == "copilot" else OK)
        detail = f"hooks: {', '.join(hooks) or 'none'}; MCP: {'yes' if mcp else 'no'}"
        if commands:
            detail += f"; command not found: {commands[0]}"
        if foreign:  # never tell the user to trust them
            extra = (
                f"the hooks run {foreign[0]}, a file of this repository, not an installed "
                "local-recall: do not trust them; `local-recall init --agent "
                f"{agent}` writes ours"
            )
        if extra:
            detail += f"; {extra}"
        checks.append(Check(agent, status, detail))
    return checks


def _wiring(agent: str, texts: Mapping[str, str | None]) -> tuple[list[str], bool, str]:
    if agent == "codex":
        hooks = installed_agent_hooks(_json(texts.get(codex_plan.HOOKS_FILE)), agent)
        mcp = codex_plan.our_mcp_table(texts.get(codex_plan.CONFIG_FILE) or "") is not None
        note = "trust the hooks once in Codex (/hooks) and the project (codex exec --trust)"
        return hooks, mcp, note if hooks else ""
    if agent == "gemini":
        settings = _json(texts.get(gemini_plan.SETTINGS_FILE))
        servers = settings.get("mcpServers")
        mcp = isinstance(servers, dict) and gemini_plan.SERVER in servers
        return installed_agent_hooks(settings, agent), mcp, ""
    hooks_doc = _json(texts.get(copilot_plan.HOOKS_FILE))
    found = []
    events = hooks_doc.get("hooks")
    for event, entries in events.items() if isinstance(events, dict) else ():
        for entry in entries if isinstance(entries, list) else ():
            mine = agent_of_command(entry.get("bash")) if isinstance(entry, dict) else None
            if mine is not None and mine[0] == agent:
                found.append(f"{event}: {mine[1]}")
    servers = _json(texts.get(copilot_plan.MCP_FILE)).get("mcpServers")
    mcp = isinstance(servers, dict) and copilot_plan.SERVER in servers
    note = (
        "" if section_of(texts.get(copilot_plan.INSTRUCTIONS_FILE)) else "no instructions section"
    )
    return found, mcp, note


def _commands(agent: str, texts: Mapping[str, str | None]) -> list[str]:
    """Every hook command of ours the agent would run (in its JSON files), to check it exists."""
    found: list[str] = []
    stack: list[object] = [_json(text) for name, text in texts.items() if name.endswith(".json")]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                mine = agent_of_command(value) if key in ("command", "bash") else None
                if mine is not None and mine[0] == agent:
                    found.append(str(value))
                stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return found
