"""`local-recall search`, `list` and `why` through the running daemon: its model is loaded and its
index open, so the answer takes tens of milliseconds instead of the seconds a new process spends
importing the library and loading the model.

`__main__` calls `run_warm` before click or the library is imported. It handles the common
forms only — the options below, `--root` before the command — and returns None for anything
else (`--org`, `--since`, `--help`, a value it cannot convert, no daemon, a daemon that refuses
or is too old to know the request), so the full CLI runs and answers or reports the error as it
always did. The daemon computes the reply with the same function as the CLI's own process
(daemon/cli_queries.py) and render.py prints both alike.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from local_recall.cli.render import (
    list_output,
    search_output,
    search_warnings,
    skipped_problems,
    why_output,
)
from local_recall.daemon.query_client import ask, daemon_sockets
from local_recall.errors import RecallError
from local_recall.repo.layout import discover_root, resolve_layout

WARM_TIMEOUT = 5.0  # seconds; a daemon that takes longer is skipped, the CLI answers itself
MAX_LIMIT = 100  # as search/limits.MAX_LIMIT (search --limit's range), without importing it
NOTICE_MARK = "model-notice-shown"  # in local-recall/state/: the notice below is said once

_SEARCH_VALUES = {
    "--limit": "limit",
    "-n": "limit",
    "--scope": "scope",
    "--mode": "mode",
    "--min-score": "min_score",
    "--kind": "kind",
}
_LIST_VALUES = {
    "--limit": "limit",
    "-n": "limit",
    "--scope": "scope",
    "--keyword": "keyword",
    "-k": "keyword",
}
_FLAGS = {"--json": "json", "--no-global": "no_global", "--newest-first": "newest_first"}


def run_warm(
    args: Sequence[str],
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int | None:
    """Answer `args` through the daemon and return the exit code; None: run the full CLI."""
    environ = os.environ if environ is None else environ
    parsed = parse_args(args)
    if parsed is None:
        return None
    root_option, command, options = parsed
    try:
        root = discover_root(root_option, environ, cwd or Path.cwd())
    except (RecallError, OSError):
        return None
    layout = resolve_layout(root, environ)  # state/ in a user cache for a read-only checkout
    request = _request(command, options)
    if request is None or not layout.recall_dir.is_dir():
        return None
    if command == "why":  # the daemon decides with this process's settings, as a hook's
        from local_recall.context.hook_settings import hook_environment

        request["hook_env"] = hook_environment(environ)
    reply = ask(daemon_sockets(root, layout.state_dir, environ), request, WARM_TIMEOUT, root=root)
    if reply is None or reply.get("ok") is not True:
        return None
    try:
        _print(command, options, reply, root, out or sys.stdout, err or sys.stderr)
    except BrokenPipeError:  # `local-recall list | head`, as the full CLI
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), sys.stdout.fileno())
    return 0


def parse_args(args: Sequence[str]) -> tuple[str | None, str, dict[str, Any]] | None:
    """(--root, command, options) of `[--root DIR] search|list ...`, or None."""
    rest = list(args)
    root = None
    if rest[:1] == ["--root"] and len(rest) > 1:
        root, rest = rest[1], rest[2:]
    elif rest[:1] and rest[0].startswith("--root="):
        root, rest = rest[0].split("=", 1)[1], rest[1:]
    if not rest or rest[0] not in ("search", "list", "why"):
        return None
    command = rest[0]
    if command == "why":
        why = _why_options(rest[1:])
        return None if why is None else (root, command, why)
    found = _options(command, rest[1:])
    if found is None:
        return None
    options, positional = found
    if command == "search":
        if len(positional) != 1 or not positional[0].strip():
            return None
        options["query"] = positional[0]
    elif positional:
        return None
    return root, command, options


def _why_options(words: list[str]) -> dict[str, Any] | None:
    """`why PROMPT [--json]`, nothing else."""
    prompt = [w for w in words if w != "--json"]
    if len(prompt) != 1 or prompt[0].startswith("-") or not prompt[0].strip():
        return None
    return {"prompt": prompt[0], "json": "--json" in words}


def _options(command: str, words: list[str]) -> tuple[dict[str, Any], list[str]] | None:
    """The options and positional words of a command, or None for an option warm.py leaves to
    the full CLI."""
    values = _SEARCH_VALUES if command == "search" else _LIST_VALUES
    options: dict[str, Any] = {}
    positional: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        name, eq, inline = word.partition("=") if word.startswith("--") else (word, "", "")
        if word == "--":
            positional += words[i + 1 :]
            break
        if name in values:
            if eq:
                options[values[name]] = inline
            elif i + 1 < len(words):
                i += 1
                options[values[name]] = words[i]
            else:
                return None
        elif word in _FLAGS and not (command == "search" and word == "--newest-first"):
            options[_FLAGS[word]] = True
        elif word.startswith("-"):
            return None  # --org, --since, --help, ...: the full CLI
        else:
            positional.append(word)
        i += 1
    return options, positional


def _request(command: str, options: Mapping[str, Any]) -> dict[str, Any] | None:
    try:
        limit = None if options.get("limit") is None else int(options["limit"])
        min_score = None if options.get("min_score") is None else float(options["min_score"])
    except ValueError:
        return None
    if limit is not None and not (1 <= limit <= (MAX_LIMIT if command == "search" else limit)):
        return None
    if min_score is not None and not 0.0 <= min_score <= 1.0:
        return None
    if command == "why":
        return {"op": "cli_why", "prompt": options["prompt"]}
    common = {
        "scope": options.get("scope"),
        "include_global": not options.get("no_global", False),
        "limit": limit,
    }
    if command == "list":
        return {
            "op": "cli_list",
            **common,
            "keyword": options.get("keyword"),
            "newest_first": options.get("newest_first", False),
        }
    return {
        "op": "cli_search",
        **common,
        "query": options["query"],
        "mode": options.get("mode", "hybrid"),
        "min_score": min_score,
        "kind": options.get("kind", "episodic"),
    }


def _print(
    command: str,
    options: Mapping[str, Any],
    reply: Mapping[str, Any],
    root: Path,
    out: TextIO,
    err: TextIO,
) -> None:
    as_json = bool(options.get("json"))
    if command == "why":
        out.write(why_output(reply, as_json=as_json))
        out.flush()
        return
    if command == "list":
        text, errors = list_output(reply, as_json=as_json), list[str]()
    else:
        text, errors = search_output(reply, as_json=as_json, org=False)
    problems = skipped_problems(reply)
    skipped = None
    if problems:  # memory/repair.py costs ~0.25 s to import: only when there is a file to name
        from local_recall.cli.notices import skipped_files_notice

        skipped = skipped_files_notice(problems, root)
    for line in [*errors, *([skipped] if skipped else [])]:
        err.write(line + "\n")
    err.flush()
    out.write(text)
    out.flush()
    if command == "search":
        for line in search_warnings(
            reply, as_json=as_json, query=str(options.get("query")).strip()
        ):
            err.write(line + "\n")


def model_notice(state_dir: Path, err: TextIO | None = None) -> None:
    """Said once per repository, to a person (stderr is a terminal: a script reading --json
    output gets no surprise line), when a search runs in the CLI's own process (no daemon):
    the model loads first, and a running daemon would keep it loaded."""
    stream = err or sys.stderr
    mark = state_dir / NOTICE_MARK
    if mark.exists() or not stream.isatty():
        return
    stream.write(
        "local-recall: no daemon is running, so this search loads the embedding model first "
        "(a few seconds each time); `local-recall daemon start` keeps it loaded and makes "
        "search and list answer in well under a second\n"
    )
    try:
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.touch()
    except OSError:
        pass
