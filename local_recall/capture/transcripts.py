"""Claude Code transcripts: find this repo's sessions, read them incrementally, condense them.

Three stages, each usable alone:

* collector -- `encode_project_dir`, `git_worktrees`, `find_transcripts`: which
  `<config>/projects/<encoded-cwd>/*.jsonl` files belong to the repository. Files are read in
  place; nothing is copied. Claude Code deletes transcripts after 30 days (`cleanupPeriodDays`),
  so nothing here may depend on a file staying: the extracted memories are the durable output.
* parser -- `parse_transcript`: JSONL from a byte offset to `Turn` values, dropping everything
  that is not conversation (hook output we injected, compaction summaries, bookkeeping entries).
* condenser -- `condense`: turns to size-capped text chunks for an extractor, pure over values.

Entry shapes were checked on Claude Code 2.1.197 transcripts (see docs/pipeline.md#transcripts).
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import subprocess
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO, Literal

from local_recall.errors import TranscriptUnreadable
from local_recall.redaction.secrets import redact, remove_private

logger = logging.getLogger(__name__)

# --------------------------------------------------------------------------------------------
# Collector
# --------------------------------------------------------------------------------------------

# Claude Code 2.1.197 (bundled JS in the native binary; minified names `$E`, `fNu`, `jCe`):
#   function jCe(e){let t=0;for(let n=0;n<e.length;n++)t=(t<<5)-t+e.charCodeAt(n)|0;return t}
#   function $E(e){let t=e.replace(/[^a-zA-Z0-9]/g,"-");if(t.length<=200)return t;
#                   return`${t.slice(0,200)}-${Math.abs(jCe(e)).toString(36)}`}
# i.e. a Java-style 31-hash over the UTF-16 code units of the *original* path, as a signed
# 32-bit int, absolute value in base 36. Same finding: heiervang-technologies/unleash PR #237.
# Checked by running the CLI in long and non-ASCII directories (docs/pipeline.md#transcripts).
_MAX_ENCODED_LENGTH = 200
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def _js_string_hash(text: str) -> int:
    """`(h << 5) - h + charCodeAt(i) | 0` over UTF-16 code units, as JS computes it."""
    units = text.encode("utf-16-le", "surrogatepass")
    value = 0
    for i in range(0, len(units), 2):
        value = (value * 31 + (units[i] | units[i + 1] << 8)) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _base36(number: int) -> str:
    digits = ""
    while True:
        number, rest = divmod(number, 36)
        digits = _BASE36[rest] + digits
        if number == 0:
            return digits


def _sanitize(path: str) -> str:
    # JS regexes without the `u` flag see UTF-16 code units: a character outside the BMP
    # (an emoji) is two units and so becomes two dashes.
    return "".join(
        ch if ch.isascii() and ch.isalnum() else ("--" if ord(ch) > 0xFFFF else "-") for ch in path
    )


def encode_project_dir(path: str) -> str:
    """The name Claude Code gives `<config>/projects/<name>` for sessions started in `path`."""
    sanitized = _sanitize(path)
    if len(sanitized) <= _MAX_ENCODED_LENGTH:
        return sanitized
    digest = _base36(abs(_js_string_hash(path)))
    return f"{sanitized[:_MAX_ENCODED_LENGTH]}-{digest}"


@dataclass(frozen=True, slots=True)
class TranscriptFile:
    path: Path
    # The file's stem: the session UUID, or `agent-<id>` for a subagent transcript.
    session_id: str
    is_subagent: bool
    parent_session_id: str | None  # the session that spawned a subagent
    size: int
    mtime_ns: int


def git_worktrees(repo_root: Path) -> list[Path]:
    """Every worktree of the repository holding `repo_root` (main first), from
    `git worktree list --porcelain`. Not a git repository, or no git: an empty list."""
    for extra in (["-z"], []):  # -z (git >= 2.36) keeps odd path characters intact
        try:
            done = subprocess.run(
                ["git", "-C", str(repo_root), "worktree", "list", "--porcelain", *extra],
                capture_output=True,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            logger.debug("git worktree list failed in %s: %s", repo_root, exc)
            return []
        if done.returncode == 0:
            separator = b"\0" if extra else b"\n"
            return [
                Path(os.fsdecode(record[len(b"worktree ") :]))
                for record in done.stdout.split(separator)
                if record.startswith(b"worktree ")
            ]
        logger.debug("git worktree list %s failed in %s: %s", extra, repo_root, done.stderr[-300:])
    return []


def _root_forms(paths: Iterable[Path]) -> list[str]:
    """Each root as given (made absolute) and fully resolved: Claude Code records its process
    cwd, which is usually the physical path, but a logical (symlinked) one costs nothing."""
    forms: list[str] = []
    for path in paths:
        for form in (os.path.abspath(path), str(Path(path).resolve())):
            if form not in forms and form != os.sep:
                forms.append(form)
    return forms


def _candidate_prefix(root: str) -> str:
    """Directories of sessions started below `root` start with this.

    A subdirectory encodes to the root's encoding + "-" + more; past 200 characters only the
    first 200 survive, followed by "-<hash>" (Claude Code itself matches long paths on that
    prefix). Look-alikes (`/repo-other`, `/repo.other` and `/repo/other` all encode alike) are
    weeded out by the `cwd` recorded in the file."""
    return _sanitize(root)[:_MAX_ENCODED_LENGTH] + "-"


def _is_within(cwd: str, roots: Sequence[str]) -> bool:
    for root in roots:
        base = root.rstrip("/\\")
        if cwd == root or cwd.startswith((base + "/", base + os.sep)):
            return True
    return False


_CWD_PROBE_LINES = 40
_CWD_PROBE_MAX_LINE = 1 << 20
_CWD_PROBE_MAX_BYTES = 16 << 20


def read_session_cwd(path: Path) -> str | None:
    """The `cwd` of the first entry that records one (the directory the session started in),
    or None if the first lines hold none. Oversized lines are streamed past, not loaded."""
    try:
        with path.open("rb") as stream:
            lines = _read_lines(stream, 0, _CWD_PROBE_MAX_LINE, stop_after=_CWD_PROBE_MAX_BYTES)
            for line in lines:
                if line.number >= _CWD_PROBE_LINES:
                    return None
                if line.data is None:
                    continue
                try:
                    entry = json.loads(line.data)
                except ValueError:
                    continue
                if isinstance(entry, dict) and isinstance(entry.get("cwd"), str):
                    return str(entry["cwd"])
    except OSError as exc:
        logger.debug("cannot read %s: %s", path, exc)
    return None


def find_transcripts(
    repo_root: Path, claude_config_dir: Path, worktrees: Sequence[Path] = ()
) -> list[TranscriptFile]:
    """This repository's transcripts under `<claude_config_dir>/projects/`: sessions started in
    the root, in any subdirectory of it, or in one of `worktrees` (see `git_worktrees`), and
    their subagents' transcripts. A file belongs to the repo when the `cwd` its first entries
    record is inside one of those roots; when no `cwd` can be found yet, only a directory whose
    name is exactly a root's encoding counts. Sorted by path."""
    projects = claude_config_dir / "projects"
    roots = _root_forms([repo_root, *worktrees])
    exact_names = {encode_project_dir(root) for root in roots}
    prefixes = tuple(_candidate_prefix(root) for root in roots)
    try:
        directories = sorted(entry for entry in projects.iterdir() if entry.is_dir())
    except OSError:
        return []
    found: list[TranscriptFile] = []
    for directory in directories:
        if directory.name not in exact_names and not directory.name.startswith(prefixes):
            continue
        exact = directory.name in exact_names
        sessions = [(path, None) for path in sorted(directory.glob("*.jsonl"))]
        subagents = [
            (path, path.parent.parent.name)
            for path in sorted(directory.glob("*/subagents/agent-*.jsonl"))
        ]
        for path, parent in [*sessions, *subagents]:
            transcript = _if_ours(path, parent, roots=roots, exact_dir=exact)
            if transcript is not None:
                found.append(transcript)
    return sorted(found, key=lambda transcript: transcript.path)


