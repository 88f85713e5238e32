"""What `init --agent` writes, as pure functions over documents (tested with literals); the agents'
install_plan.py modules describe their files with these, files.py carries the plans out.

* Hook groups in Claude Code's nested shape (`{event: [{matcher?, hooks: [{type, command, …}]}]}`),
  which Codex's hooks.json and Gemini's settings.json share: ours are recognised by what they
  run (`<local-recall> hook --agent <agent> <event>`), never by a marker key (Codex refuses
  keys it does not know); merging keeps every other group, hook and key where it was.
* A section of a markdown instructions file between two HTML comments, written and removed
  whole; the rest of the file is never touched.
"""

from __future__ import annotations

import copy
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

JSONObject = dict[str, Any]
SCRIPT_NAMES = ("local-recall", "local-recall.exe")
SECTION_BEGIN = "<!-- local-recall: begin (written by `local-recall init --agent`) -->"
SECTION_END = "<!-- local-recall: end -->"


@dataclass(frozen=True, slots=True)
class AgentHookSpec:
    event: str  # the agent's event name
    subcommand: str  # `local-recall hook --agent <agent> <subcommand>`
    entry: Mapping[str, Any]  # the handler's other keys (timeout, name, …), in the agent's units
    matcher: str | None = None


def is_local_recall_argv(argv: Sequence[str]) -> bool:
    """`/x/local-recall`, `local-recall` or `/x/python -m local_recall`."""
    if len(argv) == 1:
        return Path(argv[0]).name in SCRIPT_NAMES
    return len(argv) == 3 and argv[1] == "-m" and argv[2] == "local_recall"


def agent_hook_command(launcher: Sequence[str], agent: str, subcommand: str) -> str:
    return shlex.join((*launcher, "hook", "--agent", agent, subcommand))


def agent_of_command(command: object) -> tuple[str, str] | None:
    """(agent, subcommand) when `command` runs `<local-recall> hook --agent <agent> <sub>`."""
    if not isinstance(command, str):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) < 5 or words[-4:-2] != ["hook", "--agent"]:
        return None
    if not is_local_recall_argv(words[:-4]):
        return None
    return words[-2], words[-1]


def _is_ours(hook: object, agent: str, key: str) -> bool:
    found = agent_of_command(hook.get(key)) if isinstance(hook, dict) else None
    return found is not None and found[0] == agent


def hook_group(spec: AgentHookSpec, command: str, key: str = "command") -> JSONObject:
    hook: JSONObject = {"type": "command", key: command, **spec.entry}
    group: JSONObject = {"matcher": spec.matcher} if spec.matcher is not None else {}
    group["hooks"] = [hook]
    return group


def _without_ours(groups: list[Any], agent: str, key: str) -> list[Any]:
    kept = []
    for group in groups:
        hooks = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(hooks, list):
            kept.append(group)
            continue
        mine = [h for h in hooks if not _is_ours(h, agent, key)]
        if len(mine) == len(hooks):
            kept.append(group)
        elif mine:
            kept.append({**group, "hooks": mine})
    return kept


def plan_hooks_install(
    document: Mapping[str, Any],
    specs: Sequence[AgentHookSpec],
    launcher: Sequence[str],
    agent: str,
    *,
    key: str = "command",
) -> JSONObject:
    """`document` with exactly our groups under `hooks`: left alone when already right, else our
    old hooks taken out (wherever they were) and the right groups appended per event."""
    new = copy.deepcopy(dict(document))
    hooks = dict(new.get("hooks") or {})
    for spec in specs:
        groups = list(hooks.get(spec.event) or [])
        wanted = hook_group(spec, agent_hook_command(launcher, agent, spec.subcommand), key)
        if wanted in groups and sum(_has_ours(g, agent, key) for g in groups) == 1:
            continue
        hooks[spec.event] = [*_without_ours(groups, agent, key), wanted]
    new["hooks"] = hooks
    return new


def _has_ours(group: Any, agent: str, key: str) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(_is_ours(h, agent, key) for h in hooks)


def plan_hooks_uninstall(
    document: Mapping[str, Any], agent: str, *, key: str = "command"
) -> JSONObject:
    """`document` without our hooks; an event left with no group, and `hooks` left empty, go."""
    new = copy.deepcopy(dict(document))
    hooks = new.get("hooks")
    if not isinstance(hooks, dict):
        return new
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = _without_ours(groups, agent, key)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
        del new["hooks"]
    return new


def installed_agent_hooks(
    document: Mapping[str, Any], agent: str, *, key: str = "command"
) -> list[str]:
    """The subcommands of our hooks in `document`, per event: ["SessionStart: session-start"]."""
    found = []
    hooks = document.get("hooks")
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            for hook in group.get("hooks") or () if isinstance(group, dict) else ():
                mine = agent_of_command(hook.get(key)) if isinstance(hook, dict) else None
                if mine is not None and mine[0] == agent:
                    found.append(f"{event}: {mine[1]}")
    return found


