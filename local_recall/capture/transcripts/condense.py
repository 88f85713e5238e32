"""Turns to size-capped text chunks for an extractor (`condense`): pure over `Turn` values.

The turns come cleaned from the parser (`<private>` spans removed, secrets redacted), so
rendering only formats and cuts: nothing here scans a text again.
"""

from __future__ import annotations

from collections.abc import Sequence

from local_recall.capture.transcripts.model import RESULT_SNIPPET_CHARS, Chunk, Turn
from local_recall.text import one_line

DEFAULT_MAX_CHARS = 24_000
_TOOL_LINE_CHARS = 220
_CONTEXT_HEADER = "[Earlier turns, context only: already processed]"
_NEW_HEADER = "[New turns]"
NEW_TURNS_HEADER = _NEW_HEADER  # where a chunk's new turns start (the pipeline searches them)


def render_turn(turn: Turn) -> str:
    """The extractor's view of a turn: its text, one line per tool call and per tool result.
    Thinking is left out. Empty when nothing is left."""
    label = "User" if turn.role == "user" else "Assistant"
    if turn.is_sidechain:
        label = f"[subagent] {label}"
    lines: list[str] = []
    text = turn.text.strip()
    if text:
        lines.append(f"{label}: {text}")
    for call in turn.tool_calls:
        argument = call.key_argument.strip()
        line = f"[tool] {call.name}: {argument}" if argument else f"[tool] {call.name}"
        lines.append(one_line(line, _TOOL_LINE_CHARS))
    for result in turn.tool_results:
        status = "OK" if result.ok else "ERROR"
        snippet = one_line(result.snippet, RESULT_SNIPPET_CHARS)
        lines.append(f"-> {status}: {snippet}".rstrip())
    return "\n".join(lines)


TRUNCATION_MARKER = "\n[... cut: too long ...]\n"


def _clamp(text: str, limit: int) -> str:
    """At most `limit` characters: an over-long text keeps its head (2/3) and its tail (1/3,
    where a long answer usually concludes) around TRUNCATION_MARKER."""
    if len(text) <= limit:
        return text
    room = limit - len(TRUNCATION_MARKER)
    if room <= 0:
        return text[:limit]
    head = room * 2 // 3
    return text[:head] + TRUNCATION_MARKER + text[len(text) - (room - head) :]


def _context_text(blocks: Sequence[str], max_chars: int) -> str:
    if not blocks:
        return ""
    per_turn, total = max_chars // 8, max_chars // 4
    body = _clamp("\n\n".join(_clamp(block, per_turn) for block in blocks), total)
    return f"{_CONTEXT_HEADER}\n{body}\n\n{_NEW_HEADER}\n"


def condense(
    turns: Sequence[Turn],
    *,
    max_chars: int = DEFAULT_MAX_CHARS,
    context: Sequence[Turn] = (),
    context_turns: int = 2,
) -> list[Chunk]:
    """Render turns into chunks of at most `max_chars` characters, split at turn boundaries
    (and where the session changes). A turn too big for a chunk on its own is cut in the middle
    with a marker. Each chunk opens with up to `context_turns` earlier turns marked as context:
    for the first chunk the tail of `context` (turns an earlier pass already handled), for the
    next ones the end of the previous chunk. Context takes at most a quarter of a chunk."""
    if max_chars < 400:
        raise ValueError(f"max_chars must be at least 400, got {max_chars}")
    rendered = [(turn, block) for turn in turns if (block := render_turn(turn))]
    chunks: list[Chunk] = []
    carried = [block for turn in context if (block := render_turn(turn))]
    session = rendered[0][0].session_id if rendered else ""
    members: list[tuple[Turn, str]] = []
    prefix = _context_text(carried[-context_turns:] if context_turns > 0 else [], max_chars)

    def flush() -> None:
        body = "\n\n".join(block for _, block in members)
        chunks.append(
            Chunk(
                text=prefix + body,
                session_id=session,
                first_timestamp=members[0][0].timestamp,
                last_timestamp=members[-1][0].timestamp,
                turn_uuids=tuple(turn.uuid for turn, _ in members),
            )
        )

    for turn, block in rendered:
        if members and turn.session_id != session:
            flush()
            members, prefix, session = [], "", turn.session_id
        budget = max_chars - len(prefix)
        used = sum(len(b) for _, b in members) + 2 * len(members)
        if members and used + len(block) > budget:
            flush()
            recent = [b for _, b in members[-context_turns:]] if context_turns > 0 else []
            members, prefix = [], _context_text(recent, max_chars)
            budget = max_chars - len(prefix)
        members.append((turn, _clamp(block, budget)))
    if members:
        flush()
    return chunks
