"""What the daemon's socket requests mean (protocol: query_client.py; transport:
query_server.py). `QueryService` answers them with one long-lived Recall — warm embedder, open
index — through the same `ContextService` a hook uses when no daemon answers, so the two paths
cannot drift apart."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from local_recall.context.hook_settings import checked_hook_environment
from local_recall.context.service import ContextService, shown_subject
from local_recall.context.session import SessionAsk, SessionNotes
from local_recall.context.why import explain_prompt
from local_recall.daemon.cli_queries import list_reply, list_request, parse_search, search_reply
from local_recall.daemon.hook_requests import answer_reply
from local_recall.daemon.query_client import Reply
from local_recall.daemon.session_env import session_environment
from local_recall.errors import InvalidInput
from local_recall.repo.config import load_config
from local_recall.search.limits import MAX_LIMIT, MAX_QUERY_CHARS
from local_recall.search.query import SearchHit, SearchQuery, SearchResult

if TYPE_CHECKING:
    from local_recall.context.notes import Note
    from local_recall.context.prompt import PromptAsk
    from local_recall.recall import Recall


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    limit: int | None
    scope: str | None
    min_score: float | None
    with_body: bool
    at_least: int = 0


def parse_search_request(request: Mapping[str, Any]) -> SearchRequest:
    """Validate a search request's fields; InvalidInput names the bad one. The query is a
    prompt, not typed for search: its head (MAX_QUERY_CHARS) is what is searched."""
    query = request.get("query")
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("search: 'query' must be a non-empty string")
    limit = request.get("limit")
    if limit is not None and (
        not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT
    ):
        raise InvalidInput(f"search: 'limit' must be an integer from 1 to {MAX_LIMIT}")
    scope = request.get("scope")
    if scope is not None and not isinstance(scope, str):
        raise InvalidInput("search: 'scope' must be a string")
    min_score = request.get("min_score")
    if min_score is not None and (
        not isinstance(min_score, int | float) or isinstance(min_score, bool)
    ):
        raise InvalidInput("search: 'min_score' must be a number")
    at_least = request.get("at_least", 0)
    if (
        not isinstance(at_least, int)
        or isinstance(at_least, bool)
        or not 0 <= at_least <= MAX_LIMIT
    ):
        raise InvalidInput(f"search: 'at_least' must be an integer from 0 to {MAX_LIMIT}")
    return SearchRequest(
        query=query[:MAX_QUERY_CHARS],
        limit=limit,
        scope=scope,
        min_score=None if min_score is None else float(min_score),
        with_body=request.get("with_body") is True,
        at_least=at_least,
    )


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
        if op in ("index_summary", "transcript_done", "answer") and "env" in request:
            # the session's Claude Code variables: extraction runs with the latest session's
            env = session_environment(request["env"])
            if env is not None:
                session = request.get("session_id")
                self._on_session_env(env, session if isinstance(session, str) else "")
        if op == "ping":
            return {"ok": True, **self._describe()}
        if op == "search":
            self._on_query()
            parsed = parse_search_request(request)
            result = self.search(parsed)
            return {
                "ok": True,
                "hits": [hit_json(hit, with_body=parsed.with_body) for hit in result.hits],
                "degraded": result.degraded_reason,
            }
        if op == "answer":  # a hook's whole answer (daemon/hook_requests.py)
            self._on_query()
            with self._lock:
                root = self._context.recall.root
            return answer_reply(
                request, root, prompt_notes=self._prompt_notes, session_notes=self._session_notes
            )
        if op in ("cli_search", "cli_why", "cli_list"):
            return self._cli(op, request)
        if op == "index_summary":
            self._on_query()
            ask = SessionAsk.from_request(request)
            with self._lock:
                context = self._context
            # reads the store only: no need to hold up searches
            return context.session_notes(ask).to_reply()
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

    def search(self, request: SearchRequest) -> SearchResult:
        query = SearchQuery(
            request.query,
            scope=request.scope,
            limit=request.limit,
            min_score=request.min_score,
            prompt=True,  # the prompt hooks' op
            at_least=min(request.at_least, request.limit or MAX_LIMIT),
        )
        with self._lock:
            return self._context.prompt_search(query)

    def query(self, query: SearchQuery) -> SearchResult:
        """Any search on the warm side (the socket's, and the browser viewer's: daemon/ui.py)."""
        with self._lock:
            return self._context.search(query)


def hit_json(hit: SearchHit, *, with_body: bool) -> dict[str, Any]:
    """A hit as the hook reads it, its subject as the hook shows it (`shown_subject`)."""
    return {**hit.to_json(with_body=with_body), "subject": shown_subject(hit)}
