"""The shell gate in front of every user-scope hook command. Pure.

Claude Code reads project hooks only from `.claude/settings.json` (and `settings.local.json`) of
the directory it starts in, never from a parent: a session started in a subdirectory of the
repository runs none of them (docs/install.md, checked with Claude Code 2.1.197). User hooks
(`~/.claude/settings.json`) run in every session, in every repository, so ours there must cost
nothing where they have nothing to do. The gate decides with shell builtins (Claude Code runs a
command hook as `/bin/sh -c`), before any Python starts:

1. the repository: `$LOCAL_RECALL_ROOT`, else the nearest folder at or above the session's
   directory (`$CLAUDE_PROJECT_DIR`, else the hook's cwd) that holds `.git` — the same answer as
   `layout.discover_root`; no `.git` anywhere: the session's directory itself;
2. no `local-recall/` folder there: exit 0 at once (every repository without local-recall);
3. the session's directory has project or local settings running our hooks (the session was
   started where `init --scope project|local` wrote them): those answer; exit 0, so a user who
   also has the committed project hooks gets one answer, not two. This is the one step that
   starts a process (`grep`), and only where such a settings file exists;
4. else: run the command (`exec`), which finds the same repository and serves the session.
"""

# `-E` regex for our hook commands in a settings file: `<...>local-recall hook <event>`,
# `<python> -m local_recall hook <event>`, a shell-quoted path ('... local-recall' hook ...).
OURS_IN_SETTINGS = "local.recall'? hook [a-z-]+"
GATE = (
    'p="${CLAUDE_PROJECT_DIR:-$PWD}"; r="${LOCAL_RECALL_ROOT:-}"; '
    'if test -z "$r"; then r="$p"; until test -e "$r/.git"; do '
    'test -n "$r" || { r="$p"; break; }; r="${r%/*}"; done; fi; '
    'test -d "$r/local-recall" || exit 0; '
    'for f in "$p/.claude/settings.json" "$p/.claude/settings.local.json"; do '
    f'test -f "$f" && grep -Eqs "{OURS_IN_SETTINGS}" "$f" && exit 0; done; '
)


def gated(command: str) -> str:
    """`command` behind the gate: it runs only in a repository with local-recall/, and not
    where project or local settings of ours already answer."""
    return GATE + command


def ungated(command: str) -> str:
    """The command a gated hook runs (`command` itself when it has no gate)."""
    return command[len(GATE) :] if command.startswith(GATE) else command
