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
    steps = [
        f"git add {' '.join(shared)} && git commit -m 'Add local-recall'"
        "   # share the memories (and the hooks) with the team",
        "claude   # start Claude Code anywhere in this repository: memories are injected at "
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
