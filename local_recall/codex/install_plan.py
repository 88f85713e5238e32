"""What `init --agent codex` writes (pure, over the files' texts):

* `.codex/hooks.json`: SessionStart (`startup|resume|clear`) and UserPromptSubmit running
  `local-recall hook --agent codex …`, merged with the file's other hooks (plan.py). Codex runs
  a project hook only once the user trusts it (`/hooks` in the TUI stores its hash in the user
  config); `doctor` says so. Timeouts in seconds.
* `.codex/config.toml`: `[mcp_servers.local-recall]` (command and args only). Never `required =
  true`: Codex would then refuse to start whenever the server cannot. The table is added as
  text at the end and removed as text; a table of that name that is not ours is left alone.
  Running init again rewrites only its `command` and `args` lines: keys the user added
  (`startup_timeout_sec`, an `env` sub-table) stay (issue 35.8). Our table ends at its last
  key, not at the next table's header: a comment above that header is the next table's.
  Project config loads only in a trusted project (`codex exec --trust`, or the TUI's prompt).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping, Sequence

from local_recall.agents.plan import (
    AgentHookSpec,
    append_block,
    is_local_recall_argv,
    plan_hooks_install,
    plan_hooks_uninstall,
    remove_block,
)
from local_recall.repo.json_text import render_json_like

AGENT = "codex"
HOOKS_FILE = ".codex/hooks.json"
CONFIG_FILE = ".codex/config.toml"
FILES = [HOOKS_FILE, CONFIG_FILE]
SERVER = "local-recall"
HOOKS = (
    AgentHookSpec("SessionStart", "session-start", {"timeout": 15}, "startup|resume|clear"),
    AgentHookSpec("UserPromptSubmit", "user-prompt-submit", {"timeout": 10}),
)
_TABLE = re.compile(r'^\[mcp_servers\.(?:local-recall|"local-recall")\]\s*$', re.MULTILINE)
# the next table that is not one of ours' sub-tables (`[mcp_servers.local-recall.env]` is part
# of our server: it goes with it)
_NEXT_TABLE = re.compile(r'^\[(?!mcp_servers\.(?:local-recall|"local-recall")\.)', re.MULTILINE)


def _json(text: str | None) -> dict[str, object]:
    data = json.loads(text) if text and text.strip() else {}
    return data if isinstance(data, dict) else {}


def _dump(document: Mapping[str, object], original: str | None) -> str | None:
    return render_json_like(document, original) if document else None


def mcp_table(launcher: Sequence[str]) -> str:
    args = [*launcher[1:], "mcp"]
    return (
        f"[mcp_servers.{SERVER}]\ncommand = {json.dumps(launcher[0])}\nargs = {json.dumps(args)}\n"
    )


# our `command` / `args` keys (an array may span lines), with a comment after them
_OUR_KEYS = re.compile(
    r"^(?:command|args)[ \t]*=[ \t]*(?:\[.*?\]|[^\n]*?)[ \t]*(?:#[^\n]*)?(?:\n|\Z)",
    re.MULTILINE | re.DOTALL,
)


def _last_key_end(text: str, start: int, end: int) -> int:
    """`end` drawn back over the blank and comment lines before the next table."""
    lines = text[start:end].splitlines(keepends=True)
    while len(lines) > 1 and (not lines[-1].strip() or lines[-1].lstrip().startswith("#")):
        lines.pop()
    return start + sum(len(line) for line in lines)


def our_mcp_table(text: str) -> tuple[int, int] | None:
    """(start, end) of the `[mcp_servers.local-recall]` table (its sub-tables with it) when it
    runs local-recall; it ends at its last key."""
    match = _TABLE.search(text)
    if match is None:
        return None
    following = _NEXT_TABLE.search(text, match.end())
    end = _last_key_end(text, match.start(), following.start() if following else len(text))
    try:
        entry = tomllib.loads(text[match.start() : end]).get("mcp_servers", {}).get(SERVER, {})
    except tomllib.TOMLDecodeError:
        return None
    command, args = entry.get("command"), entry.get("args") or []
    if not isinstance(command, str) or not isinstance(args, list) or args[-1:] != ["mcp"]:
        return None
    return (match.start(), end) if is_local_recall_argv([command, *args[:-1]]) else None


def plan_config(text: str | None, launcher: Sequence[str] | None) -> str | None:
    """The config.toml text with our server table (launcher given) or without it (None)."""
    current = text or ""
    span = our_mcp_table(current)
    if launcher is None:
        if span is None:
            return text
        return remove_block(current, *span)
    table = mcp_table(launcher)
    if span is not None:
        return (
            current[: span[0]] + _relaunched(current[span[0] : span[1]], table) + current[span[1] :]
        )
    if _TABLE.search(current):
        return text  # someone else's server of that name: theirs
    return append_block(text, table)


def _relaunched(ours: str, table: str) -> str:
    """Our table `ours` (header first) running what `table` runs, every other key kept: the
    header's `command` and `args` lines are replaced, in place of the first of them."""
    header_end = ours.index("\n") + 1 if "\n" in ours else len(ours)
    sub = re.search(r"^\[", ours[header_end:], re.MULTILINE)
    main_end = header_end + sub.start() if sub else len(ours)
    main = ours[header_end:main_end]
    first = _OUR_KEYS.search(main)
    keys = table[table.index("\n") + 1 :]
    at = first.start() if first else 0
    rest = _OUR_KEYS.sub("", main)
    kept = rest[:at] + keys + rest[at:] if first else keys + rest
    relaunched = ours[:header_end] + kept + ours[main_end:]
    try:  # what was there is still there: else the plain table, as before
        old = tomllib.loads(ours).get("mcp_servers", {}).get(SERVER, {})
        new = tomllib.loads(relaunched).get("mcp_servers", {}).get(SERVER, {})
        wanted = tomllib.loads(table)["mcp_servers"][SERVER]
    except tomllib.TOMLDecodeError:
        return table
    same = {k: v for k, v in old.items() if k not in wanted} == {
        k: v for k, v in new.items() if k not in wanted
    }
    return relaunched if same and all(new.get(k) == v for k, v in wanted.items()) else table


def plan(texts: Mapping[str, str | None], launcher: Sequence[str] | None) -> dict[str, str | None]:
    """New texts of FILES: installed with `launcher`, or our parts removed (None)."""
    hooks = _json(texts.get(HOOKS_FILE))
    if launcher is None:
        new_hooks = plan_hooks_uninstall(hooks, AGENT)
    else:
        new_hooks = plan_hooks_install(hooks, HOOKS, launcher, AGENT)
    hooks_text = (
        texts.get(HOOKS_FILE) if new_hooks == hooks else _dump(new_hooks, texts.get(HOOKS_FILE))
    )
    return {HOOKS_FILE: hooks_text, CONFIG_FILE: plan_config(texts.get(CONFIG_FILE), launcher)}
