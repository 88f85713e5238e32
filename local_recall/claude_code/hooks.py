"""Claude Code hooks: `local-recall hook session-start | user-prompt-submit | session-end`.

A hook runs on every prompt, so this module is light: json, socket and our own light modules
(hook_input: stdin; hook_settings: the cached settings, tomllib and repo/config.py only on a
cache miss; hook_context: what to inject; query_client: the daemon). LanceDB, numpy, yaml and
the MCP SDK are only imported on the fallback path, when no daemon answers.

Fail open, always: whatever happens (garbage on stdin, no daemon, a broken index, a corrupt
config, a deadline), the hook exits 0 and prints either nothing or one complete JSON object, so
the user's prompt is never blocked or delayed past our own deadline. Problems go to
local-recall/recall.log. Details: docs/hooks.md.

Values are typed NamedTuples, not dataclasses: cheaper to create at import (see hook_context.py).
"""

# No `from __future__ import annotations` here: NamedTuple turns string annotations into
# ForwardRefs, compiling each one at import (~0.25 ms a field) on every prompt.

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from local_recall.claude_code.hook_context import (
    MAX_CONTEXT_CHARS,
    SESSION_CANDIDATES,
    Note,
    note_from_json,
    notes_from_json,
    prompt_context,
    prompt_query,
    rank_for_session,
    render_session_context,
)
from local_recall.claude_code.hook_input import (
    MAX_INPUT_BYTES,
    HookInput,
    parse_hook_input,
    read_stdin,
)
from local_recall.claude_code.hook_settings import HookSettings, hook_root, read_hook_settings
from local_recall.claude_code.summary_context import (
    SummaryNote,
    pick_summaries,
    render_summaries,
    summaries_from_json,
)
from local_recall.daemon.query_client import ask, daemon_sockets
from local_recall.repo.git_head import read_git_head
from local_recall.repo.layout import RECALL_DIRNAME, Layout, discover_root, resolve_layout
from local_recall.search.limits import MAX_LIMIT

if TYPE_CHECKING:
    from local_recall.recall import Recall

EVENTS = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "session-end": "SessionEnd",
    "pre-compact": "PreCompact",
}
# Our own deadlines, well inside Claude Code's timeouts (30 s for prompts; SessionEnd hooks
# share 1.5 s). Past them the hook exits 0 without output.
DEADLINE_SECONDS = {
    "SessionStart": 8.0,
    "UserPromptSubmit": 8.0,
    "SessionEnd": 1.0,
    "PreCompact": 1.0,  # compaction must never wait for us
}
SESSION_END_ASK_SECONDS = 0.5
# Listing 10k memories takes the daemon longer than a search; SessionStart has the time.
SESSION_START_ASK_SECONDS = 2.0


# --- the hooks ------------------------------------------------------------------------------


class HookRun(NamedTuple):
    event: str
    root: Path
    environ: Mapping[str, str]
    payload: HookInput
    settings: HookSettings

    @property
    def layout(self) -> Layout:
        return resolve_layout(self.root, self.environ)  # a user cache if read-only here

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
    from local_recall.search.query_intent import has_nothing_to_look_up

    if has_nothing_to_look_up(query):  # "thanks", "continue": no socket request, no search
        return ""
    request = {
        "op": "search",
        "query": query,
        "limit": min(run.settings.search_limit, MAX_LIMIT),
        "min_score": run.settings.prompt_min_score,
        "with_body": True,
    }
    reply = ask(run.sockets, request, run.ask_timeout)
    if reply is None:
        _log(run.layout, "INFO", "no daemon answered; searching in-process")
        if run.settings.start_daemon:
            from local_recall.daemon.control import ensure_daemon

            ensure_daemon(run)  # so that the next prompt finds one
        notes = _search_in_process(run, query)
    elif reply.get("ok") is not True:
        _log(run.layout, "WARNING", f"daemon search failed: {reply.get('error')}")
        return ""
    else:
        notes = notes_from_json(reply.get("hits"))
    if not run.settings.inject_unreviewed:  # [review] inject_unreviewed
        notes = [note for note in notes if not note.unreviewed]
    return prompt_context(
        notes, budget_tokens=run.settings.prompt_tokens, min_score=run.settings.prompt_min_score
    )


def session_start(run: HookRun) -> str:
    source = run.payload.source or "startup"
    branch = read_git_head(run.root).branch
    request = {
        "op": "index_summary",
        "source": source,
        "limit": SESSION_CANDIDATES,
        "summaries": run.settings.summaries_count,
        "session_id": run.payload.session_id or "",
        "branch": branch,
    }
    reply = ask(run.sockets, request, max(run.ask_timeout, SESSION_START_ASK_SECONDS))
    if reply is None:
        if run.settings.start_daemon:
            from local_recall.daemon.control import ensure_daemon

            ensure_daemon(run)  # for the next prompts; never waited for
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
    if not run.settings.inject_unreviewed:
        notes = [note for note in notes if not note.unreviewed]
    summaries = _summaries_context(run, source, branch, reply)
    index = render_session_context(
        notes,
        total=total,
        source=source,
        budget_tokens=run.settings.session_start_tokens,
        max_chars=MAX_CONTEXT_CHARS - len(summaries) - 1,
    )
    return "\n".join(part for part in (summaries, index) if part)


