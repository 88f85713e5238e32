"""What `init --agent codex` writes (pure, over the files' texts):

* `.codex/hooks.json`: SessionStart (`startup|resume|clear`) and UserPromptSubmit running
  `local-recall hook --agent codex …`, merged with the file's other hooks (plan.py). Codex runs
  a project hook only once the user trusts it (`/hooks` in the TUI stores its hash in the user
  config); `doctor` says so. Timeouts in seconds.
* `.codex/config.toml`: `[mcp_servers.local-recall]` (command and args only). Never `required =
  true`: Codex would then refuse to start whenever the server cannot. The file is edited through
  tomlkit, which keeps every byte it is not asked to change. The table is appended as text and
  removed as that text, so init then uninstall gives the file back byte for byte; a server of
  that name that is not ours is left alone. Running init again sets only `command` and `args`,
  in place: keys the user added (`startup_timeout_sec`, an `env` sub-table) and comments stay.
  Our table ends at its last key, not at the next table's header: a comment above that header
  is the next table's. Dotted keys and an inline table are read as the same server.
  Project config loads only in a trusted project (`codex exec --trust`, or the TUI's prompt).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import tomlkit
from tomlkit.container import Container, OutOfOrderTableProxy
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Comment, InlineTable, Item, Table, Whitespace
from tomlkit.toml_document import TOMLDocument

from local_recall.agents.plan import (
    AgentHookSpec,
    append_block,
    is_our_mcp_server,
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


# what a server entry can be: a [table], a table spread over dotted keys or split around other
# tables (tomlkit's proxy over the pieces), or an inline table
_Entry = Table | InlineTable | OutOfOrderTableProxy


def _parse(text: str) -> TOMLDocument | None:
    try:
        return tomlkit.parse(text)
    except (TOMLKitError, ValueError):
        return None


def _entry(doc: TOMLDocument) -> _Entry | None:
    """`mcp_servers.local-recall` in whatever form the file gives it."""
    servers = doc.get("mcp_servers")
    entry = servers.get(SERVER) if isinstance(servers, _Entry) else None
    return entry if isinstance(entry, _Entry) else None


def _runs_local_recall(entry: _Entry) -> bool:
    keys = ("command", "args")
    return is_our_mcp_server({k: v.unwrap() for k in keys if isinstance(v := entry.get(k), Item)})


def our_mcp_table(text: str) -> _Entry | None:
    """The `mcp_servers.local-recall` entry of the config text when it runs local-recall."""
    doc = _parse(text)
    entry = _entry(doc) if doc is not None else None
    return entry if entry is not None and _runs_local_recall(entry) else None


def plan_config(text: str | None, launcher: Sequence[str] | None) -> str | None:
    """The config.toml text with our server table (launcher given) or without it (None)."""
    doc = _parse(text or "")
    if doc is None:  # reported by agents/files.py, never rewritten
        return text
    entry = _entry(doc)
    if entry is not None and not _runs_local_recall(entry):
        return text  # someone else's server of that name: theirs
    if launcher is None:
        return text if entry is None else _removed(doc, entry, text or "")
    if entry is None:
        return _added(doc, text, launcher)
    return _relaunched(doc, entry, launcher)


def _ours(launcher: Sequence[str]) -> Table:
    """Our table as `mcp_table` writes it: its items keep that rendering wherever they go."""
    table = tomlkit.parse(mcp_table(launcher))["mcp_servers"][SERVER]
    assert isinstance(table, Table)
    return table


def _added(doc: TOMLDocument, text: str | None, launcher: Sequence[str]) -> str:
    """Our table appended as text (undone byte for byte by `_removed`); inside an inline
    `mcp_servers = {…}`, which no [table] may extend, as one more inline entry."""
    servers = doc.get("mcp_servers")
    if not isinstance(servers, InlineTable):  # (after `mcp_servers = 5` it does not parse: refused)
        return append_block(text, mcp_table(launcher))
    entry = tomlkit.inline_table()
    entry.update(_ours(launcher))
    servers[SERVER] = entry
    return doc.as_string()


def _relaunched(doc: TOMLDocument, entry: _Entry, launcher: Sequence[str]) -> str:
    """`command` and `args` set in place; every other key, comment and byte kept."""
    wanted = _ours(launcher)
    for key in ("command", "args"):
        if entry.get(key) != wanted[key]:
            entry[key] = wanted[key]
    return doc.as_string()


def _removed(doc: TOMLDocument, entry: _Entry, text: str) -> str | None:
    """The text without our entry. A [table] of ours goes as a block of text, so that
    `remove_block` undoes `append_block` byte for byte; another form (dotted keys, an inline
    table: never what we write) is deleted by tomlkit."""
    if not _is_header_table(doc, entry):
        servers = doc["mcp_servers"]
        del servers[SERVER]
        if not servers and not _is_header_table(doc, servers):  # a header keeps its comments
            del doc["mcp_servers"]
        rest = doc.as_string()
        return rest if rest.strip() else None
    assert isinstance(entry, Table)
    return remove_block(*_marked(doc, entry, text))


def _marked(doc: TOMLDocument, table: Table, text: str) -> tuple[str, int, int]:
    """`doc` as text with where `table` (its sub-tables with it) starts and ends: tomlkit keeps
    no source offsets, so its header is renamed to a name the text does not hold and a comment
    of that name goes after its last key, found in the rendered text, then taken out. tomlkit
    files the blank and comment lines above the next header under the table before: they go
    after that comment (the next table's, as a reader sees them)."""
    name = "local-recall-removed"
    while name in text:
        name += "-"
    last = table
    while last.value.body and isinstance(last.value.body[-1][1], Table):
        last = last.value.body[-1][1]
    body = last.value.body
    keys_end = len(body)
    while keys_end and isinstance(body[keys_end - 1][1], Whitespace | Comment):
        keys_end -= 1
    trailing = [item for _, item in body[keys_end:] if isinstance(item, Whitespace | Comment)]
    del body[keys_end:]  # keyless items: the container's index of its keys stays right
    end_mark = tomlkit.comment(name)
    for item in (end_mark, *trailing):
        last.add(item)
    table.display_name = name
    rendered = doc.as_string()
    start = rendered.rfind("\n", 0, rendered.index(f"[{name}]")) + 1
    end = rendered.index(end_mark.as_string(), start)
    return rendered[:end] + rendered[end + len(end_mark.as_string()) :], start, end


def _is_header_table(container: Container, entry: object) -> bool:
    """Whether `entry` is a [table] with a header of its own (not dotted keys, not inline)."""
    for key, item in container.body:
        if item is entry:
            if not isinstance(item, Table) or key is None or key.is_dotted():
                return False
            return not item.is_super_table()
        if isinstance(item, Table) and _is_header_table(item.value, entry):
            return True
    return False


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
