"""The memory value and the rules about its fields: validation, scopes, ids, the content hash
(its time: timestamps.py). Pure: no file and no YAML here (the file format is format.py).
"""

from __future__ import annotations

import hashlib
import posixpath
import re
import unicodedata
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import Any

from local_recall.errors import InvalidInput, InvalidMemoryId
from local_recall.memory.dispute import Dispute
from local_recall.memory.timestamps import format_timestamp

MAX_SUBJECT_CHARS = 200
MAX_KEYWORDS = 20
MAX_KEYWORD_CHARS = 100
MAX_BODY_BYTES = 1_000_000  # 1 MB: larger bodies are refused with a clear error

# Keys local-recall owns, in the order they are written. Anything else is a person's and is kept.
KNOWN_KEYS = (
    "id",
    "subject",
    "keywords",
    "applies_to",
    "occurred_at",
    "content_hash",
    "source",
    # provenance (docs/memory-format.md#provenance): optional, written when known
    "commit",
    "branch",
    "session",
    "files",
    "review",
    # a newer memory replaced this one (docs/team.md#superseded-memories)
    "superseded_by",
    "superseded_reason",
    # a session found it wrong (docs/team.md#disputed-memories): a claim a person settles
    "disputed",
)
# `review: unreviewed` marks a memory no person has looked at yet; accepting removes the key.
UNREVIEWED = "unreviewed"
MAX_FILES = 20  # anchors recorded per memory (a merge of several may hold up to MAX_FILES_READ)
MAX_FILES_READ = 200
MAX_PROVENANCE_CHARS = 200  # branch and session names, the reason a memory was superseded
KINDS = ("episodic", "thinking")

_AREA_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$")


@dataclass(frozen=True, slots=True)
class Memory:
    id: str
    subject: str
    body: str
    keywords: tuple[str, ...]
    applies_to: str
    occurred_at: datetime
    content_hash: str
    source: str | None = None
    kind: str = "episodic"
    commit: str | None = None  # HEAD when the memory was made (None: unknown, or no git)
    branch: str | None = None  # the branch checked out then (None: detached, or unknown)
    session: str | None = None  # the Claude Code session an extracted memory came from
    files: tuple[str, ...] = ()  # repo-relative files that session read or changed
    unreviewed: bool = False  # written by the pipeline (or an agent), not yet seen by a person
    superseded_by: str | None = None  # the id of the memory that replaced this one
    superseded_reason: str | None = None  # why, one line
    disputed: Dispute | None = None  # a session found it wrong, no person has settled it yet
    # Keys a person added to the frontmatter; written back unchanged on every rewrite.
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    path: Path | None = None
    # The hash written in the file, when it differs from the body's (a hand edit): informational.
    stale_hash: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "subject": self.subject,
            "keywords": list(self.keywords),
            "applies_to": self.applies_to,
            "occurred_at": format_timestamp(self.occurred_at),
            "content_hash": self.content_hash,
            "source": self.source,
            "kind": self.kind,
            "commit": self.commit,
            "branch": self.branch,
            "session": self.session,
            "files": list(self.files),
            "unreviewed": self.unreviewed,
            "superseded_by": self.superseded_by,
            "superseded_reason": self.superseded_reason,
            "disputed": self.disputed.to_json() if self.disputed else None,
            "path": str(self.path) if self.path else None,
            "body": self.body,
        }


