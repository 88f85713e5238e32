"""Building `Turn`s from another agent's entries: the cleaning Claude Code's parser applies
(capture/transcripts/entries.py: `<private>` spans, secrets, injected spans), one place for the
three session parsers."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from local_recall.capture.transcripts.entries import clean, key_argument, strip_injected
from local_recall.capture.transcripts.model import (
    RESULT_SNIPPET_CHARS,
    Role,
    ToolCall,
    ToolResult,
    Turn,
)
from local_recall.memory.timestamps import iso_time
from local_recall.text import one_line

# Our own MCP read tools under each agent's naming (Codex: the `search_memories` function of the
# `mcp__local_recall` namespace; Gemini: `mcp_local-recall_search_memories`; Copilot:
# `local-recall-search_memories`): their results are memories we served, never new knowledge.
_OWN_READ_TOOL = re.compile(
    r"^(?:mcp__local_recall__|mcp_local-recall_|local-recall-)"
    r"(?:search_memories|get_memories|memory_timeline|recent_memories|session_summaries)$"
)
# Context another agent's harness wraps its hook output in (Gemini: <hook_context>).
_HOOK_SPAN = re.compile(r"<hook_context>.*?(?:</hook_context>|\Z)", re.DOTALL)
_WINDOW = 8 * 1024


def qualified_tool(name: str, namespace: str = "") -> str:
    """A tool's name as one string: Codex's namespaced MCP tools as `<namespace>__<name>`."""
    return f"{namespace}__{name}" if namespace else name


def is_own_read_tool(name: str) -> bool:
    return bool(_OWN_READ_TOOL.match(name))


def timestamp_of(value: object) -> datetime | None:
    """An ISO string, or epoch milliseconds (Copilot's hook payloads), as UTC."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value / 1000, UTC)
        except (ValueError, OverflowError, OSError):
            return None
    return iso_time(value)


def user_text(raw: str, hidden: frozenset[str]) -> str:
    """A user message as the pipeline may read it: injected spans out, then cleaned."""
    text, _ = strip_injected(_HOOK_SPAN.sub("", raw))
    return clean(text, hidden) if text else ""


@dataclass(slots=True)
class TurnBuilder:
    uuid: str
    role: Role
    timestamp: datetime
    session_id: str
    start_offset: int
    end_offset: int
    message_id: str | None = None
    texts: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)

    def call(self, name: str, arguments: object, call_id: str, hidden: frozenset[str]) -> None:
        self.tool_calls.append(ToolCall(name, key_argument(name, arguments, hidden), call_id))

    def result(
        self, ok: bool, output: str, call_id: str, tool_name: str, hidden: frozenset[str]
    ) -> None:
        if is_own_read_tool(tool_name):
            snippet = "[memories from local-recall]"
        else:
            snippet = one_line(clean(output[:_WINDOW], hidden), RESULT_SNIPPET_CHARS)
        self.tool_results.append(ToolResult(ok, snippet, call_id, tool_name))

    def is_empty(self) -> bool:
        return not (self.texts or self.thinking or self.tool_calls or self.tool_results)

    def freeze(self, hidden: frozenset[str]) -> Turn:
        text = "\n\n".join(t for t in self.texts if t)
        return Turn(
            uuid=self.uuid,
            role=self.role,
            timestamp=self.timestamp,
            text=text,
            tool_calls=tuple(self.tool_calls),
            tool_results=tuple(self.tool_results),
            thinking="\n\n".join(self.thinking),
            session_id=self.session_id,
            message_id=self.message_id,
            start_offset=self.start_offset,
            end_offset=self.end_offset,
        )


def text_of(value: object) -> str:
    """A string, or the text parts of a content list (`{"text"}` / `{"type": "…_text"}`)."""
    if isinstance(value, str):
        return value
    parts: list[str] = []
    for part in value if isinstance(value, list) else ():
        if isinstance(part, Mapping) and isinstance(part.get("text"), str):
            parts.append(part["text"])
    return "\n".join(parts)
