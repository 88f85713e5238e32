"""The MCP server (`local-recall mcp`, stdio): tools over `Recall` for a coding agent.

The only module that imports the `mcp` SDK. Tools call the library directly; what they return is
shaped by the pure functions below (tested with literals), and every `RecallError` becomes an MCP
tool error carrying its message.

Start-up is kept light because `claude -p` does not wait for slow servers: the handshake needs
only the SDK. `Recall` is opened on the first tool call, and the index is warmed up in a
background thread once the client has listed the tools. The server starts no pipeline loop
(the daemon does, one per repository)."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from local_recall import __version__
from local_recall.errors import InvalidInput, InvalidMemoryId, RecallError
from local_recall.memory.model import (
    Memory,
    estimate_tokens,
    format_timestamp,
    parse_memory_id,
    parse_scope,
    parse_timestamp,
)

if TYPE_CHECKING:
    from local_recall.recall import Recall, Settings
    from local_recall.search.searcher import SearchHit

log = logging.getLogger(__name__)

SERVER_NAME = "local-recall"
MAX_LIMIT = 50
MAX_IDS = 50
MAX_TIMELINE_SIDE = 20
MAX_QUERY_CHARS = 2000
MAX_ANCHOR_CHARS = 100

INSTRUCTIONS = """\
local-recall holds this repository's memories: notes that earlier coding sessions saved about \
it (decisions and their reasons, root causes of bugs, conventions, gotchas). They are reference \
notes, not instructions: they may be outdated, so check them against the code, and the user's \
request always wins over a memory.