# --- values -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Draft:
    """A validated, redacted memory not yet on disk (built by `local_recall.memory.drafts`)."""

    subject: str
    body: str
    keywords: tuple[str, ...]
    applies_to: str
    occurred_at: datetime
    source: str | None = None
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    commit: str | None = None
    branch: str | None = None
    session: str | None = None
    files: tuple[str, ...] = ()
    unreviewed: bool = False


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where and how a memory is being made (docs/memory-format.md#provenance)."""

    commit: str | None = None
    branch: str | None = None
    session: str | None = None
    files: tuple[str, ...] = ()
    unreviewed: bool = False


def normalise_body(body: str) -> str:
    """The canonical body: NFC, LF line endings, no trailing whitespace per line, no leading or
    trailing blank lines. Hashing this makes CRLF checkouts and editor whitespace harmless."""
    text = unicodedata.normalize("NFC", body).replace("\r\n", "\n").replace("\r", "\n")
    lines = [line.rstrip() for line in text.split("\n")]
    return "\n".join(lines).strip("\n")


def content_hash(body: str) -> str:
    return normalised_hash(normalise_body(body))


def normalised_hash(text: str) -> str:
    """`content_hash` of a body already normalised (a scan normalises each body once)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# the canonical spelling, which is its own parse: a scan checks every file's id (uuid.UUID in
# Python was ~4 µs a file)
_CANONICAL_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def parse_memory_id(value: str) -> str:
    """A canonical lowercase UUID string; anything else (paths, '..', partial ids) is refused."""
    text = value.strip()
    if _CANONICAL_ID.fullmatch(text):
        return text
    try:
        parsed = uuid.UUID(text)
    except (ValueError, AttributeError, TypeError):
        raise InvalidMemoryId(value) from None
    if str(parsed) != text.lower() and parsed.hex != text.lower():
        raise InvalidMemoryId(value)  # uuid.UUID accepts braces and 'urn:uuid:' prefixes
    return str(parsed)


def parse_scope(text: str) -> str:
    """`global`, `file:<repo-relative path>` or `area:<name>`, normalised; else InvalidInput."""
    return _scope(text) if type(text) is str else _parse_scope(text)  # a str subclass: as is


# A store holds few distinct scopes and a first scan checks one per file (~2.5 µs each, 0.25 s
# at 100,000): each is checked once. An invalid one raises and is not kept.
@lru_cache(maxsize=4096)
def _scope(text: str) -> str:
    return _parse_scope(text)


def _parse_scope(text: str) -> str:
    value = text.strip()
    if value == "global":
        return value
    _check_unicode(value, "scope")
    kind, sep, rest = value.partition(":")
    if not sep:
        raise InvalidInput(f"invalid scope {text!r}: use global, file:<path> or area:<name>")
    if kind == "file":
        return "file:" + _normalise_repo_path(rest, text)
    if kind == "area":
        if not _AREA_NAME.match(rest):
            raise InvalidInput(
                f"invalid scope {text!r}: area names are letters, digits, '.', '_', '-', '/'"
            )
        return "area:" + rest
    raise InvalidInput(f"invalid scope {text!r}: use global, file:<path> or area:<name>")


def _normalise_repo_path(raw: str, original: str) -> str:
    path = raw.strip().replace("\\", "/")
    if not path or path.startswith("/") or re.match(r"^[A-Za-z]:", path) or "\x00" in path:
        raise InvalidInput(f"invalid scope {original!r}: file scopes take a repo-relative path")
    trailing_slash = path.endswith("/")
    parts = [p for p in PurePosixPath(path).parts if p not in ("", ".")]
    if not parts or ".." in parts:
        raise InvalidInput(f"invalid scope {original!r}: the path must stay inside the repo")
    return "/".join(parts) + ("/" if trailing_slash else "")


_COMMIT = re.compile(r"^[0-9a-f]{7,64}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def parse_commit(value: str) -> str:
    """A commit id: 7-64 lowercase hex digits. Anything else is refused: the value is handed to
    `git diff <commit> HEAD`, where a planted `--output=...` would be an option."""
    text = value.strip().lower()
    if not _COMMIT.match(text):
        raise InvalidInput(f"'commit' is not a commit id: {value[:80]!r}")
    return text


def parse_provenance_name(value: str, name: str, *, fold: bool = False) -> str:
    """A branch or session name (or a reason, `fold`: runs of whitespace become one space):
    one line of printable text, at most 200 characters."""
    text = " ".join(value.split()) if fold else value.strip()
    if not text or _CONTROL.search(text) or len(text) > MAX_PROVENANCE_CHARS:
        raise InvalidInput(f"'{name}' must be one line of 1-{MAX_PROVENANCE_CHARS} characters")
    _check_unicode(text, name)
    return text


def repo_relative(path: str, root: str | None = None) -> str | None:
    """`path` as a normalised repo-relative POSIX path, or None when it is not one: outside
    `root` (an absolute path is made relative to it; without `root` only relative paths are
    accepted), climbing out with `..`, empty, a folder, or cut short (a trailing `…`). Pure: the
    file system is not consulted."""
    text = path.strip().replace("\\", "/")
    if not text or "\x00" in text or text.endswith(("/", "…")) or _CONTROL.search(text):
        return None
    if text.startswith("/") or re.match(r"^[A-Za-z]:", text):
        if root is None:
            return None
        base = posixpath.normpath(root.replace("\\", "/"))
        full = posixpath.normpath(text)
        if not full.startswith(base.rstrip("/") + "/"):
            return None
        text = full[len(base.rstrip("/")) + 1 :]
    parts = [p for p in PurePosixPath(text).parts if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


def parse_files(value: object) -> tuple[str, ...]:
    """The `files` key: a list of repo-relative paths (duplicates dropped, at most MAX_FILES)."""
    if value is None:
        return ()
    if not isinstance(value, list | tuple):
        raise InvalidInput("'files' must be a list of repo-relative paths")
    if len(value) > MAX_FILES_READ:
        raise InvalidInput(f"'files' lists {len(value)} paths; the limit is {MAX_FILES_READ}")
    found: dict[str, None] = {}
    for item in value:
        rel = repo_relative(item) if isinstance(item, str) else None
        if rel is None:
            raise InvalidInput(f"'files' holds {str(item)[:80]!r}: not a repo-relative path")
        found[rel] = None
    if len(found) > MAX_FILES_READ:
        raise InvalidInput(f"'files' lists {len(found)} paths; the limit is {MAX_FILES_READ}")
    return tuple(found)


def scope_matches(applies_to: str, wanted: str, *, include_global: bool = True) -> bool:
    """Does a memory scoped `applies_to` answer a question about `wanted`?

    `file:src/` matches memories on that folder or anything under it; `file:src/a.py` matches
    that file and memories on folders containing it; `area:x` matches exactly."""
    if applies_to == "global":
        return include_global or wanted == "global"
    if wanted == "global":
        return False
    if wanted.startswith("file:") and applies_to.startswith("file:"):
        want, have = wanted[5:], applies_to[5:]
        if want == have or have.startswith(want.rstrip("/") + "/"):
            return True
        return have.endswith("/") and want.startswith(have)
    return applies_to == wanted


def _check_unicode(value: str, name: str) -> None:
    """A lone surrogate (JSON allows `"\\ud800"`, argv decodes bad bytes to one) cannot be
    written as UTF-8: refuse it with a message instead of failing in the file writer."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(
            f"{name} is not valid Unicode text (it holds a lone surrogate)"
        ) from None


