"""Codex CLI rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`, 0.169) as turns.

Lines are `{"timestamp", "type", "payload"}`. Conversation lives in `response_item` lines:
`message` (role `user`, `assistant`, or `developer` — the harness's and hooks' text, whose
`hooks.additional_context` items are where our injected memories land: never read),
`function_call` / `custom_tool_call` (name, arguments; MCP tools carry their `namespace`) and
their `*_output`. A user message the harness writes (`<environment_context>`, AGENTS.md, skills)
is not the user's words and is dropped. Everything else (`session_meta`, `turn_context`,
`event_msg`, `world_state`, `token_usage_record`, …) is bookkeeping."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from local_recall.capture.sessions.reading import Assembler, parse_session
from local_recall.capture.sessions.turns import (
    TurnBuilder,
    qualified_tool,
    text_of,
    timestamp_of,
    user_text,
)
from local_recall.capture.transcripts.model import ParsedTranscript, Role, Turn
from local_recall.capture.transcripts.parse import DEFAULT_MAX_LINE_BYTES

_HARNESS_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "<skills_instructions>",
    "<permissions",
    "# AGENTS.md instructions",
    "<turn_aborted>",
)


def parse_codex_rollout(
    source: Path | bytes, *, start_offset: int = 0, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> ParsedTranscript:
    return parse_session(
        source, _CodexAssembler, start_offset=start_offset, max_line_bytes=max_line_bytes
    )


class _CodexAssembler(Assembler):
    def __init__(self, hidden: frozenset[str]) -> None:
        super().__init__(hidden)
        self.session_id = ""
        self.done: list[Turn] = []
        self.open: TurnBuilder | None = None
        self.call_names: dict[str, str] = {}

    def add(self, entry: Mapping[str, object], start: int, end: int) -> None:
        payload = entry.get("payload")
        if not isinstance(payload, Mapping):
            self.skipped += 1
            return
        if entry.get("type") == "session_meta" and isinstance(payload.get("id"), str):
            self.session_id = str(payload["id"])
        if entry.get("type") != "response_item":
            self.skipped += 1
            return
        when = timestamp_of(entry.get("timestamp"))
        if when is None:
            self.malformed += 1
            return
        kind = payload.get("type")
        if kind == "message":
            self._message(payload, when, start, end)
        elif kind in ("function_call", "custom_tool_call"):
            self._call(payload, when, start, end)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self._output(payload, when, start, end)
        else:
            self.skipped += 1  # reasoning (encrypted), web search, compaction, ...

    def _message(self, payload: Mapping[str, object], when: datetime, start: int, end: int) -> None:
        role = payload.get("role")
        raw = text_of(payload.get("content"))
        if role == "assistant":
            turn = self._turn("assistant", payload, when, start, end)
            turn.texts.append(user_text(raw, self.hidden))
            return
        if role != "user" or raw.lstrip().startswith(_HARNESS_PREFIXES):
            self.skipped += 1  # developer (harness, hooks) and harness-written user items
            return
        self._close()
        text = user_text(raw, self.hidden)
        if text:
            turn = self._turn("user", payload, when, start, end)
            turn.texts.append(text)
            self._close()

    def _call(self, payload: Mapping[str, object], when: datetime, start: int, end: int) -> None:
        name = qualified_tool(str(payload.get("name") or ""), str(payload.get("namespace") or ""))
        raw = payload.get("arguments", payload.get("input"))
        try:
            arguments = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            arguments = {"input": raw}
        if not isinstance(arguments, Mapping):
            arguments = {"input": str(raw)}
        call_id = str(payload.get("call_id") or "")
        self.call_names[call_id] = name
        self._turn("assistant", payload, when, start, end).call(
            name, arguments, call_id, self.hidden
        )

    def _output(self, payload: Mapping[str, object], when: datetime, start: int, end: int) -> None:
        call_id = str(payload.get("call_id") or "")
        output = payload.get("output")
        text = output if isinstance(output, str) else text_of(output) or json.dumps(output)
        ok = not _failed(text)
        turn = self._turn("user", payload, when, start, end)
        turn.result(ok, text, call_id, self.call_names.get(call_id, ""), self.hidden)

    def _turn(
        self, role: Role, payload: Mapping[str, object], when: datetime, start: int, end: int
    ) -> TurnBuilder:
        if self.open is not None and self.open.role != role:
            self._close()
        if self.open is None:
            uid = str(payload.get("id") or payload.get("call_id") or f"codex-{start}")
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


def _failed(output: str) -> bool:
    """Codex prefixes command output with `Exit code: N` / `Process exited with code N`."""
    head = output[:300]
    for marker in ("Exit code: ", "Process exited with code "):
        at = head.find(marker)
        if at >= 0:
            digits = head[at + len(marker) :].split(None, 1)[:1]
            return bool(digits) and digits[0].strip(",.") not in ("0",)
    return False
