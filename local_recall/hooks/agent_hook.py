"""A hook process for an agent other than Claude Code (codex/, gemini/, copilot/ describe theirs):
read the agent's stdin JSON, find the repository, ask the shared answers (answers.py) and print
the agent's own output shape, or nothing; fail open like every hook (process.py).

An adapter is an `AgentHooks` value: its event names, the stdin keys that hold the prompt, the
session-start source, the session id and the working directory (every agent spells them its own
way), the environment variable naming the project, and a pure function from (event, context) to
the whole stdout. `run_agent_hook(hooks, args)` runs one event: `local-recall hook --agent
<name> <event>` (__main__.py).

Light like Claude Code's hooks (json, socket, our light modules): the library is only imported
when no daemon answers.
"""

# No `from __future__ import annotations`: NamedTuple string annotations cost at import.

import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

from local_recall.context.hook_settings import read_hook_settings
from local_recall.hooks.answers import HookRun, answer_prompt_command, answer_session_start, log
from local_recall.hooks.process import deadline_seconds, exit_with, run_with_deadline
from local_recall.repo.layout import RECALL_DIRNAME, Layout, discover_root

# What is kept of stdin: a prompt's first megabyte is far more than a search reads.
MAX_INPUT_BYTES = 1_000_000
DEADLINE_SECONDS = 8.0


class AgentHooks(NamedTuple):
    agent: str  # the adapter's package name (log lines come from local_recall.<agent>.hooks)
    events: Mapping[str, str]  # our subcommand -> the agent's event name
    kinds: Mapping[str, str]  # the agent's event name -> "session_start" | "prompt"
    prompt_keys: tuple[str, ...]
    source_keys: tuple[str, ...]
    session_keys: tuple[str, ...]
    cwd_keys: tuple[str, ...]
    project_env: str  # the variable in which the agent names the project directory
    sources: Mapping[str, str]  # the agent's session-start source -> ours
    render: Callable[[str, str], str]  # (event, context) -> the whole stdout ("" for nothing)
    # a payload another program sent through this agent's hook file (VS Code also loads
    # .github/hooks/): the hook then does nothing and prints nothing
    foreign: Callable[[Mapping[str, Any]], bool] = lambda payload: False


def read_payload(stream: Any, limit: int = MAX_INPUT_BYTES) -> Mapping[str, Any]:
    """The stdin JSON object (bounded; the rest is drained so the agent never blocks on a full
    pipe). Anything that is not a JSON object reads as {}."""
    kept: list[bytes] = []
    size = 0
    while chunk := stream.read(65536):
        if size < limit:
            kept.append(chunk[: limit - size])
        size += len(chunk)
    try:
        data = json.loads(b"".join(kept))
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def first_text(payload: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str):
            return value.encode("utf-8", "ignore").decode("utf-8")
    return ""


def agent_root(hooks: AgentHooks, payload: Mapping[str, Any], environ: Mapping[str, str]) -> Path:
    """$LOCAL_RECALL_ROOT, else the git top level of the project the agent names (its
    environment variable, then the payload's cwd), else of our own cwd."""
    start = environ.get(hooks.project_env) or first_text(payload, hooks.cwd_keys)
    base = Path(start) if start and os.path.isabs(start) else Path.cwd()
    try:
        return discover_root(None, environ, base)
    except (OSError, ValueError):
        return discover_root(None, environ, Path.cwd())


def answer(hooks: AgentHooks, event: str, payload: Mapping[str, Any], run: HookRun) -> str:
    """The context for one event: the shared answers, fed the agent's fields."""
    kind = hooks.kinds.get(event)
    if kind == "prompt":
        session = first_text(payload, hooks.session_keys)
        prompt = first_text(payload, hooks.prompt_keys)
        return answer_prompt_command(run, prompt, session_id=session)
    if kind == "session_start":
        raw = first_text(payload, hooks.source_keys)
        source = hooks.sources.get(raw, "startup")
        return answer_session_start(run, source, first_text(payload, hooks.session_keys))
    return ""


def _handle(
    hooks: AgentHooks, event: str, stdin: Any, environ: Mapping[str, str], result: list[str]
) -> None:
    payload = read_payload(stdin)
    if hooks.foreign(payload):
        return
    root = agent_root(hooks, payload, environ)
    if not (root / RECALL_DIRNAME).is_dir():
        return  # not set up in this repository: stay silent
    layout = Layout(root)
    settings = read_hook_settings(layout, environ)
    if settings.config_error:
        problem = f"hook {event}: using defaults: {settings.config_error}"
        log(layout, hooks.agent, "WARNING", problem)
    run = HookRun(hooks.agent, event, root, environ, settings)
    try:
        result.append(hooks.render(event, answer(hooks, event, payload, run)))
    except BaseException:
        log(layout, hooks.agent, "WARNING", f"hook {event} failed", exc_info=True)
        result.append(_nothing(hooks, event))  # the agent's "nothing to add", if it needs one


def run_agent_hook(hooks: AgentHooks, args: list[str]) -> int:
    """Run one hook and end the process with status 0 (also after the deadline); returns 0 only
    when there is nothing to do (an unknown event, or our own extraction run)."""
    environ = os.environ
    if environ.get("LOCAL_RECALL_EXTRACTOR"):
        return 0  # our own extraction run: never recurse into memory
    event = hooks.events.get(args[0]) if args else None
    if event is None:
        return 0
    started = time.monotonic()
    output = run_with_deadline(
        lambda result: _handle(hooks, event, sys.stdin.buffer, environ, result),
        name=f"hook-{hooks.agent}-{event}",
        seconds=deadline_seconds(DEADLINE_SECONDS, environ),
    )
    if output is None:
        _deadline_exit(hooks, environ, event, time.monotonic() - started)
    exit_with(output)


def _deadline_exit(
    hooks: AgentHooks, environ: Mapping[str, str], event: str, elapsed: float
) -> NoReturn:
    """Give up: the worker may be stuck in native code, so leave without waiting for it."""
    try:
        root = discover_root(None, environ, Path(environ.get(hooks.project_env) or os.getcwd()))
        log(Layout(root), hooks.agent, "WARNING", f"hook {event}: gave up after {elapsed:.1f} s")
    finally:
        exit_with(_nothing(hooks, event))


def _nothing(hooks: AgentHooks, event: str) -> str:
    try:
        return hooks.render(event, "")
    except Exception:
        return ""