def _if_ours(
    path: Path, parent_session_id: str | None, *, roots: Sequence[str], exact_dir: bool
) -> TranscriptFile | None:
    cwd = read_session_cwd(path)
    if not ((exact_dir and cwd is None) or (cwd is not None and _is_within(cwd, roots))):
        return None
    try:
        stat = path.stat()
    except OSError:
        return None  # deleted meanwhile (Claude Code's 30-day cleanup)
    return TranscriptFile(
        path=path,
        session_id=path.stem,
        is_subagent=parent_session_id is not None,
        parent_session_id=parent_session_id,
        size=stat.st_size,
        mtime_ns=stat.st_mtime_ns,
    )


# --------------------------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------------------------

DEFAULT_MAX_LINE_BYTES = 5 * 1024 * 1024
KEY_ARGUMENT_CHARS = 200
RESULT_SNIPPET_CHARS = 200

Role = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    key_argument: str  # one line, at most KEY_ARGUMENT_CHARS, redacted; "" if the tool has none
    tool_use_id: str = ""


@dataclass(frozen=True, slots=True)
class ToolResult:
    ok: bool
    snippet: str  # one line, at most RESULT_SNIPPET_CHARS, secrets redacted
    tool_use_id: str = ""
    tool_name: str = ""  # "" when the call was not in the same parse


