"""JSONL to turns: `parse_transcript` reads a transcript from a byte offset, line by line,
without ever loading an oversized line, and hands each entry to the `TurnAssembler`."""

from __future__ import annotations

import io
import json
import logging
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from local_recall.capture.transcripts.entries import Counters, TurnAssembler
from local_recall.capture.transcripts.model import ParsedTranscript, ParseStats
from local_recall.errors import TranscriptUnreadable
from local_recall.redaction.private import private_texts

logger = logging.getLogger(__name__)

DEFAULT_MAX_LINE_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class _Line:
    number: int
    start: int
    end: int
    data: bytes | None  # None: over the size limit, skipped without reading it into memory


_SKIP_BLOCK = 1 << 20


def read_lines(
    stream: BinaryIO, start: int, max_line_bytes: int, *, stop_after: int | None = None
) -> Iterator[_Line]:
    """Complete lines from `start`. A last line without newline is not yielded (still being
    written). A line over `max_line_bytes` is yielded without data, streamed past in blocks.
    With `stop_after`, reading ends once that many bytes have been gone through."""
    stream.seek(start)
    offset, number = start, 0
    while True:
        if stop_after is not None and offset - start >= stop_after:
            return
        data = stream.readline(max_line_bytes + 1)
        if data.endswith(b"\n"):
            yield _Line(number, offset, offset + len(data), data)
            offset += len(data)
            number += 1
            continue
        if len(data) <= max_line_bytes:
            return  # end of file, possibly inside a partly written line
        skipped = len(data)
        del data
        while True:
            if stop_after is not None and skipped >= stop_after:
                return
            block = stream.read(_SKIP_BLOCK)
            if not block:
                return  # an oversized line still being written: leave it for the next pass
            newline = block.find(b"\n")
            if newline >= 0:
                skipped += newline + 1
                stream.seek(offset + skipped)
                break
            skipped += len(block)
        yield _Line(number, offset, offset + skipped, None)
        offset += skipped
        number += 1


TranscriptSource = Path | bytes | Sequence[str]


def parse_transcript(
    source: TranscriptSource,
    *,
    start_offset: int = 0,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> ParsedTranscript:
    """Read a transcript from `start_offset` (a value a previous pass returned as end_offset).

    `source` is a file, the raw JSONL bytes, or complete lines (newline added to each).
    Malformed lines are skipped, counted and logged; oversized lines are skipped without being
    loaded; unknown entry types are ignored; a partly written last line is left for later.
    A file that no longer exists reads as empty; one that cannot be read raises
    `TranscriptUnreadable`."""
    if isinstance(source, str):
        raise TypeError("parse_transcript takes a Path, bytes or a sequence of lines, not str")
    if isinstance(source, Path):
        try:
            with source.open("rb") as stream:
                if start_offset > os.fstat(stream.fileno()).st_size:
                    return ParsedTranscript((), start_offset, ParseStats())
                return _parse_stream(stream, start_offset, max_line_bytes, str(source))
        except FileNotFoundError:
            return ParsedTranscript((), start_offset, ParseStats())  # deleted: nothing to read
        except OSError as exc:
            raise TranscriptUnreadable(source, str(exc)) from exc
    data = source if isinstance(source, bytes) else "".join(f"{x}\n" for x in source).encode()
    if start_offset > len(data):
        return ParsedTranscript((), start_offset, ParseStats())
    return _parse_stream(io.BytesIO(data), start_offset, max_line_bytes, "<memory>")


# A `\ud800`-style escape: JSON may encode half a surrogate pair, which Python decodes into a
# str that cannot be encoded as UTF-8 (the extractor's stdin, a memory file).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _without_lone_surrogates(entry: dict[str, object]) -> object:
    """The entry with lone surrogates dropped (escaped pairs were already joined by json)."""
    text = json.dumps(entry, ensure_ascii=False).encode("utf-8", "ignore")
    return json.loads(text)


# A line that may hold a private tag, in any spelling (`< Private reason="…">`, `</PRIVATE >`).
_MAY_BE_PRIVATE = re.compile(rb"(?i)<\s*/?\s*private")
_MAX_STRINGS = 10_000


def _strings(value: object, out: list[str]) -> None:
    """Every string inside a JSON value (bounded: a hostile line cannot make this unbounded)."""
    stack = [value]
    while stack and len(out) < _MAX_STRINGS:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def session_private_texts(stream: BinaryIO, max_line_bytes: int) -> frozenset[str]:
    """What every `<private>` span of the whole session held, from its first line on, so that a
    pass reading only the new lines still removes the assistant repeating a private value that
    was given earlier. Lines without a private tag are not decoded (a byte search per line)."""
    texts: list[str] = []
    for line in read_lines(stream, 0, max_line_bytes):
        if line.data is None or not _MAY_BE_PRIVATE.search(line.data):
            continue
        try:
            _strings(json.loads(line.data), texts)
        except (ValueError, RecursionError):
            continue
    return private_texts(texts)


def _parse_stream(
    stream: BinaryIO, start_offset: int, max_line_bytes: int, name: str
) -> ParsedTranscript:
    counters = Counters()
    assembler = TurnAssembler(counters, session_private_texts(stream, max_line_bytes))
    end_offset = start_offset
    for line in read_lines(stream, start_offset, max_line_bytes):
        end_offset = line.end
        counters.lines += 1
        if line.data is None:
            counters.oversized_lines += 1
            logger.warning(
                "%s: skipped a %d-byte line at offset %d (limit %d)",
                name,
                line.end - line.start,
                line.start,
                max_line_bytes,
            )
            continue
        if not line.data.strip():
            continue
        try:
            entry = json.loads(line.data)
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError; deep nesting
            entry, error = None, str(exc)[:120]
        else:
            error = "not a JSON object"
        if isinstance(entry, dict) and _SURROGATE_ESCAPE.search(line.data):
            entry = _without_lone_surrogates(entry)
        if not isinstance(entry, dict):
            counters.malformed_lines += 1
            logger.warning("%s: malformed line at offset %d: %s", name, line.start, error)
            continue
        assembler.add(entry, line.start, line.end)
    return ParsedTranscript(assembler.turns(), end_offset, counters.freeze())
