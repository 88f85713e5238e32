"""Claude Code hooks: `local-recall hook session-start | user-prompt-submit | session-end`.

A hook runs on every prompt, so this module is light: json, socket, tomllib and our own light
modules (layout, config, context, query_client). LanceDB, numpy, yaml and the MCP SDK are only
imported on the fallback path, when no daemon answers.

Fail open, always: whatever happens (garbage on stdin, no daemon, a broken index, a corrupt
config, a deadline), the hook exits 0 and prints either nothing or one complete JSON object, so
the user's prompt is never blocked or delayed past our own deadline. Problems go to
local-recall/recall.log. Details: docs/hooks.md.

Values are typed NamedTuples, not dataclasses: cheaper to create at import (see context.py).
"""

# No `from __future__ import annotations` here: NamedTuple turns string annotations into
# ForwardRefs, compiling each one at import (~0.25 ms a field) on every prompt.

import contextlib
import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from local_recall.claude_code.hook_context import (
    SESSION_CANDIDATES,
    Note,
    note_from_json,
    notes_from_json,
    prompt_context,
    prompt_query,
    rank_for_session,
    render_session_context,
)
from local_recall.daemon.query_client import ask, daemon_sockets
from local_recall.repo.layout import RECALL_DIRNAME, Layout, discover_root

if TYPE_CHECKING:
    from local_recall.recall import Recall

EVENTS = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "session-end": "SessionEnd",
}
# What we read from stdin and parse: a 10 MB prompt is drained, not loaded (the search only
# uses the start of a prompt anyway; see salvage_string_field).
MAX_INPUT_BYTES = 1_000_000
# Our own deadlines, well inside Claude Code's timeouts (30 s for prompts; SessionEnd hooks
# share 1.5 s). Past them the hook exits 0 without output.
DEADLINE_SECONDS = {"SessionStart": 8.0, "UserPromptSubmit": 8.0, "SessionEnd": 1.0}
SESSION_END_ASK_SECONDS = 0.5
# Listing 10k memories takes the daemon longer than a search; SessionStart has the time.
SESSION_START_ASK_SECONDS = 2.0


# --- input ----------------------------------------------------------------------------------


class HookInput(NamedTuple):
    cwd: str | None = None
    prompt: str | None = None
    source: str | None = None
    transcript_path: str | None = None
    session_id: str | None = None
    truncated: bool = False


