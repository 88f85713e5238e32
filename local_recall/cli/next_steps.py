"""What to do after `init`: printed once, so a new user knows the first week's moves
(docs/first-week.md walks through them)."""

from __future__ import annotations


def next_steps(claude_scope: str | None) -> list[str]:
    """The lines `init` ends with. `claude_scope`: where the hooks went (None: --no-claude)."""
    shared = ["local-recall"]
    if claude_scope == "project":
        shared += [".claude/settings.json", ".mcp.json", ".claude/skills", ".claude/commands"]
    elif claude_scope is not None:  # local or user: the hooks are personal, the server is not
        shared += [".mcp.json"]
    where = (
        "anywhere in this repository"
        if claude_scope == "user"
        else "at the repository's root (see above for subfolders)"
    )
    steps = [
        f"git add {' '.join(shared)} && git commit -m 'Add local-recall'"
        "   # share the memories (and the hooks) with the team",
        f"claude   # start Claude Code {where}: memories are injected at "
        "session start and with each prompt; the daemon extracts new ones from your sessions",
        "local-recall new   # write a memory in $EDITOR (or: local-recall add -s SUBJECT -b BODY)",
        "local-recall review   # accept or reject what was extracted, before you commit it",
        "local-recall doctor   # is the daemon running, is extraction failing, do hooks fire?",
    ]
    if claude_scope is None:
        steps[1] = "local-recall init   # again without --no-claude to install the hooks"
    return steps


def next_steps_text(claude_scope: str | None) -> str:
    lines = ["Next steps:"]
    lines += [f"  {n}. {step}" for n, step in enumerate(next_steps(claude_scope), start=1)]
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
