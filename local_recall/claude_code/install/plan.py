"""What installing into Claude Code means, as pure functions over JSON documents: our hook and MCP
entries, recognising them (by what they run), merging them into or out of a settings file or
.mcp.json, and checking a document the way Claude Code would before anything is written.
Tested with literals; apply.py carries the plans out on the files."""

from __future__ import annotations

import copy
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from local_recall.claude_code.hooks.gate import gated, ungated
from local_recall.claude_code.hooks.guard import guarded, unguarded
from local_recall.errors import InvalidInput

SCOPES = ("project", "local", "user")
MCP_SERVER_NAME = "local-recall"
# How Claude Code names the plugin's server (hooks/.mcp.json) for an `mcp_tool` hook.
PLUGIN_MCP_SERVER = f"plugin:local-recall:{MCP_SERVER_NAME}"
SCRIPT_NAMES = ("local-recall", "local-recall.exe")
# The MCP server's hidden tool answering UserPromptSubmit (claude_code/hooks/mcp_tool.py), and
# the fields of Claude Code's hook input it is given.
PROMPT_HOOK_TOOL = "user_prompt_submit"
PROMPT_HOOK_INPUT = {
    "prompt": "${prompt}",
    "prompt_id": "${prompt_id}",
    "session_id": "${session_id}",
}

JSONObject = dict[str, Any]


@dataclass(frozen=True, slots=True)
class HookSpec:
    event: str  # Claude Code hook event
    subcommand: str  # `local-recall hook <subcommand>`
    timeout: int  # seconds Claude Code waits before cancelling the hook
    matcher: str | None = None
    # Also answered by this hidden tool of our MCP server once it is connected; the command
    # then stands behind the shell guard (hooks/guard.py, docs/hooks.md).
    mcp_tool: str | None = None


HOOKS = (
    HookSpec("SessionStart", "session-start", 15, "startup|resume|clear|compact"),
    HookSpec("UserPromptSubmit", "user-prompt-submit", 10, mcp_tool=PROMPT_HOOK_TOOL),
    HookSpec("SessionEnd", "session-end", 5),
    # asks for the session's summary before compaction; returns at once (hooks/events.py)
    HookSpec("PreCompact", "pre-compact", 5),
)


@dataclass(frozen=True, slots=True)
class Launcher:
    """How to run local-recall from any directory: absolute argv, no reliance on PATH."""

    argv: tuple[str, ...]

    def shell_command(self, *args: str) -> str:
        return shlex.join((*self.argv, *args))


def settings_path(scope: str, root: Path, claude_config_dir: Path) -> Path:
    if scope == "project":
        return root / ".claude" / "settings.json"
    if scope == "local":
        return root / ".claude" / "settings.local.json"
    if scope == "user":
        return claude_config_dir / "settings.json"
    raise InvalidInput(f"unknown scope {scope!r}: use {', '.join(SCOPES)}")


def mcp_config_path(root: Path) -> Path:
    return root / ".mcp.json"


# --- recognising our entries (pure) --------------------------------------------------------------


def is_local_recall_argv(argv: Sequence[str]) -> bool:
    """`/x/local-recall`, `local-recall` or `/x/python -m local_recall`."""
    if len(argv) == 1:
        return Path(argv[0]).name in SCRIPT_NAMES
    return len(argv) == 3 and argv[1] == "-m" and argv[2] == "local_recall"


def hook_subcommand(command: str) -> str | None:
    """`session-start` etc. when `command` runs `<local-recall> hook <subcommand>` (behind
    the guard or not), else None."""
    try:
        words = shlex.split(_bare(command))
    except ValueError:
        return None
    if len(words) < 3 or words[-2] != "hook" or not is_local_recall_argv(words[:-2]):
        return None
    return words[-1]


def hook_program(command: str) -> str | None:
    """The program a hook command of ours starts (the launcher's first word), else None."""
    if hook_subcommand(command) is None:
        return None
    return shlex.split(_bare(command))[0]


