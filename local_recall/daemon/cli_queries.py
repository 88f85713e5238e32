"""What `local-recall search` and `list` answer, as one JSON reply: computed by the daemon for
a warm CLI (op `cli_search` / `cli_list`, cli/warm.py) and by the CLI's own process when no
daemon answers (cli/search.py, cli/memories.py). One function per command, so the two paths
give the same hits and rows by construction; cli/render.py turns a reply into the output.

    {"op": "cli_search", "query", "mode", "scope", "include_global", "limit", "min_score",
     "kind"}                    -> {"ok", "hits": [SearchHit.to_json()], "notes", "degraded",
                                    "skipped": [[path, reason], ...]}
    {"op": "cli_list", "scope", "include_global", "keyword", "newest_first", "limit"}
                                -> {"ok", "rows": [memory row], "skipped": [...]}
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from local_recall.errors import InvalidInput, RecallError
from local_recall.search.query import SearchQuery

if TYPE_CHECKING:
    from local_recall.memory.model import Memory
    from local_recall.recall import Recall

Reply = dict[str, Any]


def follows_renames(recall: Recall, scope: str | None) -> None:
    """Before a `file:` scope filter: bring the lifecycle snapshot to HEAD (a few git commands,
    cached per HEAD) so the filter follows renames (memory/scope_moves.py). The hooks never do
    this: they read the snapshot the daemon keeps."""
    if scope is not None and scope.strip().startswith("file:"):
        with contextlib.suppress(RecallError, OSError):
            recall.lifecycle_snapshot()


def search_request(query: SearchQuery) -> Reply:
    """The socket request for `query` (cli/warm.py builds the same fields from argv)."""
    return {
        "op": "cli_search",
        "query": query.text,
        "mode": query.mode,
        "scope": query.scope,
        "include_global": query.include_global,
        "limit": query.limit,
        "min_score": query.min_score,
        "kind": query.kind,
    }


def parse_search(request: Mapping[str, Any]) -> SearchQuery:
    """The request's SearchQuery; InvalidInput (SearchQuery's own checks) on a bad field."""
    fields: dict[str, Any] = {
        key: request.get(key)
        for key in ("mode", "scope", "include_global", "limit", "min_score", "kind")
        if request.get(key) is not None
    }
    text = request.get("query")
    if not isinstance(text, str):
        raise InvalidInput("cli_search: 'query' must be a string")
    try:
        return SearchQuery(text, **fields)
    except TypeError as exc:
        raise InvalidInput(f"cli_search: {exc}") from None


def search_reply(
    recall: Recall,
    query: SearchQuery,
    *,
    org: bool | Literal["live"] = False,
    sync: bool = True,
) -> Reply:
    """`local-recall search`: the hits (with their life at HEAD), the notes an org search adds,
    why the search ran degraded, and the memory files that were skipped. `sync=False` in the
    daemon: its query side never writes the index (its watchers keep it current)."""
    follows_renames(recall, query.scope)
    result = recall.query(query, org=org, sync=sync)
    return {
        "ok": True,
        "hits": [hit.to_json() for hit in result.hits],
        "notes": list(result.notes),
        "degraded": result.degraded_reason,
        "skipped": _skipped(recall),
    }


def list_reply(recall: Recall, request: Mapping[str, Any]) -> Reply:
    """`local-recall list` with the filters the warm path passes (cli/warm.py); the CLI's own
    process adds --since/--until through `filters`."""
    scope = request.get("scope")
    follows_renames(recall, scope)
    memories = recall.list(
        scope=scope,
        include_global=request.get("include_global", True) is not False,
        keyword=request.get("keyword"),
        since=request.get("since"),
        until=request.get("until"),
        newest_first=request.get("newest_first") is True,
        limit=request.get("limit"),
    )
    return {"ok": True, "rows": [memory_row(m) for m in memories], "skipped": _skipped(recall)}


def list_request(request: Mapping[str, Any]) -> Reply:
    """A `cli_list` request checked the way click checks the options (limit >= 1)."""
    limit = request.get("limit")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise InvalidInput("cli_list: 'limit' must be an integer >= 1")
    for key in ("scope", "keyword"):
        if request.get(key) is not None and not isinstance(request.get(key), str):
            raise InvalidInput(f"cli_list: {key!r} must be a string")
    return {k: request.get(k) for k in ("scope", "include_global", "keyword", "newest_first")} | {
        "limit": limit
    }


def memory_row(memory: Memory) -> dict[str, Any]:
    """A memory as `list --json` prints it: everything but the body."""
    data = memory.to_json()
    data.pop("body")
    return data


def _skipped(recall: Recall) -> list[list[str]]:
    return [[str(p.path), p.reason] for p in recall.scan().problems]