# --- MCP entries keyed by name (Gemini's and Copilot's .mcp.json `mcpServers`) ------------------


def is_our_mcp_server(entry: object) -> bool:
    if not isinstance(entry, dict):
        return False
    command, args = entry.get("command"), entry.get("args") or []
    if not isinstance(command, str) or not isinstance(args, list) or not args:
        return False
    argv = [command, *map(str, args)]
    return argv[-1] == "mcp" and is_local_recall_argv(argv[:-1])


def plan_mcp_server_install(
    document: Mapping[str, Any], name: str, entry: Mapping[str, Any]
) -> JSONObject:
    """`mcpServers[name] = entry` unless a server of that name is someone else's (then left)."""
    new = copy.deepcopy(dict(document))
    servers = dict(new.get("mcpServers") or {})
    current = servers.get(name)
    if current is not None and not is_our_mcp_server(current):
        return new
    servers[name] = dict(entry)
    new["mcpServers"] = servers
    return new


def plan_mcp_server_uninstall(document: Mapping[str, Any], name: str) -> JSONObject:
    new = copy.deepcopy(dict(document))
    servers = new.get("mcpServers")
    if isinstance(servers, dict) and is_our_mcp_server(servers.get(name)):
        del servers[name]
        if not servers:
            del new["mcpServers"]
    return new


# --- a list of names we add to and remove from (Gemini's tools.allowed) -----------------------


def plan_list_add(
    document: Mapping[str, Any], path: Sequence[str], names: Sequence[str]
) -> JSONObject:
    new = copy.deepcopy(dict(document))
    parent = new
    for key in path[:-1]:
        child = parent.get(key)
        parent[key] = child = dict(child) if isinstance(child, dict) else {}
        parent = child
    current = parent.get(path[-1])
    values = list(current) if isinstance(current, list) else []
    parent[path[-1]] = values + [n for n in names if n not in values]
    return new


def plan_list_remove(
    document: Mapping[str, Any], path: Sequence[str], names: Sequence[str]
) -> JSONObject:
    new = copy.deepcopy(dict(document))
    parents = [new]
    for key in path[:-1]:
        child = parents[-1].get(key)
        if not isinstance(child, dict):
            return new
        parents.append(child)
    values = parents[-1].get(path[-1])
    if not isinstance(values, list):
        return new
    kept = [v for v in values if v not in names]
    if kept:
        parents[-1][path[-1]] = kept
    else:
        del parents[-1][path[-1]]
    for depth in range(len(parents) - 1, 0, -1):  # drop objects we emptied
        if not parents[depth]:
            del parents[depth - 1][path[depth - 1]]
    return new


# --- a section of an instructions file ----------------------------------------------------------


def append_block(text: str | None, block: str) -> str:
    """`block` after `text`, one newline between them: undone exactly by `remove_block` (a
    file's trailing blank lines, or their absence, come back as they were)."""
    return block if text is None else text + "\n" + block


def remove_block(text: str, start: int, end: int) -> str | None:
    """`text` without `text[start:end]` (a block `append_block` wrote, maybe moved since), with
    the newline `append_block` put before it when it is the last thing in the file; None when
    nothing else is left (the file was ours)."""
    before, after = text[:start], text[end:]
    if not before:  # the file began as ours: what follows was added after it
        return after.lstrip("\n") or None
    if after.strip():  # in the middle: one blank line stays between its neighbours
        # (the newline dropped is the one append_block put: a CRLF file's own line ends stay)
        blank = before.endswith("\n\n") and after.startswith(("\n", "\r\n"))
        return before[:-1] + after if blank else before + after
    return before[:-1] if before.endswith("\n") else before


def plan_section_install(text: str | None, body: str) -> str:
    """`text` with our section (between SECTION_BEGIN and SECTION_END) holding `body`: replaced
    in place when there, appended otherwise (append_block)."""
    section = f"{SECTION_BEGIN}\n{body.strip()}\n{SECTION_END}"
    current = text or ""
    begin, end = current.find(SECTION_BEGIN), current.find(SECTION_END)
    if 0 <= begin < end:
        return current[:begin] + section + current[end + len(SECTION_END) :]
    return append_block(text, section + "\n")


def plan_section_uninstall(text: str | None) -> str | None:
    """`text` without our section, exactly as it was before `plan_section_install` appended it;
    None when nothing else is left (the file can go)."""
    if text is None:
        return None
    begin, end = text.find(SECTION_BEGIN), text.find(SECTION_END)
    if not 0 <= begin < end:
        return text
    stop = end + len(SECTION_END)
    return remove_block(text, begin, stop + 1 if text[stop : stop + 1] == "\n" else stop)


def section_of(text: str | None) -> str | None:
    if text is None:
        return None
    begin, end = text.find(SECTION_BEGIN), text.find(SECTION_END)
    return text[begin + len(SECTION_BEGIN) : end].strip() if 0 <= begin < end else None
