"""A hook's whole answer, asked of the daemon (op `answer`, daemon/query_client.py): the hook's
process sends the prompt (or the session start) and the variables its settings depend on; the
daemon searches with its warm model and index, picks the tiers, reads the session's record and
renders the text (context/hook_answers.py, the code every other path runs). The hook's process
then only shows the text and appends the record's line (`shown`): a prompt costs it json and a
socket, not the context modules (hooks/answers.py).

    {"op": "answer", "kind": "prompt", "agent", "prompt", "session_id", "prompt_id", "hook_env",
     "tools": true when the asker's agent can open a pointer with an MCP tool (the MCP server)}
        -> {"ok": true, "text": "..." | "", "shown": "<the session record's line>" | null,
            "session_key": "<its file's name: learning/shown.py>" | null}
    {"op": "answer", "kind": "session_start", "agent", "source", "session_id", "hook_env",
     "env"}
        -> {"ok": true, "text": "..." | ""}

The settings are the hook's: read with its `hook_env` (LOCAL_RECALL_*, the user config's and
cache's places), from the same cached file it would read.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from local_recall.context.hook_answers import (
    NOTHING,
    prompt_answer,
    session_ask,
    session_start_answer,
    tools_ready,
)
from local_recall.context.hook_settings import checked_hook_environment, read_hook_settings
from local_recall.context.notes import Note
from local_recall.context.prompt import PromptAsk
from local_recall.context.session import SESSION_SOURCES, SessionAsk, SessionNotes
from local_recall.errors import InvalidInput
from local_recall.learning.shown import session_key
from local_recall.repo.layout import resolve_layout

_AGENT = re.compile(r"[a-z][a-z_]{0,31}")
MAX_ID_CHARS = 256


def answer_reply(
    request: Mapping[str, Any],
    root: Path,
    *,
    prompt_notes: Callable[[PromptAsk], list[Note]],
    session_notes: Callable[[SessionAsk], SessionNotes],
) -> dict[str, Any]:
    """The reply to an `answer` request for the repository at `root`; InvalidInput names a bad
    field. `prompt_notes` / `session_notes`: the daemon's own searches."""
    kind = request.get("kind")
    if kind not in ("prompt", "session_start"):
        raise InvalidInput("answer: 'kind' must be 'prompt' or 'session_start'")
    environ = checked_hook_environment(request.get("hook_env", {}))
    if environ is None:
        raise InvalidInput("answer: 'hook_env' must map LOCAL_RECALL_* and XDG names to strings")
    agent = request.get("agent")
    agent = agent if isinstance(agent, str) and _AGENT.fullmatch(agent) else "hooks"
    logger = logging.getLogger(f"local_recall.{agent}.hooks")
    layout = resolve_layout(root, environ)
    settings = read_hook_settings(layout, environ)
    session_id = _text(request, "session_id", MAX_ID_CHARS)
    if kind == "session_start":
        source = request.get("source")
        ask = session_ask(
            settings, source if source in SESSION_SOURCES else "startup", session_id, root
        )
        return {"ok": True, "text": session_start_answer(settings, ask, session_notes(ask))}
    prompt = request.get("prompt")
    if not isinstance(prompt, str):
        raise InvalidInput("answer: 'prompt' must be a string")
    answer = prompt_answer(
        prompt,
        settings,
        layout,
        prompt_notes,
        lambda level, message: logger.log(logging.getLevelName(level), message),
        session_id=session_id,
        prompt_id=_text(request, "prompt_id", MAX_ID_CHARS),
        tools=tools_ready(agent, server=request.get("tools") is True),
    )
    if answer is None:  # the daemon's own search never declines; kept total for the type
        answer = NOTHING
    if answer.shown is None:
        return {"ok": True, "text": answer.text, "shown": None, "session_key": None}
    key = session_key(session_id)
    return {"ok": True, "text": answer.text, "shown": answer.shown.to_line(), "session_key": key}


def _text(request: Mapping[str, Any], key: str, limit: int) -> str:
    value = request.get(key)
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > limit:
        raise InvalidInput(f"answer: {key!r} must be a string of at most {limit} characters")
    return value
