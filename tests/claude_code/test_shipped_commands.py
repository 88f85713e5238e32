"""What we ship must be true: every `local-recall ...` command named in the agent
files `init` installs, the plugin in `hooks/`, the docs, the README and the messages of the
package itself must be a command the real CLI accepts, with options it has. The shipped skill
once told agents to run `local-recall still-true ID`, which does not exist."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click

from local_recall.cli import cli
from tests.conftest import REPO_ROOT, clean_env

# `local-recall` followed by words, inside a code span or a fenced block of a shipped file.
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
# Where a command starts: a line's or span's start, after a shell separator or `$`, a quote
# (a JSON "command"), or a path to the script (`.venv/bin/local-recall`); not in prose such as
# "the local-recall plugin".
_COMMAND = re.compile(
    r"(?:^|(?<=[$;&|(\"'])|(?<=bin/))[ \t]*local-recall((?:[ \t]+[^\s`|;&)\"']+)+)", re.M
)
ROOT_OPTIONS = {"--root", "--version", "-h", "--help"}


def shipped_files() -> list[Path]:
    found = [REPO_ROOT / "README.md"]
    found += sorted((REPO_ROOT / "docs").glob("*.md"))
    found += sorted(p for p in (REPO_ROOT / "hooks").rglob("*") if p.is_file())
    found += sorted(p for p in (REPO_ROOT / "local_recall").rglob("*.md"))
    found += sorted(p for p in (REPO_ROOT / "local_recall").rglob("*.py"))
    return found


def code_text(path: Path) -> Iterator[str]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        yield from (m.group(1) for m in _FENCE.finditer(text))
        yield from (m.group(1) for m in _CODE_SPAN.finditer(_FENCE.sub("", text)))
    else:  # JSON and Python: command lines and messages name commands in backticks or strings
        yield from (m.group(1) for m in _CODE_SPAN.finditer(text))
        if path.suffix == ".json":
            yield text


def named_commands() -> dict[str, list[str]]:
    """'subcommand path + options' -> where it is named (file:line of the first mention)."""
    found: dict[str, list[str]] = {}
    for path in shipped_files():
        for code in code_text(path):
            for line in code.splitlines():
                for match in _COMMAND.finditer(line):
                    words = match.group(1).split()
                    found.setdefault(" ".join(words), []).append(str(path.relative_to(REPO_ROOT)))
    return found


def hook_events() -> set[str]:
    from local_recall.claude_code.hooks.events import EVENTS

    return set(EVENTS)


def resolve(words: list[str]) -> tuple[list[str], click.Command, list[str]]:
    """(subcommand path, its command, the options named after it)."""
    command: click.Command = cli
    path: list[str] = []
    rest = list(words)
    while rest and rest[0] in ("--root",):
        rest = rest[2:]
    while rest and isinstance(command, click.Group):
        word = rest[0]
        if word.startswith("-") or word not in command.commands:
            break
        command = command.commands[word]
        path.append(word)
        rest = rest[1:]
    options = [w.split("=", 1)[0] for w in rest if re.fullmatch(r"--?[a-z][a-z-]*(=.*)?", w)]
    return path, command, options


def test_every_named_command_exists_with_its_options() -> None:
    named = named_commands()
    assert len(named) > 40  # the scan finds what the docs name (a broken regex finds nothing)
    wrong = []
    for words, where in sorted(named.items()):
        parts = words.split()
        if parts and parts[0] in ROOT_OPTIONS - {"--root"}:
            continue
        if parts and parts[0] == "hook":  # dispatched before click (__main__.py)
            event = parts[1].rstrip(".,:") if len(parts) > 1 else "..."
            if re.fullmatch(r"[a-z][a-z-]*", event) and event not in hook_events():
                wrong.append(f"`local-recall {words}` ({where[0]}): no hook {event!r}")
            continue
        path, command, options = resolve(parts)
        if not path:
            if parts and re.fullmatch(r"[a-z][a-z-]*", parts[0]):
                wrong.append(f"`local-recall {words}` ({where[0]}): no command {parts[0]!r}")
            continue
        if isinstance(command, click.Group) and len(parts) > len(path):
            extra = parts[len(path)]
            if re.fullmatch(r"[a-z][a-z-]*", extra) and extra not in command.commands:
                wrong.append(f"`local-recall {words}` ({where[0]}): no command {extra!r}")
        known = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
        known |= {"-h", "--help"}
        for option in options:
            if option not in known:
                wrong.append(f"`local-recall {words}` ({where[0]}): no option {option}")
    assert not wrong, "\n".join(wrong)


# Runs `local-recall <path> --help` for each path through the console entry point, in one
# process (a process per path took 80 s on a loaded 2-core machine).
_HELP_EACH = """
import contextlib, io, json, sys
from local_recall.__main__ import main
results = {}
for path in json.loads(sys.argv[1]):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            code = main([*path, "--help"])
        except SystemExit as exc:
            code = exc.code
    results[" ".join(path)] = [code, "Usage:" in out.getvalue()]
print(json.dumps(results))
"""


def test_each_named_command_parses_in_the_real_cli() -> None:
    """`--help` of every command path named anywhere, through the real entry point."""
    paths = set()
    for words in named_commands():
        path, _, _ = resolve(words.split())
        if path:
            paths.add(tuple(path))
    assert ("review", "still-true") in paths
    done = subprocess.run(
        [sys.executable, "-c", _HELP_EACH, json.dumps(sorted(paths))],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert len(results) == len(paths)
    bad = {path: got for path, got in results.items() if got != [0, True]}
    assert not bad, bad
