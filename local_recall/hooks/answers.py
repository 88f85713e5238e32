"""What a hook answers, for any agent, by one path: the daemon's whole answer over its socket
(op `answer`: daemon/hook_requests.py), or — when no daemon answers — the same answer computed
in this process (context/hook_answers.py over the `ContextService` of context/service.py). A
long-lived process (the MCP server's prompt tool) decides with its own warm search first.

    run = HookRun("claude_code", "UserPromptSubmit", root, environ, read_hook_settings(...))
    text = answer_prompt_command(run, prompt)   # "" or one <local-recall-context> block

Light on the warm path: json, socket and a few small modules. The daemon searches, picks the
tiers, reads the session's record and renders the text; this process only shows it and
appends the record's line. The library (`Recall`, the model, the context modules) is only
imported when no daemon answers. A daemon that does not know the `answer` op (started by an
older version) is asked to stop, and this process answers: the next prompt starts this
version's. Errors propagate: the agent's adapter catches everything, logs it and exits 0
(fail open).
"""

# No `from __future__ import annotations` here: NamedTuple turns string annotations into
# ForwardRefs, compiling each one at import (~0.25 ms a field) on every prompt.

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeGuard

from local_recall.context.envelope import is_context
from local_recall.context.hook_settings import HookSettings, hook_environment
from local_recall.daemon.query_client import Reply, ask, daemon_sockets
from local_recall.repo.layout import Layout, resolve_layout

if TYPE_CHECKING:
    from local_recall.context.hook_answers import FindNotes, PromptAnswer
    from local_recall.context.notes import Note
    from local_recall.context.prompt import PromptAsk
    from local_recall.context.service import ContextService
    from local_recall.repo.config import Config
    from local_recall.settings import Settings

SESSION_END_ASK_SECONDS = 0.5
# Listing 10k memories takes the daemon longer than a search; SessionStart has the time.
SESSION_START_ASK_SECONDS = 2.0
# Of a prompt, what the daemon is sent: far more than a search reads (its first 2,000
# characters of the user's words, after any context block an agent put before them), and
# inside the socket's 1 MB request limit as JSON even if every character is escaped (6 bytes).
MAX_PROMPT_CHARS = 100_000


class HookRun(NamedTuple):
    """One hook process: which agent and event (for the log), the repository, the process's
    environment and the hook settings."""

    agent: str  # the adapter's package name: its log lines come from local_recall.<agent>.hooks
    event: str
    root: Path
    environ: Mapping[str, str]
    settings: HookSettings

    @property
    def layout(self) -> Layout:
        return resolve_layout(self.root, self.environ)  # a user cache if read-only here

    @property
    def sockets(self) -> Iterator[Path]:
        return daemon_sockets(self.root, self.layout.state_dir, self.environ)

    @property
    def ask_timeout(self) -> float:
        return self.settings.query_timeout_ms / 1000

    def report(self, level: str, message: str) -> None:
        log(self.layout, self.agent, level, message)


# What a hook does when no daemon answers: search in its own process. A hook process builds a
# ContextService for that one prompt (context_in_process); a long-lived one (the MCP server's
# prompt tool) keeps a warm one.
InProcess = Callable[[HookRun, "PromptAsk"], "list[Note]"]
# Where two handlers may answer one prompt (claude_code/hooks/handoff.py): whether this one
# won it. The loser shows nothing and records nothing.
Claim = Callable[[], bool]


def answer_prompt_command(
    run: HookRun,
    prompt: str,
    *,
    session_id: str = "",
    prompt_id: str = "",
    claim: Claim | None = None,
) -> str:
    """A hook process's answer to `prompt`: the daemon's, else its own (answer_prompt)."""
    return answer_prompt(run, prompt, session_id=session_id, prompt_id=prompt_id, claim=claim)


def answer_prompt(
    run: HookRun,
    prompt: str,
    in_process: InProcess | None = None,
    *,
    session_id: str = "",
    prompt_id: str = "",
    claim: Claim | None = None,
    warm: "FindNotes | None" = None,
) -> str:
    """The memories that bear on `prompt`, within the prompt budget; "" for none. Sure ones in
    full, the best others as pointers by rank, and (given `session_id`) none this session
    already saw: what each prompt was shown goes to the session's record
    (learning/shown_log.py). `warm`: a long-lived process's own warm search (the MCP server's),
    which decides here before any daemon is asked; None from it: not ready, the daemon
    answers. `in_process`: how this process searches when no daemon answers (default: a
    ContextService for this one prompt). `claim`: see `Claim`."""
    if run.settings.prompt_tokens <= 0 or not prompt.strip():
        return ""
    server = warm is not None  # an MCP server asks: its tools can open a pointer
    if warm is not None:
        decided = _decide_here(run, prompt, warm, session_id, prompt_id, tools=True)
        if decided is not None:
            return _shown(run, decided.text, _record(decided, session_id), claim)
    request = {
        "op": "answer",
        "kind": "prompt",
        "agent": run.agent,
        "prompt": prompt[:MAX_PROMPT_CHARS],
        "session_id": session_id,
        "prompt_id": prompt_id,
        "hook_env": hook_environment(run.environ),
        "tools": server,
    }
    reply = ask(run.sockets, request, run.ask_timeout, root=run.root)
    if reply is not None and not _unknown_op(reply):
        return _daemons_answer(run, reply, session_id, claim)
    if reply is None:
        run.report("INFO", "no daemon answered; searching in-process")
    _no_answer_from_daemon(run, reply)

    def search(wanted: "PromptAsk") -> "list[Note]":
        if in_process is None:
            return context_in_process(run).prompt_notes(wanted)
        return in_process(run, wanted)

    from local_recall.context.hook_answers import tools_ready

    tools = tools_ready(run.agent, server=server)
    decided = _decide_here(run, prompt, search, session_id, prompt_id, tools=tools)
    if decided is None:
        return ""
    return _shown(run, decided.text, _record(decided, session_id), claim)


