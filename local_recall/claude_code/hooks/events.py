"""Claude Code hooks: `local-recall hook session-start | user-prompt-submit | session-end |
pre-compact`. Claude Code's side only: its event names and time limits, its stdin JSON
(payload.py), where it says the project is ($CLAUDE_PROJECT_DIR), and its output shape
(`hookSpecificOutput.additionalContext`). What a hook answers is the same for every agent
(hooks/answers.py: the daemon, else the library's ContextService in this process).

A hook runs on every prompt, so this module is light: json, socket and our own light modules.
LanceDB, numpy, yaml and the MCP SDK are only imported on the fallback path, when no daemon
answers.

Fail open, always: whatever happens (garbage on stdin, no daemon, a broken index, a corrupt
config, a deadline), the hook exits 0 and prints either nothing or one complete JSON object, so
the user's prompt is never blocked or delayed past our own deadline. Problems go to
local-recall/recall.log. Details: docs/hooks.md.
"""

import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn

from local_recall.claude_code.hooks.guard import marker_dir
from local_recall.claude_code.hooks.handoff import claim_as_command, guard_missed
from local_recall.claude_code.hooks.payload import (
    MAX_INPUT_BYTES,
    HookInput,
    parse_hook_input,
    read_stdin,
)
from local_recall.context.hook_settings import read_hook_settings
from local_recall.hooks.answers import (
    HookRun,
    answer_prompt_command,
    answer_session_start,
    hand_over_transcript,
    log,
)
from local_recall.hooks.process import deadline_seconds, exit_with, run_with_deadline
from local_recall.repo.layout import RECALL_DIRNAME, discover_root, resolve_layout

STARTED = time.time()  # ~ when this hook process started (its first import of us)
GUARD_MISSED = (
    "hook user-prompt-submit ran although the MCP server answers this session's prompts: the "
    "shell guard did not stop it, so every prompt pays a Python start (docs/hooks.md)"
)
AGENT = "claude_code"
EVENTS = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "session-end": "SessionEnd",
    "pre-compact": "PreCompact",
}
# Our own deadlines, well inside Claude Code's timeouts (30 s for prompts; SessionEnd hooks
# share 1.5 s). Past them the hook exits 0 without output. $LOCAL_RECALL_HOOK_DEADLINE_SECONDS
# replaces them (hooks/process.py).
DEADLINE_SECONDS = {
    "SessionStart": 8.0,
    "UserPromptSubmit": 8.0,
    "SessionEnd": 1.0,
    "PreCompact": 1.0,  # compaction must never wait for us
}


# --- the hooks: Claude Code's fields in, the shared answers out ------------------------------


def user_prompt_submit(run: HookRun, payload: HookInput) -> str:
    # The MCP server's handler may answer this prompt too (handoff.py); this process was
    # exec'd by the guard's shell, so its parent is Claude Code.
    directory = marker_dir(run.environ, os.getppid())
    if guard_missed(directory, STARTED):
        log(run.layout, AGENT, "WARNING", GUARD_MISSED)
    prompt_id = payload.prompt_id or ""
    return answer_prompt_command(
        run,
        payload.prompt or "",
        session_id=payload.session_id or "",
        prompt_id=prompt_id,
        claim=lambda: claim_as_command(directory, prompt_id),
    )


def session_start(run: HookRun, payload: HookInput) -> str:
    return answer_session_start(run, payload.source or "startup", payload.session_id or "")


def session_end(run: HookRun, payload: HookInput) -> str:
    """Hand the finished transcript to the pipeline and return at once (1.5 s shared budget)."""
    hand_over_transcript(run, payload.transcript_path or "")
    return ""


def pre_compact(run: HookRun, payload: HookInput) -> str:
    """Ask for the session's summary now, before compaction drops the conversation: the same
    hand-over as SessionEnd. Returns at once; compaction never waits for the summary."""
    return session_end(run, payload)


HANDLERS: dict[str, Callable[[HookRun, HookInput], str]] = {
    "SessionStart": session_start,
    "UserPromptSubmit": user_prompt_submit,
    "SessionEnd": session_end,
    "PreCompact": pre_compact,
}


def hook_output(event: str, context: str, host: str = "claude") -> str:
    """The whole stdout of a hook: one JSON object in the shape the program that ran it
    accepts, or nothing (docs/agents.md). VS Code and Cursor cannot add context on a prompt;
    Cursor's session start takes `additional_context`, Copilot CLI reads a top-level
    `additionalContext` only."""
    if not context or event in ("SessionEnd", "PreCompact") or not adds_context(event, host):
        return ""
    if host == "cursor":
        return json.dumps({"additional_context": context}, ensure_ascii=False)
    if host == "copilot":
        return json.dumps({"additionalContext": context}, ensure_ascii=False)
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}},
        ensure_ascii=False,
    )


