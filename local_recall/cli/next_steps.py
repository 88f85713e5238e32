"""What to do after `init`: printed once, so a new user knows the first week's moves
(docs/first-week.md walks through them), for each agent `init` wired."""

from __future__ import annotations

import os
import shlex
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path

from local_recall.repo.git_status import to_stage

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


# A file change's actions that wrote or deleted it (install/apply.py, agents/files.py).
CHANGED_ACTIONS = frozenset({"created", "updated", "removed", "deleted"})


def changed_in_repository(
    root: Path, changed: Iterable[tuple[Path, str]], environ: Mapping[str, str]
) -> list[str]:
    """The repository-relative paths of `changed` ((path, action) pairs) that a command wrote
    or deleted and git would stage: what its `git add` line names. Files outside the
    repository (user scope) and ones git ignores or never knew are left out."""
    relative = []
    for path, action in changed:
        if action not in CHANGED_ACTIONS:
            continue
        try:
            relative.append(Path(os.path.relpath(path, root)).as_posix())
        except ValueError:  # another drive
            continue
    inside = [p for p in relative if p != ".." and not p.startswith("../")]
    return to_stage(root, inside, environ, folders=(".claude/skills", ".claude/commands"))


def git_add_line(paths: Sequence[str], message: str) -> str:
    return f"git add {' '.join(shlex.quote(p) for p in paths)} && git commit -m '{message}'"


def next_steps(
    claude_scope: str | None, agents: Sequence[str] = (), present: Collection[str] | None = None
) -> list[str]:
    """The lines `init` ends with. `present`: exactly the files this `init` changed that git
    would stage, in order (no `git add` step when there is none); None: every file `init` may
    write for the team."""
    if present is None:
        shared = ["local-recall", *shared_files(claude_scope, agents)]
    else:
        shared = list(present)
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
    add = [
        git_add_line(shared, "Add local-recall")
        + "   # share the memories (and the hooks) with the team"
    ]
    return [
        *(add if shared else []),
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
