"""Claude Code transcripts: find this repo's sessions, read them incrementally, condense them.

* `discovery` -- `git_worktrees`, `find_transcripts`: which `<config>/projects/<encoded-cwd>/
  *.jsonl` files belong to the repository (`project_dirs.encode_project_dir`: Claude Code's
  folder names).
* `parse` (+ `entries`) -- `parse_transcript`: JSONL from a byte offset to `Turn` values,
  dropping everything that is not conversation and cleaning what is kept (`<private>` spans
  removed, secrets redacted) once.
* `condense` -- turns to size-capped text chunks for an extractor, pure over values.
* `model` -- the values (`Turn`, `ToolCall`, `ToolResult`, `Chunk`, `TranscriptFile`), pure.
"""

from local_recall.capture.transcripts.condense import (
    DEFAULT_MAX_CHARS,
    TRUNCATION_MARKER,
    condense,
    render_turn,
)
from local_recall.capture.transcripts.discovery import (
    find_transcripts,
    git_worktrees,
    read_session_cwd,
    root_forms,
    select_transcripts,
    transcript_at,
)
from local_recall.capture.transcripts.entries import key_argument, strip_injected
from local_recall.capture.transcripts.model import (
    KEY_ARGUMENT_CHARS,
    RESULT_SNIPPET_CHARS,
    Chunk,
    ParsedTranscript,
    ParseStats,
    Role,
    ToolCall,
    ToolResult,
    TranscriptFile,
    Turn,
    resume_offset,
    split_turns_at,
)
from local_recall.capture.transcripts.parse import DEFAULT_MAX_LINE_BYTES, parse_transcript
from local_recall.capture.transcripts.project_dirs import encode_project_dir

__all__ = [
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MAX_LINE_BYTES",
    "KEY_ARGUMENT_CHARS",
    "RESULT_SNIPPET_CHARS",
    "TRUNCATION_MARKER",
    "Chunk",
    "ParseStats",
    "ParsedTranscript",
    "Role",
    "ToolCall",
    "ToolResult",
    "TranscriptFile",
    "Turn",
    "condense",
    "encode_project_dir",
    "find_transcripts",
    "git_worktrees",
    "key_argument",
    "parse_transcript",
    "read_session_cwd",
    "render_turn",
    "resume_offset",
    "root_forms",
    "select_transcripts",
    "split_turns_at",
    "strip_injected",
    "transcript_at",
]