def _bare(command: str) -> str:
    """The command behind the user scope's gate and the prompt hook's guard."""
    return unguarded(ungated(command))


def is_gated(command: str) -> bool:
    return ungated(command) != command


def _is_our_hook(entry: object) -> bool:
    if not isinstance(entry, dict):
        return False
    if entry.get("type") == "mcp_tool":
        return _is_our_mcp_tool(entry)
    return (
        entry.get("type") == "command"
        and isinstance(entry.get("command"), str)
        and hook_subcommand(entry["command"]) is not None
    )


def _is_our_mcp_tool(entry: Mapping[str, Any]) -> bool:
    """An `mcp_tool` handler calling our hidden tool on our server (init's or the plugin's)."""
    tools = {spec.mcp_tool for spec in HOOKS if spec.mcp_tool}
    return entry.get("server") in (MCP_SERVER_NAME, PLUGIN_MCP_SERVER) and entry.get("tool") in (
        tools
    )


def is_our_mcp_entry(entry: object) -> bool:
    if not isinstance(entry, dict):
        return False
    command, args = entry.get("command"), entry.get("args") or []
    if not isinstance(command, str) or not isinstance(args, list) or not args:
        return False
    argv = [command, *map(str, args)]
    return argv[-1] == "mcp" and is_local_recall_argv(argv[:-1])


# --- building and merging documents (pure) -------------------------------------------------------


def hook_group(
    spec: HookSpec,
    launcher: Launcher,
    server: str = MCP_SERVER_NAME,
    *,
    gate: bool = False,
    server_everywhere: bool = False,
) -> JSONObject:
    """One matcher group, in the settings schema documented by Claude Code. With an MCP tool:
    the guarded command and the `mcp_tool` handler side by side (handoff.py).

    `gate` (user scope): the command behind the gate (hooks/gate.py) and no `mcp_tool`
    handler. User hooks run in every repository, and Claude Code reports an `mcp_tool` handler
    whose server is not there as a hook error on every prompt ("MCP server 'local-recall' not
    connected", 2.1.197); where the gate lets the command through, it answers every prompt.
    With `server_everywhere` too (the plugin, whose MCP server starts in every session): the
    gate, then the guard, in front of the command, and the `mcp_tool` handler beside it."""
    command = launcher.shell_command("hook", spec.subcommand)
    hooks: list[JSONObject] = []
    if gate and (spec.mcp_tool is None or not server_everywhere):
        hooks.append({"type": "command", "command": gated(command), "timeout": spec.timeout})
    elif spec.mcp_tool is None:
        hooks.append({"type": "command", "command": command, "timeout": spec.timeout})
    else:
        guarded_command = guarded(command)
        if gate:
            guarded_command = gated(guarded_command)
        hooks.append({"type": "command", "command": guarded_command, "timeout": spec.timeout})
        hooks.append(
            {
                "type": "mcp_tool",
                "server": server,
                "tool": spec.mcp_tool,
                "input": dict(PROMPT_HOOK_INPUT),
                "timeout": spec.timeout,
            }
        )
    group: JSONObject = {"matcher": spec.matcher} if spec.matcher is not None else {}
    group["hooks"] = hooks
    return group


def mcp_entry(launcher: Launcher) -> JSONObject:
    # No LOCAL_RECALL_ROOT: the file is committed, and the server finds the repository from the
    # directory Claude Code starts it in (the session's), like the hooks and the plugin do.
    return {"type": "stdio", "command": launcher.argv[0], "args": [*launcher.argv[1:], "mcp"]}


def _group_without_ours(group: Any) -> Any | None:
    """The group minus our hook entries; None when nothing of it is left."""
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return group
    kept = [h for h in group["hooks"] if not _is_our_hook(h)]
    if len(kept) == len(group["hooks"]):
        return group
    if not kept:
        return None
    return {**group, "hooks": kept}


