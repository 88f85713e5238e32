"""The real Claude Code transcripts the tests read, committed in tests/fixtures/claude-code/.

Recorded with the pinned CLI by tests/record_claude_fixtures.py (its README says what each file
holds and how to record them again). Tests take ids, offsets and timestamps from the files, not
from literals, so a re-recording only changes what the CLI itself changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "claude-code"


def _only(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    if len(found) != 1:
        raise FileNotFoundError(f"expected one {pattern} in {folder}, found {found}")
    return found[0]


T01 = FIXTURES / "01-hooks-sessionstart-userpromptsubmit.jsonl"
T02 = FIXTURES / "02-bash-tooluse-thinking-gitbranch.jsonl"
T03 = FIXTURES / "03-mcp-tooluse.jsonl"
T04 = _only(FIXTURES / "04-subagent", "*.jsonl")
T04_SESSION = T04.stem
T04_AGENT = _only(FIXTURES / "04-subagent" / T04_SESSION / "subagents", "agent-*.jsonl")
T05 = FIXTURES / "05-resume-and-compact.jsonl"
ALL_REAL = (T01, T02, T03, T04, T04_AGENT, T05)
for _path in ALL_REAL:
    if not _path.is_file():  # a missing fixture fails collection: it never skips
        raise FileNotFoundError(_path)


def entries(path: Path) -> list[dict[str, Any]]:
    """The transcript's JSON lines, as the CLI wrote them."""
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]