def _text(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return _clean(value) if isinstance(value, str) else None


def parse_hook_input(raw: bytes, *, truncated: bool = False) -> HookInput:
    """Claude Code's stdin JSON as plain values; fields of the wrong type are treated as absent.
    Input cut at MAX_INPUT_BYTES is not valid JSON: the fields before the cut are salvaged."""
    if truncated:
        text = raw.decode("utf-8", errors="ignore")
        return HookInput(
            cwd=salvage_string_field(text, "cwd"),
            prompt=salvage_string_field(text, "prompt"),
            source=salvage_string_field(text, "source"),
            transcript_path=salvage_string_field(text, "transcript_path"),
            session_id=salvage_string_field(text, "session_id"),
            truncated=True,
        )
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than ~1000
        return HookInput()
    if not isinstance(data, dict):
        return HookInput()
    return HookInput(
        cwd=_text(data, "cwd"),
        prompt=_text(data, "prompt"),
        source=_text(data, "source"),
        transcript_path=_text(data, "transcript_path"),
        session_id=_text(data, "session_id"),
    )


_ESCAPE_TAIL = re.compile(r"(\\+)(u[0-9a-fA-F]{0,3})?$")


def _drop_partial_escape(text: str) -> str:
    """A JSON string body cut mid-escape (`\\`, `\\u12`) loses that unfinished escape."""
    match = _ESCAPE_TAIL.search(text)
    if match is None or len(match.group(1)) % 2 == 0:
        return text
    return text[: match.end(1) - 1]


def _clean(text: str) -> str:
    """Drop lone surrogates (`"\\ud800"` is valid JSON but cannot be encoded as UTF-8)."""
    return text.encode("utf-8", "ignore").decode("utf-8")


def salvage_string_field(text: str, key: str) -> str | None:
    """The value of a top-level string field from the start of a JSON object that was cut
    short; a value cut in the middle yields its beginning. None when the key is not there."""
    match = re.search(r'"' + re.escape(key) + r'"\s*:\s*"', text)
    if match is None:
        return None
    rest = text[match.end() :]
    end = re.search(r'(?<!\\)(?:\\\\)*"', rest)
    body = rest[: end.end() - 1] if end else _drop_partial_escape(rest)
    try:
        value = json.loads('"' + body + '"')
    except ValueError:
        return None
    return _clean(value) if isinstance(value, str) else None


def read_stdin(stream: Any, limit: int = MAX_INPUT_BYTES) -> tuple[bytes, bool]:
    """Up to `limit` bytes of stdin, and whether there was more. The rest is read and dropped
    in small chunks so Claude Code never blocks on a full pipe; memory stays bounded."""
    chunks: list[bytes] = []
    size = 0
    truncated = False
    while True:
        chunk = stream.read(65536)
        if not chunk:
            break
        if size < limit:
            chunks.append(chunk[: limit - size])
            truncated = truncated or len(chunk) > limit - size
        else:
            truncated = True
        size += len(chunk)
    return b"".join(chunks), truncated


# --- settings --------------------------------------------------------------------------------


class HookSettings(NamedTuple):
    session_start_tokens: int = 1000
    prompt_tokens: int = 1500
    prompt_min_score: float = 0.35
    query_timeout_ms: int = 300
    start_daemon: bool = True
    search_limit: int = 10
    config_error: str | None = None


SETTINGS_CACHE = "hook-settings.json"


def settings_key(layout: Layout, environ: Mapping[str, str]) -> list[Any]:
    """What the settings depend on: config.toml's identity and the LOCAL_RECALL_* variables."""
    try:
        info = os.stat(layout.config_path)
        config: list[int] | None = [info.st_ino, info.st_mtime_ns, info.st_size]
    except OSError:
        config = None
    overrides = sorted([k, v] for k, v in environ.items() if k.startswith("LOCAL_RECALL_"))
    return [config, overrides]


def read_hook_settings(layout: Layout, environ: Mapping[str, str]) -> HookSettings:
    """The hook settings, from a small JSON cache in state/ while config.toml and the
    environment are unchanged: importing tomllib and the config schema costs more than the
    rest of a warm prompt hook."""
    key = settings_key(layout, environ)
    cache = layout.state_dir / SETTINGS_CACHE
    try:
        data = json.loads(cache.read_bytes())
        if data["key"] == key:
            return HookSettings(**data["settings"])
    except (OSError, ValueError, TypeError, KeyError):
        pass
    settings = load_hook_settings(layout, environ)
    if settings.config_error is None:
        from local_recall.repo.files import write_text_atomic

        with contextlib.suppress(Exception):  # a read-only checkout just re-reads next time
            write_text_atomic(cache, json.dumps({"key": key, "settings": settings._asdict()}))
    return settings


def load_hook_settings(layout: Layout, environ: Mapping[str, str]) -> HookSettings:
    """The hook settings from config.toml; a broken config gives the defaults (and the error,
    to log)."""
    from local_recall.errors import ConfigError
    from local_recall.repo.config import load_config

    try:
        config = load_config(layout.config_path, environ)
    except ConfigError as exc:
        return HookSettings(config_error=str(exc))
    hooks = config.section("hooks")
    return HookSettings(
        session_start_tokens=hooks["session_start_tokens"],
        prompt_tokens=hooks["prompt_tokens"],
        prompt_min_score=hooks["prompt_min_score"],
        query_timeout_ms=hooks["query_timeout_ms"],
        start_daemon=hooks["start_daemon"],
        search_limit=config.get("search", "default_limit"),
    )


def hook_root(payload_cwd: str | None, environ: Mapping[str, str], cwd: Path) -> Path:
    """$LOCAL_RECALL_ROOT, else the git top level of $CLAUDE_PROJECT_DIR, of the cwd Claude
    Code reported, or of our own cwd."""
    start = environ.get("CLAUDE_PROJECT_DIR") or payload_cwd or ""
    base = Path(start) if start and os.path.isabs(start) else cwd
    try:
        return discover_root(None, environ, base)
    except (OSError, ValueError):  # a NUL byte, or a path too long for the kernel
        return discover_root(None, environ, cwd)


# --- the hooks ------------------------------------------------------------------------------


class HookRun(NamedTuple):
    event: str
    root: Path
    environ: Mapping[str, str]
    payload: HookInput
    settings: HookSettings

    @property
    def layout(self) -> Layout:
        return Layout(self.root)

    @property
    def sockets(self) -> list[Path]:
        return daemon_sockets(self.root, self.layout.state_dir, self.environ)

    @property
    def ask_timeout(self) -> float:
        return self.settings.query_timeout_ms / 1000


def user_prompt_submit(run: HookRun) -> str:
    query = prompt_query(run.payload.prompt or "")
    if query is None or run.settings.prompt_tokens <= 0:
        return ""
    request = {
        "op": "search",
        "query": query,
        "limit": run.settings.search_limit,
        "min_score": run.settings.prompt_min_score,
        "with_body": True,
    }
    reply = ask(run.sockets, request, run.ask_timeout)
    if reply is None:
        _log(run.layout, "INFO", "no daemon answered; searching in-process")
        if run.settings.start_daemon:
            from local_recall.daemon.runtime import ensure_daemon

            ensure_daemon(run.root, run.environ)  # so that the next prompt finds one
        notes = _search_in_process(run, query)
    elif reply.get("ok") is not True:
        _log(run.layout, "WARNING", f"daemon search failed: {reply.get('error')}")
        return ""
    else:
        notes = notes_from_json(reply.get("hits"))
    return prompt_context(
        notes, budget_tokens=run.settings.prompt_tokens, min_score=run.settings.prompt_min_score
    )


def session_start(run: HookRun) -> str:
    source = run.payload.source or "startup"
    request = {"op": "index_summary", "source": source, "limit": SESSION_CANDIDATES}
    reply = ask(run.sockets, request, max(run.ask_timeout, SESSION_START_ASK_SECONDS))
    if reply is None:
        if run.settings.start_daemon:
            from local_recall.daemon.runtime import ensure_daemon

            ensure_daemon(run.root, run.environ)  # for the next prompts; never waited for
        if run.settings.session_start_tokens <= 0:
            return ""
        total, notes = _summary_in_process(run, source)
    elif reply.get("ok") is not True:
        _log(run.layout, "WARNING", f"daemon index_summary failed: {reply.get('error')}")
        return ""
    else:
        raw_total = reply.get("total")
        notes = notes_from_json(reply.get("notes"))
        total = raw_total if isinstance(raw_total, int) else len(notes)
    if run.settings.session_start_tokens <= 0:
        return ""
    return render_session_context(
        notes, total=total, source=source, budget_tokens=run.settings.session_start_tokens
    )


def session_end(run: HookRun) -> str:
    """Hand the finished transcript to the pipeline and return at once (1.5 s shared budget)."""
    path = run.payload.transcript_path or ""
    reply = ask(
        run.sockets,
        {"op": "transcript_done", "path": path},
        min(run.ask_timeout, SESSION_END_ASK_SECONDS),
    )
    if reply is None:
        from local_recall.daemon.runtime import spawn_detached

        spawn_detached(run.root, run.environ, ["sync"])
        _log(run.layout, "INFO", "no daemon answered at SessionEnd; started `local-recall sync`")
    return ""


HANDLERS: dict[str, Callable[[HookRun], str]] = {
    "SessionStart": session_start,
    "UserPromptSubmit": user_prompt_submit,
    "SessionEnd": session_end,
}


def hook_output(event: str, context: str) -> str:
    """The whole stdout of a hook: one JSON object, or nothing."""
    if not context or event == "SessionEnd":
        return ""
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}},
        ensure_ascii=False,
    )