def adds_context(event: str, host: str) -> bool:
    """Whether anything the hook prints for `event` can reach the model under `host`: when it
    cannot, the hook does no work at all (no search on every VS Code prompt)."""
    return not (event == "UserPromptSubmit" and host in ("vscode", "cursor"))


def hook_host(payload: HookInput, environ: Mapping[str, str], root: Path) -> str:
    """Copilot CLI runs .claude/settings.json hooks too and says so in COPILOT_CLI (its own
    .github/hooks ones also get COPILOT_HOOK_DIR); its payload has no transcript_path, which
    Claude Code always sends (so a `claude` started inside a Copilot shell, which inherits
    COPILOT_CLI, is still Claude Code). When `init --agent copilot` wired Copilot, its own hooks
    answer and these stay silent ("skip"): never the same memories twice."""
    copilot = environ.get("COPILOT_CLI") == "1" and not environ.get("COPILOT_HOOK_DIR")
    if copilot and payload.transcript_path is None:
        if (root / ".github" / "hooks" / "local-recall.json").exists():
            return "skip"
        return "copilot"
    return payload.host


def hook_root(payload_cwd: str | None, environ: Mapping[str, str], cwd: Path) -> Path:
    """$LOCAL_RECALL_ROOT, else the git top level of $CLAUDE_PROJECT_DIR, of the cwd Claude
    Code reported, or of our own cwd."""
    start = environ.get("CLAUDE_PROJECT_DIR") or payload_cwd or ""
    base = Path(start) if start and os.path.isabs(start) else cwd
    try:
        return discover_root(None, environ, base)
    except (OSError, ValueError):  # a NUL byte, or a path too long for the kernel
        return discover_root(None, environ, cwd)


# --- entry point ----------------------------------------------------------------------------


def _handle(event: str, stdin: Any, environ: Mapping[str, str], result: list[str]) -> None:
    raw, truncated = read_stdin(stdin)
    payload = parse_hook_input(raw, truncated=truncated)
    root = hook_root(payload.cwd, environ, Path.cwd())
    if not (root / RECALL_DIRNAME).is_dir():
        return  # local-recall is not set up in this repo: stay silent
    layout = resolve_layout(root, environ)  # a user cache if the checkout is read-only
    settings = read_hook_settings(layout, environ)
    if settings.config_error:
        log(layout, AGENT, "WARNING", f"hook {event}: using defaults: {settings.config_error}")
    if truncated:
        log(
            layout,
            AGENT,
            "INFO",
            f"hook {event}: stdin over {MAX_INPUT_BYTES} bytes; used its start",
        )
    host = hook_host(payload, environ, root)
    if host == "skip" or not adds_context(event, host):
        return
    if host != "claude" and event in ("SessionEnd", "PreCompact"):
        return  # another program's transcript: the pipeline reads Claude Code's only
    run = HookRun(AGENT, event, root, environ, settings)
    try:
        result.append(hook_output(event, HANDLERS[event](run, payload), host))
    except BaseException:
        log(layout, AGENT, "WARNING", f"hook {event} failed", exc_info=True)


def run_hook(args: list[str]) -> int:
    """Run one hook and end the process with status 0 (`os._exit`, also after a deadline);
    returns 0 only when there is nothing to do. Meant for the `local-recall hook` process,
    not to be called inside another program."""
    environ = os.environ
    if environ.get("LOCAL_RECALL_EXTRACTOR"):
        return 0  # our own `claude -p` extraction run: never recurse into memory
    event = EVENTS.get(args[0]) if args else None
    if event is None:
        return 0
    started = time.monotonic()
    output = run_with_deadline(
        lambda result: _handle(event, sys.stdin.buffer, environ, result),
        name=f"hook-{event}",
        seconds=deadline_seconds(DEADLINE_SECONDS[event], environ),
    )
    if output is None:
        _deadline_exit(environ, event, time.monotonic() - started)
    exit_with(output)


def _deadline_exit(environ: Mapping[str, str], event: str, elapsed: float) -> NoReturn:
    """Give up: the worker may be stuck in native code, so leave without waiting for it."""
    try:
        root = discover_root(None, environ, Path(environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()))
        log(
            resolve_layout(root, environ),
            AGENT,
            "WARNING",
            f"hook {event}: gave up after {elapsed:.1f} s",
        )
    finally:
        os._exit(0)