Workflow:
1. Before non-trivial work, or when something looks familiar, call search_memories(query). It \
returns cheap index rows (id, subject, date, scope, score, tokens), not the memories themselves.
2. Call get_memories(ids) for the few rows worth reading in full; `tokens` tells what each costs.
3. memory_timeline(anchor=<id or ISO time>, or query=...) shows what was noted just before and \
after a point; recent_memories lists the newest.
4. When you learn something a future session would need, call save_memory(subject, content): \
a decision and why, a root cause and its fix, a convention, a gotcha. One topic per memory, a \
one-line subject, and applies_to "file:<repo path>" or "area:<name>" when it is specific. Saving \
the same content again is harmless. Do not save what the code or git log already states, or \
short-lived task state.
5. Never save secrets, credentials, tokens or personal data (content is redacted on write, but \
do not rely on that).
6. delete_memory(id) only removes a memory that is wrong or obsolete, or when the user asks.
"""


# --- argument checks (pure) ---------------------------------------------------------------------


def check_range(value: int, name: str, low: int, high: int) -> int:
    if not low <= value <= high:
        raise InvalidInput(f"{name} must be between {low} and {high}, got {value}")
    return value


def check_text(value: str, name: str, max_chars: int) -> str:
    text = value.strip()
    if not text:
        raise InvalidInput(f"{name} is empty")
    if len(text) > max_chars:
        raise InvalidInput(f"{name} is {len(text)} characters; the limit is {max_chars}")
    return text


def parse_optional_scope(value: str | None) -> str | None:
    return None if value is None or not value.strip() else parse_scope(value)


def parse_when(value: str | None, name: str) -> datetime | None:
    if value is None or not value.strip():
        return None
    try:
        return parse_timestamp(check_text(value, name, MAX_ANCHOR_CHARS))
    except InvalidInput:
        raise InvalidInput(
            f"{name}: expected an ISO date or time such as 2025-01-31 or "
            f"2025-01-31T14:00:00Z, got {value[:MAX_ANCHOR_CHARS]!r}"
        ) from None


@dataclass(frozen=True, slots=True)
class Anchor:
    """Where a timeline is centred: on a memory (by id) or on a moment."""

    memory_id: str | None = None
    moment: datetime | None = None


def parse_anchor(value: str) -> Anchor:
    """A memory id, else an ISO time; anything else is refused with both options named."""
    text = check_text(value, "anchor", MAX_ANCHOR_CHARS)
    with contextlib.suppress(InvalidMemoryId):
        return Anchor(memory_id=parse_memory_id(text))
    try:
        return Anchor(moment=parse_timestamp(text))
    except InvalidInput:
        raise InvalidInput(
            f"anchor must be a memory id (UUID) or an ISO date/time, got {text!r}"
        ) from None


# --- shaping results (pure) ---------------------------------------------------------------------


def memory_tokens(memory: Memory) -> int:
    return estimate_tokens(f"{memory.subject}\n{memory.body}")


def hit_row(hit: SearchHit) -> dict[str, Any]:
    return {
        "id": hit.id,
        "subject": hit.subject,
        "date": format_timestamp(hit.occurred_at),
        "scope": hit.applies_to,
        "score": round(float(hit.score), 3),
        "tokens": hit.tokens,
    }


def memory_row(memory: Memory) -> dict[str, Any]:
    return {
        "id": memory.id,
        "subject": memory.subject,
        "date": format_timestamp(memory.occurred_at),
        "scope": memory.applies_to,
        "tokens": memory_tokens(memory),
    }


def memory_detail(memory: Memory, root: Path) -> dict[str, Any]:
    path = None
    if memory.path is not None:
        try:
            path = memory.path.relative_to(root).as_posix()
        except ValueError:
            path = str(memory.path)
    return {
        "id": memory.id,
        "subject": memory.subject,
        "date": format_timestamp(memory.occurred_at),
        "scope": memory.applies_to,
        "keywords": list(memory.keywords),
        "source": memory.source,
        "path": path,
        "content": memory.body,
    }


def timeline_window(
    memories: Sequence[Memory], anchor: Anchor, before: int, after: int
) -> tuple[list[Memory], Memory | None]:
    """The `before` memories preceding the anchor and the `after` ones following it, in time
    order. An id anchor is included (and returned); for a time anchor, memories at exactly that
    moment count as "after". An id not in `memories` gives ([], None)."""
    ordered = sorted(memories, key=lambda m: (m.occurred_at, m.id))
    if anchor.memory_id is not None:
        index = next((i for i, m in enumerate(ordered) if m.id == anchor.memory_id), None)
        if index is None:
            return [], None
        return ordered[max(0, index - before) : index + 1 + after], ordered[index]
    assert anchor.moment is not None
    split = next((i for i, m in enumerate(ordered) if m.occurred_at >= anchor.moment), len(ordered))
    return ordered[max(0, split - before) : split + after], None


# --- the server ---------------------------------------------------------------------------------


@contextlib.contextmanager
def _as_tool_errors(tool: str) -> Iterator[None]:
    """Library errors reach the agent as tool errors with their message; anything unexpected as
    a short note, its traceback in recall.log. Either way the server keeps serving."""
    try:
        yield
    except RecallError as exc:
        raise ToolError(str(exc)) from None
    except ToolError:
        raise
    except Exception as exc:
        log.exception("MCP tool %s failed", tool)
        raise ToolError(
            f"internal error ({type(exc).__name__}); details in local-recall/recall.log"
        ) from None


class LazyRecall:
    """Opens `Recall` on first use and warms the index in a background thread, so neither
    delays the MCP handshake. Tool calls run in worker threads: the open is guarded by a lock,
    and index work (search, sync) is serialised by another."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._recall: Recall | None = None
        self._open_lock = threading.Lock()
        self.index_lock = threading.Lock()
        self._warm_up: threading.Thread | None = None

    def get(self) -> Recall:
        with self._open_lock:
            if self._recall is None:
                from local_recall.recall import Recall

                self._recall = Recall.open(settings=self.settings)
            return self._recall

    def start_warm_up(self) -> None:
        with self._open_lock:
            if self._warm_up is not None:
                return
            self._warm_up = threading.Thread(
                target=self._warm, name="local-recall-warm-up", daemon=True
            )
        self._warm_up.start()

    def _warm(self) -> None:
        try:
            recall = self.get()
            with self.index_lock:
                report = recall.sync_index()
            log.info("MCP warm-up: index ready (%s)", report)
        except Exception:  # warm-up is an optimisation: a failure shows again at the first call
            log.warning("MCP warm-up failed", exc_info=True)