# --- fallback: the library in this process --------------------------------------------------


def _open_recall(run: HookRun) -> "Recall":
    from local_recall.recall import Recall, Settings

    return Recall.open(settings=Settings(root=run.root, environ=dict(run.environ)))


def _search_in_process(run: HookRun, query: str) -> list[Note]:
    from local_recall.errors import RecallError

    recall = _open_recall(run)
    notes: list[Note] = []
    # The files alone (word match + fuzzy), never the index: importing lancedb and loading the
    # model would cost ~2 s of the prompt's time, and the daemon just started for the next
    # prompts answers with hybrid search. A hook never embeds or re-indexes either.
    hits = recall.search(
        query,
        limit=run.settings.search_limit,
        min_score=run.settings.prompt_min_score,
        sync=False,
        use_index=False,
    )
    for hit in hits:
        data = hit.to_json()
        with contextlib.suppress(RecallError):
            data["body"] = recall.get(hit.id).body
        note = note_from_json(data)
        if note is not None:
            notes.append(note)
    return notes


def _summary_in_process(run: HookRun, source: str) -> tuple[int, list[Note]]:
    from local_recall.daemon.query_server import memory_note

    memories = _open_recall(run).list()
    notes = [memory_note(memory) for memory in memories]
    return len(notes), rank_for_session(notes, source)[:SESSION_CANDIDATES]


