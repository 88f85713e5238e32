"""The shell guard in front of the prompt hook's command, and the marker it tests. Pure.

Claude Code runs a command hook as `/bin/sh -c <command>`, so the guard's `$PPID` is Claude
Code's pid. The marker of a Claude Code process its MCP server serves is a private directory
`${XDG_RUNTIME_DIR:-/tmp}/local-recall-mcp-<pid>` holding `live`, a symlink through the
server's own open handle (`/proc/<server pid>/fd/<n>/<token>`: handoff.py writes it). With shell
builtins only — no process started — the guard checks that the directory is ours (`-O`) and not
a symlink (`! -h`), and that `live` leads somewhere, which only a running server can make true;
then it ends, and no Python starts for the prompt. Anything else (no marker, someone else's, a
dead server, its pid reused): it runs the command.
"""

import os
from collections.abc import Mapping
from pathlib import Path

MARKER_PREFIX = "local-recall-mcp-"
LIVE = "live"
GUARD = (
    f'd="${{XDG_RUNTIME_DIR:-/tmp}}/{MARKER_PREFIX}$PPID"; '
    f'test -O "$d" && test ! -h "$d" && test -e "$d/{LIVE}" || exec '
)


def guarded(command: str) -> str:
    """`command` behind the guard: it runs only while no MCP server serves this Claude Code."""
    return GUARD + command


def unguarded(command: str) -> str:
    """The command a guarded hook runs (`command` itself when it has no guard)."""
    return command[len(GUARD) :] if command.startswith(GUARD) else command


def marker_dir(environ: Mapping[str, str], claude_pid: int) -> Path | None:
    """The marker of the Claude Code process `claude_pid`, where the guard looks for it
    (`${XDG_RUNTIME_DIR:-/tmp}`: set and not empty, else /tmp); None when that is relative."""
    base = environ.get("XDG_RUNTIME_DIR") or "/tmp"  # noqa: S108 - a private dir, checked
    return Path(base) / f"{MARKER_PREFIX}{claude_pid}" if os.path.isabs(base) else None