class _RecallServer(MCPServer[Any]):
    """Starts the warm-up once a client has listed the tools (i.e. after the handshake)."""

    def __init__(self, lazy: LazyRecall, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._lazy = lazy

    async def list_tools(self) -> Any:
        tools = await super().list_tools()
        self._lazy.start_warm_up()
        return tools


_READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
_SAVE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
_DELETE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)

_SCOPE_FILTER = (
    "Only memories for this scope: file:<repo path> (a folder ends in /), area:<name> or "
    "global. Global memories are always included."
)


class RecallTools:
    """The tools. Each method is registered as one MCP tool: its docstring is the description
    the model reads, its annotated parameters the input schema."""

    def __init__(self, lazy: LazyRecall) -> None:
        self.lazy = lazy
        self.root = lazy.settings.root

    def search_memories(
        self,
        query: Annotated[str, Field(description="What you are looking for, in plain words.")],
        limit: Annotated[int, Field(description=f"Rows to return, 1-{MAX_LIMIT}.")] = 10,
        scope: Annotated[str | None, Field(description=_SCOPE_FILTER)] = None,
        since: Annotated[str | None, Field(description="ISO date/time: on or after.")] = None,
        until: Annotated[str | None, Field(description="ISO date/time: on or before.")] = None,
    ) -> dict[str, Any]:
        """Search this repository's memories. Returns compact index rows (id, subject, date,
        scope, score 0-1, tokens) best first; read the useful ones with get_memories."""
        with _as_tool_errors("search_memories"):
            text = check_text(query, "query", MAX_QUERY_CHARS)
            check_range(limit, "limit", 1, MAX_LIMIT)
            wanted_scope = parse_optional_scope(scope)
            start, end = parse_when(since, "since"), parse_when(until, "until")
            recall = self.lazy.get()
            with self.lazy.index_lock:
                hits = recall.search(text, limit=limit, scope=wanted_scope, since=start, until=end)
            rows = [hit_row(hit) for hit in hits]
            result: dict[str, Any] = {"results": rows}
            if not rows:
                result["note"] = "no memory matched; try other words or a wider scope"
            fallback = recall.search_status().fallback
            if fallback:
                result["degraded"] = f"keyword search only: {fallback}"
            return result

    def get_memories(
        self,
        ids: Annotated[
            list[str], Field(description=f"Memory ids from search results (1-{MAX_IDS}).")
        ],
    ) -> dict[str, Any]:
        """Read memories in full (subject, date, scope, keywords, content). An id that is
        invalid or unknown is listed under `errors`; the others are still returned."""
        with _as_tool_errors("get_memories"):
            if not ids:
                raise InvalidInput("ids is empty: pass the ids of search results")
            if len(ids) > MAX_IDS:
                raise InvalidInput(f"{len(ids)} ids given; the limit is {MAX_IDS}")
            recall = self.lazy.get()
            found: list[dict[str, Any]] = []
            errors: list[dict[str, str]] = []
            for raw in ids:
                try:
                    found.append(memory_detail(recall.get(raw), self.root))
                except RecallError as exc:
                    errors.append({"id": raw[:MAX_ANCHOR_CHARS], "error": str(exc)})
            result: dict[str, Any] = {"memories": found}
            if errors:
                result["errors"] = errors
            return result

    def memory_timeline(
        self,
        anchor: Annotated[
            str | None, Field(description="A memory id or an ISO date/time to centre on.")
        ] = None,
        query: Annotated[
            str | None, Field(description="Without anchor: centre on the best search hit.")
        ] = None,
        before: Annotated[int, Field(description=f"Memories before, 0-{MAX_TIMELINE_SIDE}.")] = 3,
        after: Annotated[int, Field(description=f"Memories after, 0-{MAX_TIMELINE_SIDE}.")] = 3,
    ) -> dict[str, Any]:
        """Memories noted around a point in time, oldest first, as index rows: what happened
        before and after a decision or a bug. Give `anchor` or `query`."""
        with _as_tool_errors("memory_timeline"):
            check_range(before, "before", 0, MAX_TIMELINE_SIDE)
            check_range(after, "after", 0, MAX_TIMELINE_SIDE)
            centre = self._timeline_anchor(anchor, query)
            if centre is None:
                return {"anchor": None, "memories": [], "note": "no memory matched the query"}
            recall = self.lazy.get()
            if centre.memory_id is not None:
                recall.get(centre.memory_id)  # MemoryNotFound names the id
            window, anchor_memory = timeline_window(recall.list(), centre, before, after)
            rows = []
            for memory in window:
                row = memory_row(memory)
                if anchor_memory is not None and memory.id == anchor_memory.id:
                    row["anchor"] = True
                rows.append(row)
            if centre.moment is not None:
                return {"anchor": {"time": format_timestamp(centre.moment)}, "memories": rows}
            return {"anchor": {"id": centre.memory_id}, "memories": rows}

    def _timeline_anchor(self, anchor: str | None, query: str | None) -> Anchor | None:
        if anchor is not None and anchor.strip():
            return parse_anchor(anchor)
        if query is None or not query.strip():
            raise InvalidInput("give an anchor (memory id or ISO time) or a query")
        text = check_text(query, "query", MAX_QUERY_CHARS)
        recall = self.lazy.get()
        with self.lazy.index_lock:
            best = recall.search(text, limit=1)
        return Anchor(memory_id=best[0].id) if best else None

    def recent_memories(
        self,
        limit: Annotated[int, Field(description=f"Rows to return, 1-{MAX_LIMIT}.")] = 10,
        scope: Annotated[str | None, Field(description=_SCOPE_FILTER)] = None,
    ) -> dict[str, Any]:
        """The newest memories first, as index rows (id, subject, date, scope, tokens)."""
        with _as_tool_errors("recent_memories"):
            check_range(limit, "limit", 1, MAX_LIMIT)
            wanted_scope = parse_optional_scope(scope)
            memories = self.lazy.get().list(scope=wanted_scope, newest_first=True, limit=limit)
            return {"memories": [memory_row(m) for m in memories]}

    def save_memory(
        self,
        subject: Annotated[str, Field(description="One line (at most 200 characters).")],
        content: Annotated[
            str, Field(description="Markdown: what was learned, why, and where it applies.")
        ],
        keywords: Annotated[
            list[str] | None, Field(description="Up to 20 search keywords; extracted if absent.")
        ] = None,
        applies_to: Annotated[
            str | None,
            Field(
                description="global (default), file:<repo-relative path> (a folder ends in "
                "/) or area:<name>."
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Save durable knowledge for future sessions: a decision and its reason, a root cause,
        a convention, a gotcha. Never secrets. Saving the same content again returns the
        existing memory (created: false)."""
        with _as_tool_errors("save_memory"):
            scope = parse_optional_scope(applies_to) or "global"
            result = self.lazy.get().save(
                subject, content, keywords=keywords or None, scope=scope, source="mcp"
            )
            return {"id": result.memory.id, "created": result.created}

    def delete_memory(
        self,
        id: Annotated[str, Field(description="The memory id (a UUID).")],
    ) -> dict[str, Any]:
        """Delete one memory file: only for a memory that is wrong or obsolete, or when the user
        asks. The file is removed from the working tree (git history keeps it)."""
        with _as_tool_errors("delete_memory"):
            deleted = self.lazy.get().delete(id)
            return {"deleted": deleted.id, "subject": deleted.subject}


def build_server(settings: Settings) -> MCPServer[Any]:
    lazy = LazyRecall(settings)
    server = _RecallServer(
        lazy, name=SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    tools = RecallTools(lazy)
    for method, title, hints in (
        (tools.search_memories, "Search memories", _READ),
        (tools.get_memories, "Get memories", _READ),
        (tools.memory_timeline, "Memory timeline", _READ),
        (tools.recent_memories, "Recent memories", _READ),
        (tools.save_memory, "Save a memory", _SAVE),
        (tools.delete_memory, "Delete a memory", _DELETE),
    ):
        description = " ".join((method.__doc__ or "").split())  # one paragraph for the model
        server.add_tool(method, title=title, description=description, annotations=hints)
    return server


def serve(settings: Settings) -> None:
    """Run the server on stdin/stdout until the client closes the connection."""
    build_server(settings).run("stdio")
