"""Copilot CLI event logs (`~/.copilot/session-state/<id>/events.jsonl`, 1.0.102) as turns.

Lines are `{"type", "data", "id", "timestamp", "parentId"}`: `user.message` (`content` is what
the user typed; `transformedContent` adds the harness's `<current_datetime>` and hook context),
`assistant.message` (`content`, `toolRequests` with `toolCallId`, `name`, `arguments`),
`tool.execution_complete` (`toolCallId`, `success`, `result.content`). `session.*`, `hook.*`,
`system.message`, `assistant.turn_*`, usage records and the rest are bookkeeping. The format is
versioned (`session.start` `version: 1`); a later version is read the same way, field by field."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from local_recall.capture.sessions.reading import Assembler, parse_session
from local_recall.capture.sessions.turns import TurnBuilder, text_of, timestamp_of, user_text
from local_recall.capture.transcripts.model import ParsedTranscript, Role, Turn
from local_recall.capture.transcripts.parse import DEFAULT_MAX_LINE_BYTES


def parse_copilot_events(
    source: Path | bytes, *, start_offset: int = 0, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> ParsedTranscript:
    return parse_session(
        source, _CopilotAssembler, start_offset=start_offset, max_line_bytes=max_line_bytes
    )


class _CopilotAssembler(Assembler):
    def __init__(self, hidden: frozenset[str]) -> None:
        super().__init__(hidden)
        self.session_id = ""
        self.done: list[Turn] = []
        self.open: TurnBuilder | None = None
        self.call_names: dict[str, str] = {}

    def add(self, entry: Mapping[str, object], start: int, end: int) -> None:
        data = entry.get("data")
        kind = entry.get("type")
        if not isinstance(data, Mapping):
            self.skipped += 1
            return
        if kind == "session.start" and isinstance(data.get("sessionId"), str):
            self.session_id = str(data["sessionId"])
        when = timestamp_of(entry.get("timestamp"))
        if kind not in ("user.message", "assistant.message", "tool.execution_complete"):
            self.skipped += 1
            return
        if when is None:
            self.malformed += 1
            return
        uid = str(entry.get("id") or f"copilot-{start}")
        if kind == "user.message":
            self._close()
            text = user_text(text_of(data.get("content")), self.hidden)
            if text:
                self._turn("user", uid, when, start, end).texts.append(text)
                self._close()
        elif kind == "assistant.message":
            turn = self._turn("assistant", uid, when, start, end)
            turn.texts.append(user_text(text_of(data.get("content")), self.hidden))
            for request in (
                data.get("toolRequests") or () if isinstance(data.get("toolRequests"), list) else ()
            ):
                if isinstance(request, Mapping):
                    name, call_id = str(request.get("name") or ""), str(request.get("toolCallId"))
                    self.call_names[call_id] = name
                    turn.call(name, request.get("arguments"), call_id, self.hidden)
        else:
            call_id = str(data.get("toolCallId") or "")
            result = data.get("result")
            output = text_of(result.get("content")) if isinstance(result, Mapping) else ""
            turn = self._turn("user", uid, when, start, end)
            ok = data.get("success") is not False
            turn.result(ok, output, call_id, self.call_names.get(call_id, ""), self.hidden)

    def _turn(self, role: Role, uid: str, when: datetime, start: int, end: int) -> TurnBuilder:
        if self.open is not None and self.open.role != role:
            self._close()
        if self.open is None:
            self.open = TurnBuilder(uid, role, when, self.session_id, start, end)
        self.open.end_offset = end
        return self.open

    def _close(self) -> None:
        if self.open is not None and not self.open.is_empty():
            self.done.append(self.open.freeze(self.hidden))
        self.open = None

    def turns(self) -> tuple[Turn, ...]:
        self._close()
        return tuple(self.done)
