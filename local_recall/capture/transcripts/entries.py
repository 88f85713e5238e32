"""Entries to turns: what the parser keeps of each JSONL entry (`TurnAssembler`).

Drops everything that is not conversation (hook output we injected, compaction summaries,
bookkeeping entries) and cleans what it keeps, once, before anything folds or cuts it:
`<private>` spans removed, secrets redacted (`clean`). Entry shapes were checked on Claude
Code 2.1.197 transcripts (see docs/pipeline.md#transcripts).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime

from local_recall.capture.transcripts.model import (
    KEY_ARGUMENT_CHARS,
    RESULT_SNIPPET_CHARS,
    ParseStats,
    Role,
    ToolCall,
    ToolResult,
    Turn,
)
from local_recall.memory.timestamps import iso_time
from local_recall.redaction.private import remove_private
from local_recall.redaction.secrets import redact_for_storage
from local_recall.text import one_line

# Entry types that never hold conversation. Anything else that is not user/assistant is
# counted as unknown and ignored too (the set changes between Claude Code versions).
_NON_CONVERSATION_TYPES = frozenset(
    {
        "attachment",  # hook output (hook_success, hook_additional_context), listings, ...
        "system",  # compact_boundary, local_command, ...
        "summary",
        "queue-operation",
        "last-prompt",
        "mode",
        "file-history-snapshot",
        "custom-title",
        "progress",
        "attribution-snapshot",
    }
)

# Text that the harness or a hook put into user content: never the user's words. Our own hooks
# wrap everything they inject in <local-recall-context>; an unclosed tag drops the rest of the
# field, so injected memories can never come back in as "new" conversation.
_INJECTED_SPAN = re.compile(
    r"<(local-recall-context|system-reminder|user-prompt-submit-hook|session-start-hook"
    r"|local-command-caveat|local-command-stdout|local-command-stderr)>.*?(?:</\1>|\Z)",
    re.DOTALL,
)
# Results of our own MCP read tools are memories we served: like hook output, they must never
# come back as "new" knowledge. Server names vary (`local-recall`, a plugin's prefixed name).
_OWN_READ_TOOL = re.compile(
    r"^mcp__(?:plugin_local-recall_)?local-recall__"
    r"(?:search_memories|get_memories|memory_timeline|recent_memories)$"
)
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>", re.DOTALL)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)

# The argument that says what a call did; other tools fall back to their first string argument.
_KEY_ARGUMENTS: Mapping[str, str] = {
    "Bash": "command",
    "Read": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "Write": "file_path",
    "NotebookEdit": "notebook_path",
    "Grep": "pattern",
    "Glob": "pattern",
    "WebFetch": "url",
    "WebSearch": "query",
    "web_search": "query",
    "Agent": "description",
    "Task": "description",
}


def clean(text: str, hidden: frozenset[str] = frozenset()) -> str:
    """What the pipeline may read of a text: `<private>` spans removed, then exact repeats of
    what the session's private spans held (`hidden`: the assistant echoing a private value
    elsewhere), then secrets redacted. The one redaction a transcript text gets on its way to an
    extractor."""
    if hidden:
        text = remove_private(text, also=hidden)
    return redact_for_storage(text).text


# Secrets are redacted before a text is folded and cut: a secret cut in two is no longer
# recognisable and its visible part would reach the extractor. Only the head of a long text can
# be shown, so only the head is scanned (bounded work for a megabyte tool result).
_REDACT_WINDOW = 8 * 1024


def _shown(text: str, limit: int, hidden: frozenset[str] = frozenset()) -> str:
    return one_line(clean(text[:_REDACT_WINDOW], hidden), limit)


def key_argument(tool_name: str, tool_input: object, hidden: frozenset[str] = frozenset()) -> str:
    """The argument shown for a tool call: Bash's command, a file tool's path, a search's
    pattern, WebFetch's url; for MCP and unknown tools the first string argument, else the
    first list of strings (get_memories' ids: learning/signals.py reads them). One line,
    cleaned (`<private>` spans removed, secrets redacted) before it is cut."""
    if not isinstance(tool_input, Mapping):
        return ""
    preferred = tool_input.get(_KEY_ARGUMENTS.get(tool_name, ""))
    if isinstance(preferred, str):
        return _shown(preferred, KEY_ARGUMENT_CHARS, hidden)
    for value in tool_input.values():
        if isinstance(value, str) and value.strip():
            return _shown(value, KEY_ARGUMENT_CHARS, hidden)
    for value in tool_input.values():  # get_memories(ids=[...]): which memories it opened
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return _shown(" ".join(value[:20]), KEY_ARGUMENT_CHARS, hidden)
    return ""


def strip_injected(text: str) -> tuple[str, int]:
    """Remove hook/harness spans from user-side text; returns the text and how many went."""
    cleaned, removed = _INJECTED_SPAN.subn("", text)
    return cleaned.strip(), removed


def _user_command(text: str) -> str | None:
    """`<command-name>/x</command-name>...<command-args>y</command-args>` as `/x y`."""
    name = _COMMAND_NAME.search(text)
    if name is None:
        return None
    args = _COMMAND_ARGS.search(text)
    return f"{name.group(1).strip()} {args.group(1).strip() if args else ''}".strip()


def _parse_timestamp(value: object) -> datetime | None:
    return iso_time(value)


@dataclass(slots=True)
class _TurnBuilder:
    uuid: str
    role: Role
    timestamp: datetime
    session_id: str
    is_sidechain: bool
    message_id: str | None
    start_offset: int
    end_offset: int
    texts: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)

    def is_empty(self) -> bool:
        return not (self.texts or self.thinking or self.tool_calls or self.tool_results)

    def freeze(self, hidden: frozenset[str] = frozenset()) -> Turn:
        thinking = "\n\n".join(self.thinking)
        return Turn(
            uuid=self.uuid,
            role=self.role,
            timestamp=self.timestamp,
            text=clean("\n\n".join(self.texts), hidden),
            tool_calls=tuple(self.tool_calls),
            tool_results=tuple(self.tool_results),
            # redacted where a thinking memory is written; private repeats go here
            thinking=remove_private(thinking, also=hidden) if hidden else thinking,
            session_id=self.session_id,
            is_sidechain=self.is_sidechain,
            message_id=self.message_id,
            start_offset=self.start_offset,
            end_offset=self.end_offset,
        )


@dataclass(slots=True)
class Counters:
    """What a parse counts as it goes; `freeze` gives its `ParseStats`."""

    lines: int = 0
    malformed_lines: int = 0
    oversized_lines: int = 0
    merged_lines: int = 0
    skipped_entries: int = 0
    unknown_entries: int = 0
    injected_spans_removed: int = 0

    def freeze(self) -> ParseStats:
        """The counts as the parse's result reports them (the same field names)."""
        return ParseStats(**{f.name: getattr(self, f.name) for f in fields(self)})


class TurnAssembler:
    """Folds entries, in file order, into turns. Lines of one assistant API message share
    `message.id` and are merged while no user prompt intervenes (a tool-result entry does not
    end the message, in case one is written between two of its blocks). Message ids are not
    unique across a file (transcript 05 reuses one after a resume), hence the 'no prompt in
    between' rule."""

    def __init__(self, counters: Counters, hidden: frozenset[str] = frozenset()) -> None:
        self.counters = counters
        self.hidden = hidden  # what the session's <private> spans held (`private_texts`)
        self.builders: list[_TurnBuilder] = []
        self.open_message: _TurnBuilder | None = None
        self.tool_names: dict[str, str] = {}
        self.last_timestamp = datetime.fromtimestamp(0, UTC)

    def add(self, entry: Mapping[str, object], start: int, end: int) -> None:
        kind = entry.get("type")
        if kind not in ("user", "assistant"):
            if isinstance(kind, str) and kind in _NON_CONVERSATION_TYPES:  # a list is unhashable
                self.counters.skipped_entries += 1
            else:
                self.counters.unknown_entries += 1
            return
        message = entry.get("message")
        if not isinstance(message, Mapping):
            self.counters.malformed_lines += 1
            return
        timestamp = _parse_timestamp(entry.get("timestamp")) or self.last_timestamp
        self.last_timestamp = timestamp
        if kind == "assistant":
            self._add_assistant(entry, message, timestamp, start, end)
        else:
            self._add_user(entry, message, timestamp, start, end)

    def _new_builder(
        self,
        entry: Mapping[str, object],
        role: Role,
        timestamp: datetime,
        *,
        message_id: str | None,
        span: tuple[int, int],
    ) -> _TurnBuilder:
        return _TurnBuilder(
            uuid=str(entry.get("uuid") or ""),
            role=role,
            timestamp=timestamp,
            session_id=str(entry.get("sessionId") or ""),
            is_sidechain=entry.get("isSidechain") is True,
            message_id=message_id,
            start_offset=span[0],
            end_offset=span[1],
        )

    def _add_assistant(
        self,
        entry: Mapping[str, object],
        message: Mapping[str, object],
        timestamp: datetime,
        start: int,
        end: int,
    ) -> None:
        if message.get("model") == "<synthetic>":
            # Written by Claude Code itself ("No response requested.", API error notices).
            self.counters.skipped_entries += 1
            return
        raw_id = message.get("id")
        message_id = raw_id if isinstance(raw_id, str) and raw_id else None
        builder = self.open_message
        if builder is not None and message_id is not None and builder.message_id == message_id:
            builder.end_offset = end
            self.counters.merged_lines += 1
        else:
            builder = self._new_builder(
                entry, "assistant", timestamp, message_id=message_id, span=(start, end)
            )
            self.builders.append(builder)
            self.open_message = builder
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks if isinstance(blocks, list) else ():
            if not isinstance(block, Mapping):
                continue
            block_type = block.get("type")
            if block_type == "text" and isinstance(block.get("text"), str):
                text = str(block["text"]).strip()
                if text:
                    builder.texts.append(text)
            elif block_type == "thinking" and isinstance(block.get("thinking"), str):
                builder.thinking.append(str(block["thinking"]))
            elif block_type in ("tool_use", "server_tool_use"):
                name = str(block.get("name") or "?")
                call_id = str(block.get("id") or "")
                self.tool_names[call_id] = name
                builder.tool_calls.append(
                    ToolCall(name, key_argument(name, block.get("input"), self.hidden), call_id)
                )

    def _add_user(
        self,
        entry: Mapping[str, object],
        message: Mapping[str, object],
        timestamp: datetime,
        start: int,
        end: int,
    ) -> None:
        # isCompactSummary: Claude Code's own summary of earlier turns (already extracted from
        # the originals). isMeta: harness text such as the local-command caveat or an expanded
        # skill: not something the user said.
        if entry.get("isCompactSummary") is True or entry.get("isMeta") is True:
            self.counters.skipped_entries += 1
            return
        builder = self._new_builder(entry, "user", timestamp, message_id=None, span=(start, end))
        content = message.get("content")
        if isinstance(content, str):
            self._add_user_text(builder, content)
        elif isinstance(content, list):
            for block in content:
                if not isinstance(block, Mapping):
                    continue
                block_type = block.get("type")
                if block_type == "text" and isinstance(block.get("text"), str):
                    self._add_user_text(builder, str(block["text"]))
                elif block_type == "image":
                    builder.texts.append("[image]")
                elif block_type == "tool_result":
                    builder.tool_results.append(self._tool_result(block))
        if builder.is_empty():
            self.counters.skipped_entries += 1
            return
        if builder.texts:
            self.open_message = None  # a prompt ends the assistant message before it
        self.builders.append(builder)

    def _add_user_text(self, builder: _TurnBuilder, raw: str) -> None:
        command = _user_command(raw)
        text, removed = strip_injected(raw if command is None else command)
        self.counters.injected_spans_removed += removed
        if text:
            builder.texts.append(text)

    def _tool_result(self, block: Mapping[str, object]) -> ToolResult:
        content = block.get("content")
        parts: list[str] = []
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            for item in content:
                if isinstance(item, Mapping) and isinstance(item.get("text"), str):
                    parts.append(str(item["text"]))
                elif isinstance(item, Mapping) and item.get("type") == "image":
                    parts.append("[image]")
        text, removed = strip_injected("\n".join(parts))
        self.counters.injected_spans_removed += removed
        call_id = str(block.get("tool_use_id") or "")
        if _OWN_READ_TOOL.match(self.tool_names.get(call_id, "")):
            text = "[memories from local-recall]"
        return ToolResult(
            ok=block.get("is_error") is not True,
            snippet=_shown(text, RESULT_SNIPPET_CHARS, self.hidden),
            tool_use_id=call_id,
            tool_name=self.tool_names.get(call_id, ""),
        )

    def turns(self) -> tuple[Turn, ...]:
        return tuple(
            builder.freeze(self.hidden) for builder in self.builders if not builder.is_empty()
        )
