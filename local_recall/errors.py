"""Typed errors. Adapters map them to their protocol (CLI: one stderr line, MCP: tool error,
hooks: a log line and exit 0). Expected outcomes are return values, not exceptions."""

from __future__ import annotations

from pathlib import Path


class RecallError(Exception):
    """Base for every error local-recall raises on purpose; its message is user-facing."""


class ConfigError(RecallError):
    """The configuration (config.toml or a LOCAL_RECALL_* variable) is invalid."""


class InvalidInput(RecallError):
    """A value given by a user or an agent is not acceptable (bad scope, empty body, ...)."""


class InvalidMemoryId(InvalidInput):
    def __init__(self, value: str, expected: str = "a UUID") -> None:
        shown = value if len(value) <= 60 else value[:57] + "..."
        super().__init__(f"not a memory id (expected {expected}): {shown!r}")
        self.value = value


class AmbiguousMemoryId(InvalidInput):
    """A short id (a prefix) that more than one memory's id starts with."""

    def __init__(self, prefix: str, candidates: list[tuple[str, str]]) -> None:
        shown = "; ".join(f"{memory_id} {subject[:60]}" for memory_id, subject in candidates[:10])
        more = f"; and {len(candidates) - 10} more" if len(candidates) > 10 else ""
        super().__init__(
            f"ambiguous id {prefix!r}: {len(candidates)} memories start with it: {shown}{more}"
        )
        self.prefix = prefix
        self.candidates = candidates


class MemoryNotFound(RecallError):
    def __init__(self, memory_id: str) -> None:
        super().__init__(f"no memory with id {memory_id}")
        self.memory_id = memory_id


class MemoryGone(MemoryNotFound):
    """A short id (a pointer's) that no memory of the store starts with any more."""

    def __init__(self, prefix: str) -> None:
        super().__init__(prefix)
        self.args = (
            f"no memory starts with {prefix}: it was removed since it was shown "
            "(or never was in this repository)",
        )


class InvalidMemoryFile(RecallError):
    """A memory file that cannot be understood. It is reported and skipped, never rewritten."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class DuplicateMemoryId(RecallError):
    """Several files claim one id (`<UUID>.md` in upper case, without dashes, with a leading
    space): a change to one of them would leave the others. Nothing was changed."""

    def __init__(self, memory_id: str, paths: tuple[Path, ...]) -> None:
        names = ", ".join(repr(str(p)) for p in paths)
        super().__init__(
            f"{len(paths)} files claim memory id {memory_id}: {names}; nothing was changed "
            f"(`local-recall rm {memory_id}` removes them all; or delete all but {memory_id}.md)"
        )
        self.memory_id = memory_id
        self.paths = paths


class StorageError(RecallError):
    """Writing to disk failed (read-only folder, full disk, ...). Nothing was half-written."""


class EmbedderUnavailable(RecallError):
    """The configured embedder cannot be used right now (Ollama down, model missing, ...)."""


class IndexUnavailable(RecallError):
    """The search index cannot be opened or built; callers fall back to file-based search."""


class CommitConflict(IndexUnavailable):
    """Another writer committed to a shared table first, in a way LanceDB will not rebase
    onto (an overwrite by a concurrent first publish): re-read the table and plan again."""


class ExtractorUnavailable(RecallError):
    """The extractor (`claude` CLI or Ollama chat model) is not installed or not reachable."""


class ExtractionFailed(RecallError):
    """One extraction attempt failed; the transcript is left for a later pass."""


class RateLimited(ExtractionFailed):
    def __init__(self, message: str, retry_after_seconds: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds


class ApiUnreachable(ExtractionFailed):
    """The model's API gave no answer at all (offline, connection refused). A retry seconds
    later fails the same way: the pass records the failure and stops, its backoff retries."""


class TranscriptUnreadable(RecallError):
    """A Claude Code transcript exists but cannot be read (permissions, I/O error)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"cannot read transcript {path}: {reason}")
        self.path = path
        self.reason = reason


class ScanTargetUnreadable(InvalidInput):
    """A path given to `local-recall scan` cannot be read; it is never reported as clean."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"cannot scan {path}: {reason}")
        self.path = path
        self.reason = reason


class InvalidClaudeSettings(RecallError):
    """A Claude Code settings or .mcp.json file that local-recall will not edit (not valid JSON,
    or a shape Claude Code would reject). It is left exactly as it was."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class OrgUnavailable(RecallError):
    """The shared org store (docs/org.md) cannot be reached, read or written."""