@dataclass(frozen=True, slots=True)
class Turn:
    """One user message, or one assistant API message (its lines merged). A user entry that
    only carries tool results is a `user` turn with empty text."""

    uuid: str
    role: Role
    timestamp: datetime  # UTC
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    thinking: str = ""  # never rendered by `condense`; kept for verbatim storage
    session_id: str = ""  # the entry's sessionId (a subagent's entries carry its parent's)
    is_sidechain: bool = False
    message_id: str | None = None
    start_offset: int = 0  # byte offset of the turn's first line
    end_offset: int = 0  # byte offset just past the turn's last line


@dataclass(frozen=True, slots=True)
class ParseStats:
    lines: int = 0  # complete lines consumed (blank ones included)
    malformed_lines: int = 0  # not JSON, or not a JSON object
    oversized_lines: int = 0  # longer than max_line_bytes: skipped unread
    merged_lines: int = 0  # assistant lines folded into an earlier line's turn
    skipped_entries: int = 0  # known non-conversation entries (attachments, summaries, ...)
    unknown_entries: int = 0  # entry types this version does not know
    injected_spans_removed: int = 0  # hook/harness text cut out of user content


@dataclass(frozen=True, slots=True)
class ParsedTranscript:
    turns: tuple[Turn, ...]
    # Where the next pass starts. A last line without its newline is still being written: it is
    # not consumed. If the file is now shorter than `start_offset` it was replaced: re-read it
    # from 0 (nothing is returned and end_offset == start_offset).
    end_offset: int
    stats: ParseStats


# Entry types that never hold conversation. Anything else that is not user/assistant is
# counted as unknown and ignored too (the set changes between Claude Code versions).
_NON_CONVERSATION_TYPES = frozenset(
    {
        "attachment",  # hook output (hook_success, hook_additional_context), listings, ...
        "system",  # compact_boundary, local_command, ...
        "summary",
        "queue-operation",
        "last-prompt",
        "mode",
        "file-history-snapshot",
        "custom-title",
        "progress",
        "attribution-snapshot",
    }
)

# Text that the harness or a hook put into user content: never the user's words. Our own hooks
# wrap everything they inject in <local-recall-context>; an unclosed tag drops the rest of the
# field, so injected memories can never come back in as "new" conversation.
_INJECTED_SPAN = re.compile(
    r"<(local-recall-context|system-reminder|user-prompt-submit-hook|session-start-hook"
    r"|local-command-caveat|local-command-stdout|local-command-stderr)>.*?(?:</\1>|\Z)",
    re.DOTALL,
)
# Results of our own MCP read tools are memories we served: like hook output, they must never
# come back as "new" knowledge. Server names vary (`local-recall`, a plugin's prefixed name).
_OWN_READ_TOOL = re.compile(
    r"^mcp__(?:plugin_local-recall_)?local-recall__"
    r"(?:search_memories|get_memories|memory_timeline|recent_memories)$"
)
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>", re.DOTALL)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)

