"""Where a pass finds sessions, and what it sees of each before deciding anything.

A `SessionSource` is one coding agent's session files: which belong to this repository, and
how to read one from a byte offset into turns. Claude Code's is `ClaudeCodeSessions`
(transcripts/: `~/.claude/projects/<encoded cwd>/*.jsonl`, JSONL cleaned once as it is read).
Another agent's sessions plug in by implementing the same two methods: observing, planning,
carrying out and reporting do not change.

`observe` turns what a source found into one `Observation` per transcript: the file, and the
values the planner compares with the stored progress — its key, size, mtime and the fingerprint
of the prefix the state says was processed, computed here and nowhere else in a pass's planning.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from local_recall.capture.pipeline_plan import Observed
from local_recall.capture.progress import PipelineState
from local_recall.capture.progress_file import prefix_fingerprint
from local_recall.capture.transcripts.discovery import select_transcripts
from local_recall.capture.transcripts.model import ParsedTranscript, TranscriptFile
from local_recall.capture.transcripts.parse import parse_transcript
from local_recall.capture.writer import memory_source


class SessionSource(Protocol):
    """One agent's sessions for one repository."""

    def find(self) -> Sequence[TranscriptFile]:
        """The session files that belong to the repository, as they are now."""
        ...

    def read(self, path: Path, start_offset: int) -> ParsedTranscript:
        """The turns from `start_offset` on, cleaned (`<private>` spans removed, secrets
        redacted). Raises TranscriptUnreadable."""
        ...

    def memory_source(self, transcript: TranscriptFile) -> str:
        """The `source` of a memory extracted from `transcript`: which agent, which session."""
        ...


@dataclass(frozen=True, slots=True)
class ClaudeCodeSessions:
    """Claude Code's transcripts of the repository at `root` (its subdirectories, git worktrees
    and subagents), under `config_dir`; `given`: use these instead of looking; `only_path`:
    just this file (it need not belong to the repository)."""

    root: Path
    config_dir: Path
    given: Sequence[TranscriptFile] | None = None
    only_path: Path | None = None

    def find(self) -> Sequence[TranscriptFile]:
        return select_transcripts(
            self.root, self.config_dir, given=self.given, only_path=self.only_path
        )

    def read(self, path: Path, start_offset: int) -> ParsedTranscript:
        return parse_transcript(path, start_offset=start_offset)

    def memory_source(self, transcript: TranscriptFile) -> str:
        return memory_source(transcript)


@dataclass(frozen=True, slots=True)
class Observation:
    """One transcript as a pass sees it before deciding anything."""

    transcript: TranscriptFile
    seen: Observed  # what `plan_pass` compares with the state (`seen.path` is the key)

    @property
    def key(self) -> str:
        return self.seen.path


def transcript_key(path: Path) -> str:
    """How the state names a transcript: its absolute path."""
    return os.path.abspath(path)


def observe(files: Sequence[TranscriptFile], state: PipelineState) -> list[Observation]:
    """One observation per file. The prefix is fingerprinted only when the file changed since
    its progress was stored (an unchanged size and mtime need no look inside)."""
    observations = []
    for transcript in files:
        key = transcript_key(transcript.path)
        entry = state.get(key)
        prefix = None
        if entry is not None and (transcript.size, transcript.mtime_ns) != (
            entry.size,
            entry.mtime_ns,
        ):
            prefix = prefix_fingerprint(transcript.path, entry.offset)
        seen = Observed(key, transcript.session_id, transcript.size, transcript.mtime_ns, prefix)
        observations.append(Observation(transcript, seen))
    return observations