# --- logging (only configured when there is something to say) -------------------------------


def _log(layout: Layout, level: str, message: str, *, exc_info: bool = False) -> None:
    try:
        import logging

        from local_recall.logs import configure_logging

        logger = logging.getLogger("local_recall.claude_code.hooks")
        if not logging.getLogger("local_recall").handlers:
            configure_logging(layout, "INFO")
        logger.log(logging.getLevelName(level), message, exc_info=exc_info)
    except Exception:  # noqa: S110 - logging must never be why a hook fails
        pass


# --- entry point ----------------------------------------------------------------------------


def _handle(event: str, stdin: Any, environ: Mapping[str, str], result: list[str]) -> None:
    raw, truncated = read_stdin(stdin)
    payload = parse_hook_input(raw, truncated=truncated)
    root = hook_root(payload.cwd, environ, Path.cwd())
    layout = Layout(root)
    if not (root / RECALL_DIRNAME).is_dir():
        return  # local-recall is not set up in this repo: stay silent
    settings = read_hook_settings(layout, environ)
    if settings.config_error:
        _log(layout, "WARNING", f"hook {event}: using defaults: {settings.config_error}")
    if truncated:
        _log(layout, "INFO", f"hook {event}: stdin over {MAX_INPUT_BYTES} bytes; used its start")
    run = HookRun(event, root, environ, payload, settings)
    try:
        result.append(hook_output(event, HANDLERS[event](run)))
    except BaseException:
        _log(layout, "WARNING", f"hook {event} failed", exc_info=True)


def run_hook(args: list[str]) -> int:
    """Run one hook; returns 0 — or ends the process with status 0 itself (`os._exit`) after
    a deadline or once the in-process fallback has loaded the library. Meant for the
    `local-recall hook` process, not to be called inside another program."""
    environ = os.environ
    if environ.get("LOCAL_RECALL_EXTRACTOR"):
        return 0  # our own `claude -p` extraction run: never recurse into memory
    event = EVENTS.get(args[0]) if args else None
    if event is None:
        return 0
    result: list[str] = []

    def work() -> None:
        # fail open: nothing may reach stdout or stderr, whatever goes wrong
        with contextlib.suppress(BaseException):
            _handle(event, sys.stdin.buffer, environ, result)

    worker = threading.Thread(target=work, name=f"hook-{event}", daemon=True)
    started = time.monotonic()
    worker.start()
    worker.join(DEADLINE_SECONDS[event])
    if worker.is_alive():
        _deadline_exit(environ, event, time.monotonic() - started)
    output = result[0] if result else ""
    if output:
        _write_all(output.encode("utf-8"))
    if "local_recall.recall" in sys.modules:
        # The in-process fallback ran: tearing down lancedb's and onnxruntime's threads at
        # interpreter exit takes ~1 s, and there is nothing left to flush (the log handler
        # flushes every record, stdout was written with os.write).
        os._exit(0)
    return 0


def _deadline_exit(environ: Mapping[str, str], event: str, elapsed: float) -> None:
    """Give up: the worker may be stuck in native code, so leave without waiting for it."""
    try:
        root = discover_root(None, environ, Path(environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()))
        _log(Layout(root), "WARNING", f"hook {event}: gave up after {elapsed:.1f} s")
    finally:
        os._exit(0)


def _write_all(data: bytes) -> None:
    """One complete write of the whole output (never half a JSON object)."""
    try:
        view = memoryview(data)
        while view:
            written = os.write(1, view)
            view = view[written:]
    except OSError:
        pass  # Claude Code stopped listening: nothing more to do
