"""What to do after `init`: printed once, so a new user knows the first week's moves
(docs/first-week.md walks through them), for each agent `init` wired."""

from __future__ import annotations

from collections.abc import Collection, Sequence

# What each install may write that the team shares through git (repository-relative), beside
# local-recall/. Claude Code at local or user scope: its hooks are personal, .mcp.json is not.
CLAUDE_PROJECT_FILES = (".claude/settings.json", ".mcp.json", ".claude/skills", ".claude/commands")
CLAUDE_PERSONAL_FILES = (".mcp.json",)
AGENT_FILES: dict[str, tuple[str, ...]] = {
    "codex": (".codex/hooks.json", ".codex/config.toml"),
    "gemini": (".gemini/settings.json",),
    "copilot": (".github/hooks/local-recall.json", ".mcp.json", ".github/copilot-instructions.md"),
}
_INJECTED = "memories are injected at session start and with each prompt"
# How to start each agent, and the trust it asks for once before project hooks and MCP load
# (docs/agents.md, "hook trust").
AGENT_START: dict[str, str] = {
    "codex": "codex   # trust the project when Codex asks and its hooks once in /hooks "
    f"(they do not run before): {_INJECTED}",
    "gemini": f"gemini   # trust the folder when Gemini asks (project hooks load only there): "
    f"{_INJECTED}",
    "copilot": "copilot   # trust the folder when Copilot asks (repo hooks and .mcp.json load "
    f"only there): {_INJECTED}",
}


def shared_files(claude_scope: str | None, agents: Sequence[str]) -> list[str]:
    """The files `init` may have written for the team to commit, each once, in order.
    `claude_scope`: where Claude Code's hooks went (None: not installed); `agents`: the others."""
    if claude_scope is None:
        candidates: tuple[str, ...] = ()
    else:
        candidates = CLAUDE_PROJECT_FILES if claude_scope == "project" else CLAUDE_PERSONAL_FILES
    for agent in agents:
        candidates += AGENT_FILES.get(agent, ())
    return list(dict.fromkeys(candidates))


def next_steps(
    claude_scope: str | None, agents: Sequence[str] = (), present: Collection[str] | None = None
) -> list[str]:
    """The lines `init` ends with. `present`: the shared files that exist (`git add` fails on a
    path that does not); None: all of them."""
    shared = [f for f in shared_files(claude_scope, agents) if present is None or f in present]
    where = (
        "anywhere in this repository"
        if claude_scope == "user"
        else "at the repository's root (see above for subfolders)"
    )
    starts = [AGENT_START[agent] for agent in agents if agent in AGENT_START]
    if claude_scope is not None:
        starts.insert(
            0,
            f"claude   # start Claude Code {where}: {_INJECTED}; the daemon extracts new "
            "ones from your sessions",
        )
    elif not starts:
        starts = ["local-recall init   # again without --no-claude to install the hooks"]
    return [
        f"git add {' '.join(['local-recall', *shared])} && git commit -m 'Add local-recall'"
        "   # share the memories (and the hooks) with the team",
        *starts,
        "local-recall new   # write a memory in $EDITOR (or: local-recall add -s SUBJECT -b BODY)",
        "local-recall review   # accept or reject what was extracted, before you commit it",
        "local-recall doctor   # is the daemon running, is extraction failing, do hooks fire?",
    ]


def next_steps_text(
    claude_scope: str | None, agents: Sequence[str] = (), present: Collection[str] | None = None
) -> str:
    lines = ["Next steps:"]
    steps = next_steps(claude_scope, agents, present)
    lines += [f"  {n}. {step}" for n, step in enumerate(steps, start=1)]
    lines.append("  More: docs/first-week.md in the local-recall repository.")
    return "\n".join(lines)


def hooks_reach(claude_scope: str, root: str) -> str:
    """Where the hooks `init` installed fire: Claude Code reads project and local hooks only
    from the folder it starts in (doctor/reach.py)."""
    if claude_scope == "user":
        return (
            "Claude Code hooks fire in every folder of every repository with local-recall/ "
            "(user scope; elsewhere they stop in the shell, ~0 ms: docs/install.md)"
        )
    return (
        f"Claude Code hooks fire when `claude` starts in {root} ({claude_scope} scope); "
        "Claude Code reads them only there. For sessions started in a subfolder too: "
        "`local-recall init --scope user`"
    )