def _daemons_answer(run: HookRun, reply: Reply, session_id: str, claim: Claim | None) -> str:
    """The daemon's reply to an `answer` request, shown and recorded here."""
    if reply.get("ok") is not True:
        run.report("WARNING", f"daemon answer failed: {reply.get('error')}")
        return ""
    text, shown, key = reply.get("text"), reply.get("shown"), reply.get("session_key")
    if not _is_block(text, run):
        return ""
    record = (key, shown) if isinstance(key, str) and isinstance(shown, str) else None
    return _shown(run, text, record if session_id else None, claim)


def _decide_here(
    run: HookRun,
    prompt: str,
    find: "FindNotes",
    session_id: str,
    prompt_id: str,
    *,
    tools: bool,
) -> "PromptAnswer | None":
    """The answer decided in this process over `find`'s notes; None: `find` could not search."""
    from local_recall.context.hook_answers import prompt_answer

    return prompt_answer(
        prompt,
        run.settings,
        run.layout,
        find,
        run.report,
        session_id=session_id,
        prompt_id=prompt_id,
        tools=tools,
    )


def _record(answer: "PromptAnswer", session_id: str) -> tuple[str, str] | None:
    """The session record's (file key, line) for what `answer` shows; None: nothing to record."""
    if answer.shown is None or not session_id:
        return None
    from local_recall.learning.shown import session_key

    return session_key(session_id), answer.shown.to_line()


def _no_answer_from_daemon(run: HookRun, reply: Reply | None) -> None:
    """No daemon answered (`reply` None): start one for the next prompts. One that does not
    know the `answer` op: ask it to stop, so that the next prompt starts this version's."""
    if reply is None:
        _start_daemon(run)
        return
    from local_recall.daemon.control import ask_to_stop

    try:
        pid: int | None = ask_to_stop(run.layout)
    except OSError as exc:  # another user's daemon: it stays, this process answers
        run.report("WARNING", f"an older daemon could not be stopped: {exc}")
        return
    asked = f"asked it (pid {pid}) to stop" if pid else "no daemon holds the lock to stop"
    run.report(
        "INFO",
        f"the daemon predates this version's `answer` op: {asked}; answering in-process",
    )


def _is_block(text: object, run: HookRun) -> TypeGuard[str]:
    """Whether the daemon's text may be printed: context blocks as the renderers make them
    (anything else is a daemon gone wrong: nothing is shown, and the log says so)."""
    if not isinstance(text, str) or not text:
        return False
    if is_context(text):
        return True
    run.report("WARNING", "the daemon's answer is not context blocks: nothing shown")
    return False


def _shown(run: HookRun, text: str, record: tuple[str, str] | None, claim: Claim | None) -> str:
    """`text`, once this handler has the prompt's claim; `record` (the session's key, the line)
    appended to the session's record."""
    if not text or (claim is not None and not claim()):
        return ""
    if record is not None:
        from local_recall.learning.shown_log import record_shown

        record_shown(run.layout.state_dir, *record, run.report)
    return text


def _unknown_op(reply: Reply) -> bool:
    """A daemon started by an older version, which does not know the `answer` op."""
    error = reply.get("error")
    return reply.get("ok") is not True and isinstance(error, str) and error.startswith("unknown op")


def answer_session_start(run: HookRun, source: str, session_id: str) -> str:
    """The last session summaries of the branch, then an index of the memories; "" for none.
    `source`: startup, resume, clear or compact (context/session.py). The daemon's whole
    answer (`answer` op), else the same in this process."""
    from local_recall.daemon.session_env import claude_environment

    if source == "compact" and session_id:
        _open_span(run, session_id)
    request: dict[str, Any] = {
        "op": "answer",
        "kind": "session_start",
        "agent": run.agent,
        "source": source,
        "session_id": session_id,
        "hook_env": hook_environment(run.environ),
        "env": claude_environment(run.environ),  # the user's now, for the daemon's extraction
    }
    timeout = max(run.ask_timeout, SESSION_START_ASK_SECONDS)
    reply = ask(run.sockets, request, timeout, root=run.root)
    if reply is not None and reply.get("ok") is True:
        text = reply.get("text")
        return text if _is_block(text, run) else ""
    if reply is not None and not _unknown_op(reply):
        run.report("WARNING", f"daemon answer failed: {reply.get('error')}")
        return ""
    _no_answer_from_daemon(run, reply)
    settings = run.settings
    if settings.session_start_tokens <= 0:
        return ""
    from local_recall.context.hook_answers import session_ask, session_start_answer

    wanted = session_ask(settings, source, session_id, run.root)
    shown = settings.summaries_count if settings.summaries_tokens > 0 else 0
    listed = context_in_process(run, prompts=False)
    found = listed.session_notes(wanted._replace(summaries=shown))
    return session_start_answer(settings, wanted, found)


