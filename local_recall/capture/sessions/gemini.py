"""Gemini CLI chats (`~/.gemini/tmp/<project>/chats/session-*.jsonl`, 0.61) as turns.

A chat file is a log: a header line (`sessionId`, `projectHash` = sha256 of the project root,
`startTime`, `kind`), one line per message record (`id`, `timestamp`, `type` `user` / `gemini` /
`info` / `error`, `content`: a list of parts for the user, a string for the model, `toolCalls`
with `name`, `args`, `result`), and `{"$set": …}` updates. A record written again with the same
id (the model's message once its tool calls are known) replaces the earlier one. `$set.messages`
re-states the whole history (on start-up and on `--resume`): old turns, never new ones, so it
is not read. The `<session_context>` message is the CLI's own; `<hook_context>` spans are hook
output."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from local_recall.capture.sessions.reading import Assembler, parse_session
from local_recall.capture.sessions.turns import TurnBuilder, text_of, timestamp_of, user_text
from local_recall.capture.transcripts.model import ParsedTranscript, Turn
from local_recall.capture.transcripts.parse import DEFAULT_MAX_LINE_BYTES

_CLI_CONTEXT = "<session_context>"


def parse_gemini_chat(
    source: Path | bytes, *, start_offset: int = 0, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> ParsedTranscript:
    return parse_session(
        source, _GeminiAssembler, start_offset=start_offset, max_line_bytes=max_line_bytes
    )


class _GeminiAssembler(Assembler):
    def __init__(self, hidden: frozenset[str]) -> None:
        super().__init__(hidden)
        self.session_id = ""
        # id -> (record, first start, last end), in order of first appearance
        self.records: dict[str, tuple[Mapping[str, object], int, int]] = {}

    def add(self, entry: Mapping[str, object], start: int, end: int) -> None:
        if "sessionId" in entry and "type" not in entry:
            self.session_id = str(entry.get("sessionId") or self.session_id)
            return
        record_id = entry.get("id")
        if entry.get("type") not in ("user", "gemini") or not isinstance(record_id, str):
            self.skipped += 1  # $set updates, info/error/warning records
            return
        first = self.records.get(record_id)
        self.records[record_id] = (entry, first[1] if first else start, end)

    def turns(self) -> tuple[Turn, ...]:
        found: list[Turn] = []
        for record_id, (record, start, end) in self.records.items():
            when = timestamp_of(record.get("timestamp"))
            if when is None:
                self.malformed += 1
                continue
            if record.get("type") == "user":
                turn = self._user(record_id, record, when, start, end)
            else:
                turn = self._model(record_id, record, when, start, end)
            if not turn.is_empty():
                found.append(turn.freeze(self.hidden))
        return tuple(found)

    def _user(
        self, record_id: str, record: Mapping[str, object], when: datetime, start: int, end: int
    ) -> TurnBuilder:
        turn = TurnBuilder(record_id, "user", when, self.session_id, start, end)
        raw = text_of(record.get("content"))
        if raw and not raw.lstrip().startswith(_CLI_CONTEXT):
            turn.texts.append(user_text(raw, self.hidden))
        for part in _parts(record.get("content")):
            response = part.get("functionResponse")
            if isinstance(response, Mapping):
                name = str(response.get("name") or "")
                output = json.dumps(response.get("response"), ensure_ascii=False)
                call_id = str(response.get("id") or "")
                ok = "error" not in output[:40]
                turn.result(ok, output, call_id, name, self.hidden)
        return turn

    def _model(
        self, record_id: str, record: Mapping[str, object], when: datetime, start: int, end: int
    ) -> TurnBuilder:
        turn = TurnBuilder(record_id, "assistant", when, self.session_id, start, end)
        content = record.get("content")
        turn.texts.append(user_text(text_of(content), self.hidden))
        for thought in _parts(record.get("thoughts")):
            if isinstance(thought.get("description"), str):
                turn.thinking.append(str(thought["description"]))
        for call in _parts(record.get("toolCalls")):
            name, call_id = str(call.get("name") or ""), str(call.get("id") or "")
            turn.call(name, call.get("args"), call_id, self.hidden)
        return turn


def _parts(content: object) -> list[Mapping[str, object]]:
    return [p for p in content if isinstance(p, Mapping)] if isinstance(content, list) else []