def _has_ours(group: Any) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(_is_our_hook(h) for h in hooks)


def plan_settings_install(
    document: Mapping[str, Any],
    launcher: Launcher,
    *,
    server: str = MCP_SERVER_NAME,
    gate: bool = False,
    server_everywhere: bool = False,
    prompt_tool: bool = True,
) -> JSONObject:
    """`document` with our hook groups: left as they are when already exactly right, else our
    old entries are taken out (wherever they were) and the right groups appended per event.
    Everything else is kept in place. `server`: our MCP server's name for `mcp_tool` handlers
    (the plugin's is PLUGIN_MCP_SERVER); `gate`, `server_everywhere`: as `hook_group`'s.
    `prompt_tool=False` (a repository wired for Copilot CLI too): no `mcp_tool` handler, the
    plain command answers every prompt. Copilot CLI loads .claude/settings.json and
    settings.local.json too, knows only command, http and prompt handlers, and drops the whole
    file over an `mcp_tool` one ("Invalid hook type", 1.0.102), the team's other hooks with it."""
    new = copy.deepcopy(dict(document))
    hooks = dict(new.get("hooks") or {})
    for spec in HOOKS if prompt_tool else [replace(s, mcp_tool=None) for s in HOOKS]:
        groups = list(hooks.get(spec.event) or [])
        wanted = hook_group(spec, launcher, server, gate=gate, server_everywhere=server_everywhere)
        if [g for g in groups if _has_ours(g)] == [wanted]:
            continue
        kept = [g for g in map(_group_without_ours, groups) if g is not None]
        hooks[spec.event] = [*kept, wanted]
    new["hooks"] = hooks
    return new


def plan_settings_uninstall(document: Mapping[str, Any]) -> JSONObject:
    """`document` without any hook entry that runs `local-recall hook ...`; an event (and the
    `hooks` key) left empty by that is removed too."""
    new = copy.deepcopy(dict(document))
    hooks = new.get("hooks")
    if not isinstance(hooks, dict):
        return new
    for event, groups in list(hooks.items()):
        if not isinstance(groups, list) or not any(_has_ours(g) for g in groups):
            continue
        kept = [g for g in map(_group_without_ours, groups) if g is not None]
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
        del new["hooks"]
    return new


def plan_mcp_install(document: Mapping[str, Any], launcher: Launcher) -> JSONObject:
    new = copy.deepcopy(dict(document))
    servers = dict(new.get("mcpServers") or {})
    servers[MCP_SERVER_NAME] = mcp_entry(launcher)
    new["mcpServers"] = servers
    return new


def plan_mcp_uninstall(document: Mapping[str, Any]) -> JSONObject:
    """Without our server entry. An entry named local-recall that runs something else is kept."""
    new = copy.deepcopy(dict(document))
    servers = new.get("mcpServers")
    if isinstance(servers, dict) and is_our_mcp_entry(servers.get(MCP_SERVER_NAME)):
        del servers[MCP_SERVER_NAME]
    return new


def plan_approve_mcp(document: Mapping[str, Any]) -> JSONObject:
    """Approve our project server the way Claude Code's prompt does (`enabledMcpjsonServers`),
    unless all project servers are already allowed or the user disabled ours."""
    new = copy.deepcopy(dict(document))
    approved = new.get("enabledMcpjsonServers", [])
    disabled = new.get("disabledMcpjsonServers", [])
    if (
        new.get("enableAllProjectMcpServers") is True
        or not isinstance(approved, list)
        or (isinstance(disabled, list) and MCP_SERVER_NAME in disabled)
        or MCP_SERVER_NAME in approved
    ):
        return new
    new["enabledMcpjsonServers"] = [*approved, MCP_SERVER_NAME]
    return new