def _summaries_context(
    run: HookRun, source: str, branch: str | None, reply: Mapping[str, Any] | None
) -> str:
    """Session summaries before the index (summary_context.py): the daemon's pick, or the
    files' when no daemon answered."""
    if run.settings.summaries_count <= 0 or run.settings.summaries_tokens <= 0:
        return ""
    if reply is None:
        picked = _summaries_in_process(run, source, branch)
    else:
        picked = summaries_from_json(reply.get("summaries"))
    return render_summaries(
        picked,
        source=source,
        branch=branch,
        budget_tokens=run.settings.summaries_tokens,
        max_chars=MAX_CONTEXT_CHARS // 2,
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
        from local_recall.daemon.control import spawn_detached

        spawn_detached(run, ["sync", *(["--ended", path] if path else [])])
        _log(run.layout, "INFO", f"no daemon answered at {run.event}; started `local-recall sync`")
    return ""


def pre_compact(run: HookRun) -> str:
    """Ask for the session's summary now, before compaction drops the conversation: the same
    hand-over as SessionEnd. Returns at once; compaction never waits for the summary."""
    return session_end(run)


HANDLERS: dict[str, Callable[[HookRun], str]] = {
    "SessionStart": session_start,
    "UserPromptSubmit": user_prompt_submit,
    "SessionEnd": session_end,
    "PreCompact": pre_compact,
}


def hook_output(event: str, context: str) -> str:
    """The whole stdout of a hook: one JSON object, or nothing."""
    if not context or event in ("SessionEnd", "PreCompact"):
        return ""
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}},
        ensure_ascii=False,
    )


# --- fallback: the library in this process --------------------------------------------------


def _open_recall(run: HookRun) -> "Recall":
    from local_recall.logs import log_to_repo
    from local_recall.recall import Recall
    from local_recall.repo.config import load_config_or_defaults
    from local_recall.settings import Settings

    # A broken config.toml must not switch memory off: defaults, with LOCAL_RECALL_* applied.
    settings = Settings(root=run.root, environ=dict(run.environ))
    config, _ = load_config_or_defaults(
        settings.layout.config_path, settings.environ, user_path=settings.user_config_path
    )
    recall = Recall(settings, config)
    log_to_repo(recall)
    return recall


def _search_in_process(run: HookRun, query: str) -> list[Note]:
    from local_recall.search.query import SearchQuery

    # The files and the vector cache, never the index: importing lancedb would cost ~2 s of
    # the prompt's time. Candidates by word coverage, fuzzy match and cosine (the query is
    # embedded: ~0.6 s cold), scored by the same calibrated relevance as the daemon's, so the
    # same threshold decides alike. A hook never re-indexes; the result says it is degraded.
    wanted = SearchQuery(
        query,
        limit=min(run.settings.search_limit, MAX_LIMIT),
        min_score=run.settings.prompt_min_score,
    )
    result = _open_recall(run).query(wanted, sync=False, use_index=False)
    notes = [note_from_json(hit.to_json(with_body=True)) for hit in result.hits]
    return [note for note in notes if note is not None]


def _summary_in_process(run: HookRun, source: str) -> tuple[int, list[Note]]:
    from local_recall.daemon.query_server import memory_note

    recall = _open_recall(run)
    memories = recall.list()
    lives = recall.lifecycle.life_of(memories)  # the cached snapshot: no git on the hook path
    notes = [memory_note(m, life) for m, life in zip(memories, lives, strict=True)]
    return len(notes), rank_for_session(notes, source)[:SESSION_CANDIDATES]


def _summaries_in_process(run: HookRun, source: str, branch: str | None) -> list[SummaryNote]:
    from local_recall.daemon.query_server import summary_note

    found = [summary_note(m) for m in _open_recall(run).session_summaries()]
    return pick_summaries(
        found,
        source=source,
        session_id=run.payload.session_id or "",
        branch=branch,
        count=run.settings.summaries_count,
    )


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
    if not (root / RECALL_DIRNAME).is_dir():
        return  # local-recall is not set up in this repo: stay silent
    layout = resolve_layout(root, environ)
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
    """Run one hook and end the process with status 0 (`os._exit`, also after a deadline);
    returns 0 only when there is nothing to do. Meant for the `local-recall hook` process,
    not to be called inside another program."""
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
    # Nothing is left to flush (stdout was written with os.write, the log handler flushes every
    # record), so the interpreter's teardown is skipped: a few ms of module clean-up on every
    # prompt, and ~1 s of stopping lancedb's and onnxruntime's threads after the fallback.
    os._exit(0)


def _deadline_exit(environ: Mapping[str, str], event: str, elapsed: float) -> None:
    """Give up: the worker may be stuck in native code, so leave without waiting for it."""
    try:
        root = discover_root(None, environ, Path(environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()))
        _log(
            resolve_layout(root, environ), "WARNING", f"hook {event}: gave up after {elapsed:.1f} s"
        )
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
