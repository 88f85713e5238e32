"""The shared loop of the session parsers: complete JSONL lines from an offset (a partly written
last line is left for the next pass, an oversized one skipped unread), each JSON object handed to
the agent's assembler with its byte range. The same reader and private-span sweep as Claude Code's
parser (capture/transcripts/parse.py)."""

from __future__ import annotations

import io
import json
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import BinaryIO

from local_recall.capture.transcripts.model import ParsedTranscript, ParseStats, Turn
from local_recall.capture.transcripts.parse import (
    DEFAULT_MAX_LINE_BYTES,
    read_lines,
    session_private_texts,
)
from local_recall.errors import TranscriptUnreadable

logger = logging.getLogger(__name__)

SessionBytes = Path | bytes  # a session file, or its content


class Assembler:
    """What an agent's parser implements: fed entries in file order, returns turns."""

    def __init__(self, hidden: frozenset[str]) -> None:
        self.hidden = hidden
        self.malformed = 0
        self.skipped = 0

    def add(self, entry: Mapping[str, object], start: int, end: int) -> None:
        raise NotImplementedError

    def turns(self) -> tuple[Turn, ...]:
        raise NotImplementedError


def parse_session(
    source: SessionBytes,
    make: Callable[[frozenset[str]], Assembler],
    *,
    start_offset: int = 0,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> ParsedTranscript:
    """A vanished file reads as empty; one that cannot be read raises TranscriptUnreadable."""
    if isinstance(source, Path):
        try:
            with source.open("rb") as stream:
                if start_offset > os.fstat(stream.fileno()).st_size:
                    return ParsedTranscript((), start_offset, ParseStats())
                return _parse(stream, make, start_offset, max_line_bytes, str(source))
        except FileNotFoundError:
            return ParsedTranscript((), start_offset, ParseStats())
        except OSError as exc:
            raise TranscriptUnreadable(source, str(exc)) from exc
    if start_offset > len(source):
        return ParsedTranscript((), start_offset, ParseStats())
    return _parse(io.BytesIO(source), make, start_offset, max_line_bytes, "<memory>")


def _parse(
    stream: BinaryIO,
    make: Callable[[frozenset[str]], Assembler],
    start_offset: int,
    max_line_bytes: int,
    name: str,
) -> ParsedTranscript:
    assembler = make(session_private_texts(stream, max_line_bytes))
    end_offset, lines, oversized, malformed = start_offset, 0, 0, 0
    for line in read_lines(stream, start_offset, max_line_bytes):
        end_offset = line.end
        lines += 1
        if line.data is None:
            oversized += 1
            logger.warning("%s: skipped an oversized line at offset %d", name, line.start)
            continue
        if not line.data.strip():
            continue
        try:
            entry = json.loads(line.data)
        except (ValueError, RecursionError):
            entry = None
        if not isinstance(entry, dict):
            malformed += 1
            logger.warning("%s: malformed line at offset %d", name, line.start)
            continue
        assembler.add(entry, line.start, line.end)
    stats = ParseStats(
        lines=lines,
        malformed_lines=malformed + assembler.malformed,
        oversized_lines=oversized,
        skipped_entries=assembler.skipped,
    )
    return ParsedTranscript(assembler.turns(), end_offset, stats)
