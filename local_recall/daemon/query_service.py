"""What the daemon's socket requests mean (protocol: query_client.py; transport:
query_server.py). `QueryService` answers them with one long-lived Recall — warm embedder, open
index — through the same `ContextService` a hook uses when no daemon answers, so the two paths
cannot drift apart."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from local_recall.context.hook_settings import checked_hook_environment
from local_recall.context.service import ContextService
from local_recall.context.session import SessionAsk, SessionNotes
from local_recall.context.why import explain_prompt
from local_recall.daemon.cli_queries import list_reply, list_request, parse_search, search_reply
from local_recall.daemon.hook_requests import answer_reply
from local_recall.daemon.query_client import Reply
from local_recall.daemon.session_env import session_environment
from local_recall.errors import InvalidInput
from local_recall.repo.config import load_config
from local_recall.search.limits import MAX_QUERY_CHARS
from local_recall.search.query import SearchQuery, SearchResult

if TYPE_CHECKING:
    from local_recall.context.notes import Note
    from local_recall.context.prompt import PromptAsk
    from local_recall.recall import Recall


class QueryService:
    """Answers requests with one long-lived Recall (warm embedder, open index)."""

    def __init__(
        self,
        recall: Recall,
        *,
        on_transcript_done: Callable[[str], None],
        describe: Callable[[], dict[str, Any]],
        on_query: Callable[[], None] = lambda: None,
        on_session_env: Callable[[dict[str, str], str], None] = lambda env, session: None,
    ) -> None:
        recall.searcher.keep_keywords()  # many searches: no LanceDB full-text query each
        self._context = ContextService(recall)
        # Serialises searches (one Searcher is not meant for concurrent use) and swaps.
        self._lock = threading.Lock()
        self._on_transcript_done = on_transcript_done
        self._describe = describe
        self._on_query = on_query
        self._on_session_env = on_session_env

    def handle(self, request: dict[str, Any]) -> Reply:
        op = request.get("op")
        if op in ("transcript_done", "answer") and "env" in request:
            # the session's Claude Code variables: extraction runs with the latest session's
            env = session_environment(request["env"])
            if env is not None:
                session = request.get("session_id")
                self._on_session_env(env, session if isinstance(session, str) else "")
        if op == "ping":
            return {"ok": True, **self._describe()}
        if op == "answer":  # a hook's whole answer (daemon/hook_requests.py)
            self._on_query()
            with self._lock:
                root = self._context.recall.root
            return answer_reply(
                request, root, prompt_notes=self._prompt_notes, session_notes=self._session_notes
            )
        if op in ("cli_search", "cli_why", "cli_list"):
            return self._cli(op, request)
        if op == "transcript_done":
            path = request.get("path", "")  # only a trigger: the pass finds the transcripts
            if not isinstance(path, str):
                raise InvalidInput("transcript_done: 'path' must be a string")
            self._on_transcript_done(path)
            return {"ok": True, "queued": True}
        raise InvalidInput(f"unknown op {op!r}")

    def _cli(self, op: str, request: dict[str, Any]) -> Reply:
        """A warm `local-recall search`, `why` or `list` (cli/warm.py). A config broken since
        this Recall was opened refuses the request (ConfigError): the CLI's own process then
        runs and reports it as it does without a daemon (~0.7 ms here, nothing in the client)."""
        with self._lock:
            settings, layout = self._context.recall.settings, self._context.recall.layout
        load_config(layout.config_path, settings.environ, user_path=settings.user_config_path)
        if op == "cli_search":
            self._on_query()
            query = parse_search(request)
            with self._lock:
                return search_reply(self._context.recall, query, sync=False)
        if op == "cli_why":
            prompt = request.get("prompt")
            if not isinstance(prompt, str) or not prompt.strip():
                raise InvalidInput("cli_why: 'prompt' must be a non-empty string")
            environ = checked_hook_environment(request.get("hook_env", {}))
            if environ is None:
                raise InvalidInput("cli_why: 'hook_env' must map LOCAL_RECALL_* names to strings")
            with self._lock:
                explained = explain_prompt(
                    self._context.recall, prompt[: 4 * MAX_QUERY_CHARS], environ=environ
                )
            return {"ok": True, "explanation": explained.to_json()}
        listed = list_request(request)
        with self._lock:
            return list_reply(self._context.recall, listed)

    def _prompt_notes(self, ask: PromptAsk) -> list[Note]:
        with self._lock:
            return self._context.prompt_notes(ask)

    def _session_notes(self, ask: SessionAsk) -> SessionNotes:
        with self._lock:
            context = self._context
        return context.session_notes(ask)  # reads the store only: no need to hold up searches

    def swap(self, recall: Recall) -> Recall:
        """Serve from `recall` from now on; returns the one served before."""
        recall.searcher.keep_keywords()  # built outside the lock (~50 ms at 5,000): once
        with self._lock:
            previous, self._context = self._context, ContextService(recall)
        return previous.recall

    def query(self, query: SearchQuery) -> SearchResult:
        """Any search on the warm side (the socket's, and the browser viewer's: daemon/ui.py)."""
        with self._lock:
            return self._context.search(query)
