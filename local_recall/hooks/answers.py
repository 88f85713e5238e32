"""What a hook answers, for any agent: the daemon's, over its socket, or — when no daemon
answers — the same `ContextService` in this process (context/service.py).

    run = HookRun("claude_code", "UserPromptSubmit", root, environ, read_hook_settings(...))
    text = answer_prompt(run, prompt)        # "" or one <local-recall-context> block

Light on the warm path: json, socket and the pure context modules; the library (`Recall`,
LanceDB's neighbours, the model) is only imported when no daemon answers. Errors propagate: the
agent's adapter catches everything, logs it and exits 0 (fail open).
"""

# No `from __future__ import annotations` here: NamedTuple turns string annotations into
# ForwardRefs, compiling each one at import (~0.25 ms a field) on every prompt.

import time
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from local_recall.context.notes import Note, notes_from_json
from local_recall.context.prompt import PromptAsk, Tiers, prompt_query, render_selection, select
from local_recall.context.seen import seen_of, shown_line
from local_recall.daemon.query_client import ask, daemon_sockets
from local_recall.hooks.seen_log import append_shown, read_shown
from local_recall.hooks.settings import HookSettings
from local_recall.learning.learned import Learned, read_learned, static
from local_recall.repo.layout import Layout, resolve_layout
from local_recall.search.limits import MAX_LIMIT

if TYPE_CHECKING:
    from local_recall.context.service import ContextService

SESSION_END_ASK_SECONDS = 0.5
# Listing 10k memories takes the daemon longer than a search; SessionStart has the time.
SESSION_START_ASK_SECONDS = 2.0


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


# What a hook does when no daemon answers: search in its own process. A hook process builds a
# ContextService for that one prompt (context_in_process); a long-lived one (the MCP server's
# prompt tool) keeps a warm one.
InProcess = Callable[[HookRun, PromptAsk], list[Note]]


def answer_prompt(
    run: HookRun,
    prompt: str,
    in_process: InProcess | None = None,
    *,
    session_id: str = "",
    prompt_id: str = "",
    claim: Callable[[], bool] | None = None,
    warm: Callable[[PromptAsk], list[Note] | None] | None = None,
) -> str:
    """The memories that bear on `prompt`, within the prompt budget; "" for none. Sure ones in
    full, plausible ones as pointers, and (given `session_id`) none this session already saw:
    what each prompt was shown goes to the session's record (hooks/seen_log.py). `claim`: where
    two handlers may answer one prompt, the one whose claim fails answers "" and records
    nothing (the record is the winner's). `warm`: a long-lived process's own warm search (the
    MCP server's), asked before the daemon; None from it: not ready, the daemon answers."""
    query = prompt_query(prompt)
    if query is None or run.settings.prompt_tokens <= 0:
        return ""
    from local_recall.search.query_intent import has_nothing_to_look_up

    if has_nothing_to_look_up(query):  # "thanks", "continue": no socket request, no search
        return ""
    settings = run.settings
    learned = _learned(run)
    tiers = learned_tiers(settings, learned)
    # what either tier may show: fill_budget sorts them
    wanted = PromptAsk(query, min(settings.search_limit, MAX_LIMIT), tiers.floor)
    answered = None if warm is None else warm(wanted)
    reply = None
    if answered is None:
        reply = ask(run.sockets, wanted.to_request(), run.ask_timeout, root=run.root)
    if answered is not None:
        notes = answered
    elif reply is None:
        log(run.layout, run.agent, "INFO", "no daemon answered; searching in-process")
        _start_daemon(run)  # so that the next prompt finds one
        if in_process is None:
            notes = context_in_process(run).prompt_notes(wanted)
        else:
            notes = in_process(run, wanted)
    elif reply.get("ok") is not True:
        log(run.layout, run.agent, "WARNING", f"daemon search failed: {reply.get('error')}")
        return ""
    else:
        notes = notes_from_json(reply.get("hits"))
    if not run.settings.inject_unreviewed:  # [review] inject_unreviewed
        notes = [note for note in notes if not note.unreviewed]
    if learned.factors:  # [learning] track_record: the order among these hits
        notes = [note._replace(track=learned.factors.get(note.id, 1.0)) for note in notes]
    if settings.learn_disputed and any(note.unreviewed for note in notes):
        notes = with_disputes(run, notes)
    return _shown_to_session(run, notes, tiers, session_id, prompt_id, claim)