# The argument that says what a call did; other tools fall back to their first string argument.
_KEY_ARGUMENTS: Mapping[str, str] = {
    "Bash": "command",
    "Read": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "Write": "file_path",
    "NotebookEdit": "notebook_path",
    "Grep": "pattern",
    "Glob": "pattern",
    "WebFetch": "url",
    "WebSearch": "query",
    "web_search": "query",
    "Agent": "description",
    "Task": "description",
}


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# Secrets are redacted before a text is folded and cut: a secret cut in two is no longer
# recognisable and its visible part would reach the extractor. Only the head of a long text can
# be shown, so only the head is scanned (bounded work for a megabyte tool result).
_REDACT_WINDOW = 8 * 1024


def _shown(text: str, limit: int) -> str:
    return _one_line(redact(text[:_REDACT_WINDOW]).text, limit)


def key_argument(tool_name: str, tool_input: object) -> str:
    """The argument shown for a tool call: Bash's command, a file tool's path, a search's
    pattern, WebFetch's url; for MCP and unknown tools the first string argument. One line,
    secrets redacted."""
    if not isinstance(tool_input, Mapping):
        return ""
    preferred = tool_input.get(_KEY_ARGUMENTS.get(tool_name, ""))
    if isinstance(preferred, str):
        return _shown(preferred, KEY_ARGUMENT_CHARS)
    for value in tool_input.values():
        if isinstance(value, str) and value.strip():
            return _shown(value, KEY_ARGUMENT_CHARS)
    return ""


def strip_injected(text: str) -> tuple[str, int]:
    """Remove hook/harness spans from user-side text; returns the text and how many went."""
    cleaned, removed = _INJECTED_SPAN.subn("", text)
    return cleaned.strip(), removed


def _user_command(text: str) -> str | None:
    """`<command-name>/x</command-name>...<command-args>y</command-args>` as `/x y`."""
    name = _COMMAND_NAME.search(text)
    if name is None:
        return None
    args = _COMMAND_ARGS.search(text)
    return f"{name.group(1).strip()} {args.group(1).strip() if args else ''}".strip()


@dataclass(frozen=True, slots=True)
class _Line:
    number: int
    start: int
    end: int
    data: bytes | None  # None: over the size limit, skipped without reading it into memory


_SKIP_BLOCK = 1 << 20