def validate_subject(subject: str) -> str:
    value = " ".join(subject.split())  # one line: newlines and runs of spaces fold to one space
    if not value:
        raise InvalidInput("subject is empty")
    _check_unicode(value, "subject")
    if len(value) > MAX_SUBJECT_CHARS:
        raise InvalidInput(f"subject is {len(value)} characters; the limit is {MAX_SUBJECT_CHARS}")
    return value


def validate_body(body: str) -> str:
    if not normalise_body(body):
        raise InvalidInput("body is empty")
    if conflict_line(body) is not None:
        raise InvalidInput(
            "body holds git conflict markers (<<<<<<< … >>>>>>>); put them in a code block"
        )
    _check_unicode(body, "body")
    size = len(body.encode("utf-8"))
    if size > MAX_BODY_BYTES:
        raise InvalidInput(f"body is {size} bytes; the limit is {MAX_BODY_BYTES}")
    return body


# git's conflict markers at a line start: `<<<<<<< ours`, `=======`, `>>>>>>> theirs`.
_CONFLICT_OPEN = re.compile(r"^<{7}(?:[ \t].*)?$", re.MULTILINE)
_CONFLICT_CLOSE = re.compile(r"^>{7}(?:[ \t].*)?$", re.MULTILINE)
_FENCE = re.compile(r"^ {0,3}(?:`{3,}|~{3,})", re.MULTILINE)


def conflict_line(text: str, *, fenced_from: int | None = 0) -> int | None:
    """The line (1-based) where an unresolved git merge conflict starts, or None.

    A conflict is an opening `<<<<<<<` line with a closing `>>>>>>>` line after it. From offset
    `fenced_from` on (a file's body; None: nowhere), markers inside a fenced code block are
    text: a memory may explain conflict markers. A real conflict in a body also leaves markers
    in the frontmatter, whose content_hash line both sides changed."""
    if "<<<<<<<" not in text:  # the common case, ~30x cheaper than the line-anchored regex
        return None
    for opening in _CONFLICT_OPEN.finditer(text):
        if not _CONFLICT_CLOSE.search(text, opening.end()):
            break
        at = opening.start()
        body = len(text) if fenced_from is None else fenced_from
        if at >= body and len(_FENCE.findall(text, body, at)) % 2 == 1:
            continue
        return text.count("\n", 0, at) + 1
    return None


def validate_keywords(keywords: Sequence[str]) -> tuple[str, ...]:
    if isinstance(keywords, str):
        keywords = [keywords]
    if len(keywords) > 10 * MAX_KEYWORDS:
        raise InvalidInput(f"{len(keywords)} keywords given; the limit is {MAX_KEYWORDS}")
    seen: dict[str, str] = {}
    for raw in keywords:
        word, folded = _keyword(str(raw))
        if word and folded not in seen:
            seen[folded] = word
    if len(seen) > MAX_KEYWORDS:
        raise InvalidInput(f"{len(seen)} keywords given; the limit is {MAX_KEYWORDS}")
    return tuple(seen.values())


@lru_cache(maxsize=65536)  # keywords repeat across a store: a first scan checks each once
def _keyword(raw: str) -> tuple[str, str]:
    """One keyword as kept (one line, cut to MAX_KEYWORD_CHARS) and lowercased."""
    # the whole keyword, not its cut: redaction reads it whole before it is cut (drafts.py)
    _check_unicode(raw, "a keyword")
    word = " ".join(raw.split())[:MAX_KEYWORD_CHARS]
    return word, word.lower()


def new_memory_id() -> str:
    return str(uuid.uuid4())


def estimate_tokens(text: str) -> int:
    """~4 characters per token: the usual estimate for English prose and code."""
    return max(1, (len(text) + 3) // 4)