def with_disputes(run: HookRun, notes: list[Note]) -> list[Note]:
    """[learning] disputed: a memory a session found wrong, that no person has accepted,
    edited or rejected since (it is still unreviewed: the pass marked it so), carries why: a
    pointer at most (context/prompt.py). Only when a hit is unreviewed are the usage files
    read, and of them only the lines that say "disputed"."""
    from local_recall.learning.usage_log import read_disputes  # loads subprocess: not always

    try:
        disputes = read_disputes(run.layout)
    except Exception as exc:  # fail open: the hits as they are
        log(run.layout, run.agent, "WARNING", f"disputes not read: {exc!r}")
        return notes
    return [
        note._replace(disputed=disputes[note.id])
        if note.unreviewed and note.id in disputes
        else note
        for note in notes
    ]


def learned_tiers(settings: HookSettings, learned: Learned) -> Tiers:
    """The [hooks] tiers with the cut-offs calibrated from this repository's sessions."""
    return settings.tiers._replace(
        min_score=learned.min_score, pointer_min_score=learned.pointer_min_score
    )


def _learned(run: HookRun) -> Learned:
    """What the sessions' outcomes teach ([learning]); the static settings should reading them
    fail (logged: a prompt is never lost to it)."""
    learning = run.settings.learning
    try:
        return read_learned(run.layout, learning, datetime.now(UTC))
    except Exception as exc:  # fail open: today's cut-offs, no track record
        log(run.layout, run.agent, "WARNING", f"learned settings not read: {exc!r}")
        return static(learning)


def _shown_to_session(
    run: HookRun,
    notes: list[Note],
    tiers: Tiers,
    session_id: str,
    prompt_id: str,
    claim: Callable[[], bool] | None,
) -> str:
    """The tiers for `notes` given what the session saw, rendered; the answer recorded."""
    settings, state_dir = run.settings, run.layout.state_dir
    selection = select(notes, tiers, seen_of(read_shown(state_dir, session_id)))
    text = render_selection(selection, budget_tokens=settings.prompt_tokens)
    if text and claim is not None and not claim():
        return ""
    if text and session_id:
        at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        try:
            append_shown(state_dir, session_id, shown_line(selection, at=at, prompt_id=prompt_id))
        except OSError as exc:  # a read-only checkout's cache, a planted symlink: shown again
            log(run.layout, run.agent, "INFO", f"session record not written: {exc}")
    return text


def answer_session_start(run: HookRun, source: str, session_id: str) -> str:
    """The last session summaries of the branch, then an index of the memories; "" for none.
    `source`: startup, resume, clear or compact (context/session.py)."""
    from local_recall.context.session import (
        SESSION_CANDIDATES,
        SessionAsk,
        SessionNotes,
        session_context,
    )
    from local_recall.repo.git_head import read_git_head

    settings = run.settings
    branch = read_git_head(run.root).branch
    wanted = SessionAsk(source, SESSION_CANDIDATES, settings.summaries_count, session_id, branch)
    from local_recall.daemon.session_env import claude_environment

    request = {**wanted.to_request(), "env": claude_environment(run.environ)}  # the user's now
    reply = ask(
        run.sockets, request, max(run.ask_timeout, SESSION_START_ASK_SECONDS), root=run.root
    )
    if reply is None:
        _start_daemon(run)  # for the next prompts; never waited for
        if settings.session_start_tokens <= 0:
            return ""
        shown = settings.summaries_count if settings.summaries_tokens > 0 else 0
        found = context_in_process(run).session_notes(wanted._replace(summaries=shown))
    elif reply.get("ok") is not True:
        log(run.layout, run.agent, "WARNING", f"daemon index_summary failed: {reply.get('error')}")
        return ""
    else:
        found = SessionNotes.from_reply(reply)
    if not settings.inject_unreviewed:
        found = found._replace(notes=[note for note in found.notes if not note.unreviewed])
    return session_context(
        found,
        source=source,
        branch=branch,
        index_tokens=settings.session_start_tokens,
        summary_tokens=settings.summaries_tokens if settings.summaries_count > 0 else 0,
    )


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


def context_in_process(run: HookRun) -> "ContextService":
    """The ContextService on a Recall of this process: the files and the vector cache, never
    the index (importing lancedb would cost ~2 s of the prompt's time). Candidates by word
    coverage, fuzzy match and cosine (the query is embedded: ~0.6 s cold), scored by the same
    calibrated relevance as the daemon's, so the same threshold decides alike."""
    from local_recall.context.service import ContextService
    from local_recall.logs import log_to_repo
    from local_recall.recall import Recall
    from local_recall.repo.config import load_config_or_defaults
    from local_recall.settings import Settings

    # A broken config.toml must not switch memory off: defaults, with LOCAL_RECALL_* applied.
    settings = Settings(root=run.root, environ=dict(run.environ))
    config, _ = load_config_or_defaults(
        run.layout.config_path, settings.environ, user_path=settings.user_config_path
    )
    recall = Recall(settings, config)
    log_to_repo(recall)
    return ContextService(recall, use_index=False)


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