def _open_span(run: HookRun, session_id: str) -> None:
    """After /compact the session keeps its id but its context lost the memories shown so
    far: a new span of its record lets them be shown again (learning/shown.py)."""
    import time

    from local_recall.learning.shown import session_key, span_line
    from local_recall.learning.shown_log import record_shown

    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    line = span_line(at=at).to_line()
    record_shown(run.layout.state_dir, session_key(session_id), line, run.report)


def hand_over_transcript(run: HookRun, transcript_path: str) -> None:
    """A session ended or is being compacted: the daemon's pipeline takes the transcript (its
    summary is written now), else a detached `local-recall sync` does. Returns at once."""
    from local_recall.daemon.session_env import claude_environment

    reply = ask(
        run.sockets,
        {"op": "transcript_done", "path": transcript_path, "env": claude_environment(run.environ)},
        min(run.ask_timeout, SESSION_END_ASK_SECONDS),
        root=run.root,
    )
    if reply is None:
        from local_recall.daemon.control import spawn_detached

        spawn_detached(run, ["sync", *(["--ended", transcript_path] if transcript_path else [])])
        log(
            run.layout,
            run.agent,
            "INFO",
            f"no daemon answered at {run.event}; started `local-recall sync`",
        )


def _start_daemon(run: HookRun) -> None:
    if run.settings.start_daemon:
        from local_recall.daemon.control import ensure_daemon

        ensure_daemon(run)


# --- no daemon: the library in this process -------------------------------------------------


def context_in_process(run: HookRun, *, prompts: bool = True) -> "ContextService":
    """The ContextService on a Recall of this process: the files and the vector cache, never
    the index (importing lancedb would cost ~2 s of the prompt's time). Candidates by word
    coverage, fuzzy match and cosine (the query is embedded: the model loads in a thread from
    here on, while the library is imported and the files are read), scored by the same
    calibrated relevance as the daemon's, so the same threshold decides alike. `prompts`
    False: only listed (SessionStart), so no model is loaded."""
    from local_recall.repo.config import load_config_or_defaults
    from local_recall.settings import Settings

    # A broken config.toml must not switch memory off: defaults, with LOCAL_RECALL_* applied.
    settings = Settings(root=run.root, environ=dict(run.environ))
    config, _ = load_config_or_defaults(
        run.layout.config_path, settings.environ, user_path=settings.user_config_path
    )
    if prompts:
        settings = _loading_model(settings, config)

    from local_recall.context.service import ContextService
    from local_recall.logs import log_to_repo
    from local_recall.recall import Recall

    recall = Recall(settings, config)
    log_to_repo(recall)
    return ContextService(recall, use_index=False)


def _loading_model(settings: "Settings", config: "Config") -> "Settings":
    """`settings` whose embedder is the MiniLM model already loading in a thread, where the
    vector cache exists (without it the search never embeds the query). Loading it (~0.25 s
    of CPU, mostly onnxruntime's, much of it without the GIL) then overlaps the library's
    imports and the catalog's read instead of following them; the search waits for it on the
    embedder's own lock. Any failure is left to the search, which reports it as before."""
    import threading
    from dataclasses import replace

    from local_recall.search.embedders.minilm import MiniLMEmbedder

    try:
        embedder = settings.make_embedder(config)
    except Exception:  # the search meets the same error and degrades
        return settings
    if not isinstance(embedder, MiniLMEmbedder):
        return settings  # another provider: nothing to load (ollama is a server)
    state_dir = settings.layout.state_dir

    def load() -> None:
        try:
            from local_recall.search.vector_log import VECTORS_JSON

            if (state_dir / VECTORS_JSON).is_file():
                embedder.load()
        except Exception:  # noqa: S110 - the search loads it again and reports why
            pass

    threading.Thread(target=load, name="local-recall-model", daemon=True).start()
    return replace(settings, embedder_factory=lambda _config: embedder)


# --- logging (only configured when there is something to say) -------------------------------


def log(layout: Layout, agent: str, level: str, message: str, *, exc_info: bool = False) -> None:
    try:
        import logging

        from local_recall.logs import configure_logging, logging_into

        logger = logging.getLogger(f"local_recall.{agent}.hooks")
        package = logging.getLogger("local_recall")
        # into this repository's log, even when the process logged for another one before
        # (an in-process hook after another repository's: a test worker, a long-lived server)
        if not package.handlers or not logging_into(layout):
            configure_logging(layout, logging.getLevelName(package.level or logging.INFO))
        logger.log(logging.getLevelName(level), message, exc_info=exc_info)
    except Exception:  # noqa: S110 - logging must never be why a hook fails
        pass