def plan_unapprove_mcp(document: Mapping[str, Any]) -> JSONObject:
    new = copy.deepcopy(dict(document))
    approved = new.get("enabledMcpjsonServers")
    if isinstance(approved, list) and MCP_SERVER_NAME in approved:
        kept = [name for name in approved if name != MCP_SERVER_NAME]
        if kept:
            new["enabledMcpjsonServers"] = kept
        else:
            del new["enabledMcpjsonServers"]
    return new


def installed_hooks(document: Mapping[str, Any]) -> dict[str, list[str]]:
    """Our hook commands per event, as found in a settings document (an `mcp_tool` handler as
    `mcp_tool <server>/<tool>`)."""
    found: dict[str, list[str]] = {}
    hooks = document.get("hooks")
    if not isinstance(hooks, dict):
        return found
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else ():
            entries = group.get("hooks") if isinstance(group, dict) else None
            for entry in entries if isinstance(entries, list) else ():
                if not _is_our_hook(entry):
                    continue
                if entry.get("type") == "mcp_tool":
                    shown = f"mcp_tool {entry['server']}/{entry['tool']}"
                else:
                    shown = entry["command"]
                found.setdefault(str(event), []).append(shown)
    return found


# --- validation (pure) ---------------------------------------------------------------------------


def settings_problems(document: object) -> list[str]:
    """What would make Claude Code reject the file's hooks. Only the shape Claude Code documents
    is checked, so entries of kinds this version does not know are not flagged."""
    if not isinstance(document, dict):
        return ["the file must hold a JSON object"]
    hooks = document.get("hooks")
    if hooks is None:
        return []
    if not isinstance(hooks, dict):
        return ['"hooks" must be an object of event names to lists']
    problems: list[str] = []
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            problems.append(f"hooks.{event} must be a list of matcher groups")
            continue
        for i, group in enumerate(groups):
            problems.extend(_group_problems(f"hooks.{event}[{i}]", group))
    return problems


def _group_problems(where: str, group: object) -> list[str]:
    if not isinstance(group, dict):
        return [f"{where} must be an object"]
    problems = []
    if "matcher" in group and not isinstance(group["matcher"], str):
        problems.append(f"{where}.matcher must be a string")
    entries = group.get("hooks")
    if not isinstance(entries, list):
        return [*problems, f"{where}.hooks must be a list"]
    for j, entry in enumerate(entries):
        at = f"{where}.hooks[{j}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            problems.append(f"{at} must be an object with a string 'type'")
            continue
        if entry["type"] == "command":
            command = entry.get("command")
            if not isinstance(command, str) or not command.strip():
                problems.append(f"{at}.command must be a non-empty string")
        if entry["type"] == "mcp_tool":
            for key in ("server", "tool"):
                value = entry.get(key)
                if not isinstance(value, str) or not value.strip():
                    problems.append(f"{at}.{key} must be a non-empty string")
            if "input" in entry and not isinstance(entry["input"], dict):
                problems.append(f"{at}.input must be an object")
        timeout = entry.get("timeout")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
        ):
            problems.append(f"{at}.timeout must be a positive number")
    return problems


def mcp_problems(document: object) -> list[str]:
    if not isinstance(document, dict):
        return ["the file must hold a JSON object"]
    servers = document.get("mcpServers")
    if servers is None:
        return []
    if not isinstance(servers, dict):
        return ['"mcpServers" must be an object of server names to definitions']
    problems = []
    for name, server in servers.items():
        if not isinstance(server, dict):
            problems.append(f"mcpServers.{name} must be an object")
            continue
        if "command" in server and not isinstance(server["command"], str):
            problems.append(f"mcpServers.{name}.command must be a string")
        args = server.get("args")
        if args is not None and not (
            isinstance(args, list) and all(isinstance(a, str) for a in args)
        ):
            problems.append(f"mcpServers.{name}.args must be a list of strings")
        env = server.get("env")
        if env is not None and not (
            isinstance(env, dict) and all(isinstance(v, str) for v in env.values())
        ):
            problems.append(f"mcpServers.{name}.env must map names to strings")
    return problems
