"""The conversation a memory came from, for its page: the turns of its source session (Claude
Code's transcript, read in place) closest in time to the memory, while the transcript exists
(Claude Code deletes them after 30 days). Text is as the extractor saw it: `<private>` spans
removed and secrets redacted by the parser."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from local_recall.capture.transcripts import (
    Turn,
    find_transcripts,
    git_worktrees,
    parse_transcript,
    render_turn,
)
from local_recall.memory.model import Memory
from local_recall.memory.timestamps import format_timestamp
from local_recall.recall import Recall

MAX_TURNS = 12
MAX_TRANSCRIPT_BYTES = 64_000_000  # larger is not a transcript worth parsing for a page


def nearest_turns(turns: Sequence[Turn], moment: datetime, limit: int = MAX_TURNS) -> list[Turn]:
    """The `limit` turns with text closest in time to `moment`, in conversation order."""
    shown = [turn for turn in turns if render_turn(turn)]
    closest = sorted(
        range(len(shown)), key=lambda i: abs((shown[i].timestamp - moment).total_seconds())
    )
    return [shown[i] for i in sorted(closest[:limit])]


def session_turns(recall: Recall, memory: Memory) -> dict[str, Any]:
    if not memory.session:
        return {"session": None, "turns": None, "reason": "not extracted from a session"}
    found = [
        transcript
        for transcript in find_transcripts(
            recall.root, recall.settings.claude_config_dir, git_worktrees(recall.root)
        )
        if transcript.session_id == memory.session and not transcript.is_subagent
    ]
    if not found:
        reason = "the transcript no longer exists (Claude Code keeps them 30 days)"
        return {"session": memory.session, "turns": None, "reason": reason}
    transcript = found[0]
    if transcript.size > MAX_TRANSCRIPT_BYTES:
        return {"session": memory.session, "turns": None, "reason": "the transcript is too large"}
    parsed = parse_transcript(transcript.path)
    return {
        "session": memory.session,
        "path": str(transcript.path),
        "turns": [
            {"role": t.role, "at": format_timestamp(t.timestamp), "text": render_turn(t)}
            for t in nearest_turns(parsed.turns, memory.occurred_at)
        ],
        "reason": None,
    }