def _read_lines(
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


def _parse_timestamp(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    except (ValueError, OverflowError):  # year 1 or 9999 with an offset leaves the range
        return None


@dataclass(slots=True)
class _TurnBuilder:
    uuid: str
    role: Role
    timestamp: datetime
    session_id: str
    is_sidechain: bool
    message_id: str | None
    start_offset: int
    end_offset: int
    texts: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)

    def is_empty(self) -> bool:
        return not (self.texts or self.thinking or self.tool_calls or self.tool_results)

    def freeze(self) -> Turn:
        return Turn(
            uuid=self.uuid,
            role=self.role,
            timestamp=self.timestamp,
            text="\n\n".join(self.texts),
            tool_calls=tuple(self.tool_calls),
            tool_results=tuple(self.tool_results),
            thinking="\n\n".join(self.thinking),
            session_id=self.session_id,
            is_sidechain=self.is_sidechain,
            message_id=self.message_id,
            start_offset=self.start_offset,
            end_offset=self.end_offset,
        )


@dataclass(slots=True)
class _Counters:
    lines: int = 0
    malformed_lines: int = 0
    oversized_lines: int = 0
    merged_lines: int = 0
    skipped_entries: int = 0
    unknown_entries: int = 0
    injected_spans_removed: int = 0

    def freeze(self) -> ParseStats:
        return ParseStats(
            lines=self.lines,
            malformed_lines=self.malformed_lines,
            oversized_lines=self.oversized_lines,
            merged_lines=self.merged_lines,
            skipped_entries=self.skipped_entries,
            unknown_entries=self.unknown_entries,
            injected_spans_removed=self.injected_spans_removed,
        )


class _TurnAssembler:
    """Folds entries, in file order, into turns. Lines of one assistant API message share
    `message.id` and are merged while no user prompt intervenes (a tool-result entry does not
    end the message, in case one is written between two of its blocks). Message ids are not
    unique across a file (transcript 05 reuses one after a resume), hence the 'no prompt in
    between' rule."""

    def __init__(self, counters: _Counters) -> None:
        self.counters = counters
        self.builders: list[_TurnBuilder] = []
        self.open_message: _TurnBuilder | None = None
        self.tool_names: dict[str, str] = {}
        self.last_timestamp = datetime.fromtimestamp(0, UTC)

    def add(self, entry: Mapping[str, object], start: int, end: int) -> None:
        kind = entry.get("type")
        if kind not in ("user", "assistant"):
            if isinstance(kind, str) and kind in _NON_CONVERSATION_TYPES:  # a list is unhashable
                self.counters.skipped_entries += 1
            else:
                self.counters.unknown_entries += 1
            return
        message = entry.get("message")
        if not isinstance(message, Mapping):
            self.counters.malformed_lines += 1
            return
        timestamp = _parse_timestamp(entry.get("timestamp")) or self.last_timestamp
        self.last_timestamp = timestamp
        if kind == "assistant":
            self._add_assistant(entry, message, timestamp, start, end)
        else:
            self._add_user(entry, message, timestamp, start, end)

    def _new_builder(
        self,
        entry: Mapping[str, object],
        role: Role,
        timestamp: datetime,
        *,
        message_id: str | None,
        span: tuple[int, int],
    ) -> _TurnBuilder:
        return _TurnBuilder(
            uuid=str(entry.get("uuid") or ""),
            role=role,
            timestamp=timestamp,
            session_id=str(entry.get("sessionId") or ""),
            is_sidechain=entry.get("isSidechain") is True,
            message_id=message_id,
            start_offset=span[0],
            end_offset=span[1],
        )

    def _add_assistant(
        self,
        entry: Mapping[str, object],
        message: Mapping[str, object],
        timestamp: datetime,
        start: int,
        end: int,
    ) -> None:
        if message.get("model") == "<synthetic>":
            # Written by Claude Code itself ("No response requested.", API error notices).
            self.counters.skipped_entries += 1
            return
        raw_id = message.get("id")
        message_id = raw_id if isinstance(raw_id, str) and raw_id else None
        builder = self.open_message
        if builder is not None and message_id is not None and builder.message_id == message_id:
            builder.end_offset = end
            self.counters.merged_lines += 1
        else:
            builder = self._new_builder(
                entry, "assistant", timestamp, message_id=message_id, span=(start, end)
            )
            self.builders.append(builder)
            self.open_message = builder
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks if isinstance(blocks, list) else ():
            if not isinstance(block, Mapping):
                continue
            block_type = block.get("type")
            if block_type == "text" and isinstance(block.get("text"), str):
                text = str(block["text"]).strip()
                if text:
                    builder.texts.append(text)
            elif block_type == "thinking" and isinstance(block.get("thinking"), str):
                builder.thinking.append(str(block["thinking"]))
            elif block_type in ("tool_use", "server_tool_use"):
                name = str(block.get("name") or "?")
                call_id = str(block.get("id") or "")
                self.tool_names[call_id] = name
                builder.tool_calls.append(
                    ToolCall(name, key_argument(name, block.get("input")), call_id)
                )

    def _add_user(
        self,
        entry: Mapping[str, object],
        message: Mapping[str, object],
        timestamp: datetime,
        start: int,
        end: int,
    ) -> None:
        # isCompactSummary: Claude Code's own summary of earlier turns (already extracted from
        # the originals). isMeta: harness text such as the local-command caveat or an expanded
        # skill: not something the user said.
        if entry.get("isCompactSummary") is True or entry.get("isMeta") is True:
            self.counters.skipped_entries += 1
            return
        builder = self._new_builder(entry, "user", timestamp, message_id=None, span=(start, end))
        content = message.get("content")
        if isinstance(content, str):
            self._add_user_text(builder, content)
        elif isinstance(content, list):
            for block in content:
                if not isinstance(block, Mapping):
                    continue
                block_type = block.get("type")
                if block_type == "text" and isinstance(block.get("text"), str):
                    self._add_user_text(builder, str(block["text"]))
                elif block_type == "image":
                    builder.texts.append("[image]")
                elif block_type == "tool_result":
                    builder.tool_results.append(self._tool_result(block))
        if builder.is_empty():
            self.counters.skipped_entries += 1
            return
        if builder.texts:
            self.open_message = None  # a prompt ends the assistant message before it
        self.builders.append(builder)

    def _add_user_text(self, builder: _TurnBuilder, raw: str) -> None:
        command = _user_command(raw)
        text, removed = strip_injected(raw if command is None else command)
        self.counters.injected_spans_removed += removed
        if text:
            builder.texts.append(text)

    def _tool_result(self, block: Mapping[str, object]) -> ToolResult:
        content = block.get("content")
        parts: list[str] = []
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            for item in content:
                if isinstance(item, Mapping) and isinstance(item.get("text"), str):
                    parts.append(str(item["text"]))
                elif isinstance(item, Mapping) and item.get("type") == "image":
                    parts.append("[image]")
        text, removed = strip_injected("\n".join(parts))
        self.counters.injected_spans_removed += removed
        call_id = str(block.get("tool_use_id") or "")
        if _OWN_READ_TOOL.match(self.tool_names.get(call_id, "")):
            text = "[memories from local-recall]"
        return ToolResult(
            ok=block.get("is_error") is not True,
            snippet=_shown(text, RESULT_SNIPPET_CHARS),
            tool_use_id=call_id,
            tool_name=self.tool_names.get(call_id, ""),
        )

    def turns(self) -> tuple[Turn, ...]:
        return tuple(builder.freeze() for builder in self.builders if not builder.is_empty())


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


def _parse_stream(
    stream: BinaryIO, start_offset: int, max_line_bytes: int, name: str
) -> ParsedTranscript:
    counters = _Counters()
    assembler = _TurnAssembler(counters)
    end_offset = start_offset
    for line in _read_lines(stream, start_offset, max_line_bytes):
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


def split_turns_at(turns: Sequence[Turn], offset: int) -> tuple[tuple[Turn, ...], tuple[Turn, ...]]:
    """(context, new): turns wholly before `offset` were handled by an earlier pass. A turn
    that straddles it (an assistant message still being written then) counts as new."""
    context = tuple(turn for turn in turns if turn.end_offset <= offset)
    return context, tuple(turn for turn in turns if turn.end_offset > offset)


def resume_offset(turns: Sequence[Turn], end_offset: int, *, keep: int = 2) -> int:
    """Where the next pass should start reading so that the last `keep` turns come back as
    context for `split_turns_at(..., end_offset)`; `end_offset` itself when keep is 0 or there
    are no turns."""
    if keep <= 0 or not turns:
        return end_offset
    return min(turn.start_offset for turn in turns[-keep:])


# --------------------------------------------------------------------------------------------
# Condenser
# --------------------------------------------------------------------------------------------

DEFAULT_MAX_CHARS = 24_000
_TOOL_LINE_CHARS = 220
_CONTEXT_HEADER = "[Earlier turns, context only: already processed]"
_NEW_HEADER = "[New turns]"


@dataclass(frozen=True, slots=True)
class Chunk:
    text: str
    session_id: str
    first_timestamp: datetime
    last_timestamp: datetime
    turn_uuids: tuple[str, ...]  # the new turns rendered in this chunk, in order


def render_turn(turn: Turn) -> str:
    """The extractor's view of a turn: its text, one line per tool call and per tool result.
    Thinking is left out; `<private>` spans are removed field by field (an unclosed tag hides
    the rest of its field) and secrets redacted, before `condense` may cut a long turn. Empty
    when nothing is left."""
    label = "User" if turn.role == "user" else "Assistant"
    if turn.is_sidechain:
        label = f"[subagent] {label}"
    lines: list[str] = []
    text = redact(remove_private(turn.text)).text.strip()
    if text:
        lines.append(f"{label}: {text}")
    for call in turn.tool_calls:
        argument = remove_private(call.key_argument).strip()
        line = f"[tool] {call.name}: {argument}" if argument else f"[tool] {call.name}"
        lines.append(_one_line(line, _TOOL_LINE_CHARS))
    for result in turn.tool_results:
        status = "OK" if result.ok else "ERROR"
        snippet = _one_line(remove_private(result.snippet), RESULT_SNIPPET_CHARS)
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
