"""The memory value, its file format (YAML frontmatter + markdown body), parsing and rendering.

Format reference: docs/memory-format.md. Parsing is tolerant of what people do by hand (unquoted
timestamps, CRLF, numeric-looking hashes, missing optional keys); anything it cannot understand is
an `InvalidMemoryFile`, which callers report and skip — never rewrite.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import Any

import yaml

from local_recall.errors import InvalidInput, InvalidMemoryFile, InvalidMemoryId

MAX_SUBJECT_CHARS = 200
MAX_KEYWORDS = 20
MAX_KEYWORD_CHARS = 100
MAX_BODY_BYTES = 1_000_000  # 1 MB: larger bodies are refused with a clear error

# Keys local-recall owns, in the order they are written. Anything else is a person's and is kept.
KNOWN_KEYS = ("id", "subject", "keywords", "applies_to", "occurred_at", "content_hash", "source")
KINDS = ("episodic", "thinking")

_AREA_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$")
_FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)

# libyaml's loader is ~10x faster than the pure-Python one; both are safe loaders.
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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
            "path": str(self.path) if self.path else None,
            "body": self.body,
        }


# --- values -------------------------------------------------------------------------------------


def normalise_body(body: str) -> str:
    """The canonical body: NFC, LF line endings, no trailing whitespace per line, no leading or
    trailing blank lines. Hashing this makes CRLF checkouts and editor whitespace harmless."""
    text = unicodedata.normalize("NFC", body).replace("\r\n", "\n").replace("\r", "\n")
    lines = [line.rstrip() for line in text.split("\n")]
    return "\n".join(lines).strip("\n")


def content_hash(body: str) -> str:
    return hashlib.sha256(normalise_body(body).encode("utf-8")).hexdigest()


def parse_memory_id(value: str) -> str:
    """A canonical lowercase UUID string; anything else (paths, '..', partial ids) is refused."""
    text = value.strip()
    try:
        parsed = uuid.UUID(text)
    except (ValueError, AttributeError, TypeError):
        raise InvalidMemoryId(value) from None
    if str(parsed) != text.lower() and parsed.hex != text.lower():
        raise InvalidMemoryId(value)  # uuid.UUID accepts braces and 'urn:uuid:' prefixes
    return str(parsed)


def parse_scope(text: str) -> str:
    """`global`, `file:<repo-relative path>` or `area:<name>`, normalised; else InvalidInput."""
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
    _check_unicode(body, "body")
    size = len(body.encode("utf-8"))
    if size > MAX_BODY_BYTES:
        raise InvalidInput(f"body is {size} bytes; the limit is {MAX_BODY_BYTES}")
    return body


def validate_keywords(keywords: Sequence[str]) -> tuple[str, ...]:
    if isinstance(keywords, str):
        keywords = [keywords]
    if len(keywords) > 10 * MAX_KEYWORDS:
        raise InvalidInput(f"{len(keywords)} keywords given; the limit is {MAX_KEYWORDS}")
    seen: dict[str, str] = {}
    for raw in keywords:
        word = " ".join(str(raw).split())[:MAX_KEYWORD_CHARS]
        _check_unicode(word, "a keyword")
        if word and word.lower() not in seen:
            seen[word.lower()] = word
    if len(seen) > MAX_KEYWORDS:
        raise InvalidInput(f"{len(seen)} keywords given; the limit is {MAX_KEYWORDS}")
    return tuple(seen.values())


def format_timestamp(moment: datetime) -> str:
    # isoformat pads the year to 4 digits (strftime's %Y does not on glibc for years < 1000)
    return moment.astimezone(UTC).replace(microsecond=0, tzinfo=None).isoformat() + "Z"


def memory_time(moment: datetime) -> datetime:
    """A memory's occurred_at as the file holds it: UTC, whole seconds. Truncated on the way in
    so a memory just written, one read from its file and one from the catalog are equal."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).replace(microsecond=0)


def parse_timestamp(value: object) -> datetime:
    """ISO-8601 string, YAML datetime/date, or epoch seconds → aware UTC datetime."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        try:
            moment = datetime.fromtimestamp(value, UTC)
        except (OverflowError, ValueError, OSError):
            raise InvalidInput(f"timestamp out of range: {value!r}") from None
    elif isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise InvalidInput(f"not an ISO-8601 timestamp: {value!r}") from None
    else:
        raise InvalidInput(f"not a timestamp: {value!r}")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # the format says UTC; naive means UTC
    try:
        return moment.astimezone(UTC)
    except (OverflowError, ValueError):  # e.g. 0001-01-01 with a positive offset
        raise InvalidInput(f"timestamp out of range: {value!r}") from None


# --- parse / render -----------------------------------------------------------------------------


def parse_memory_text(text: str, path: Path, *, kind: str = "episodic") -> Memory:
    """Parse one memory file's text. Raises InvalidMemoryFile with the reason."""
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    match = _FRONTMATTER.match(normalised)
    if not match:
        raise InvalidMemoryFile(path, "no YAML frontmatter (the file must start with '---')")
    try:
        data = yaml.load(match.group(1), Loader=_Loader)  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InvalidMemoryFile(path, f"frontmatter is not valid YAML: {reason}") from None
    if not isinstance(data, dict):
        raise InvalidMemoryFile(path, "frontmatter is not a mapping of keys to values")
    body = normalised[match.end() :]
    try:
        return _memory_from_fields(data, body, path, kind)
    except InvalidInput as exc:
        raise InvalidMemoryFile(path, str(exc)) from None


def _memory_from_fields(data: dict[Any, Any], body: str, path: Path, kind: str) -> Memory:
    file_id = parse_memory_id(path.stem)
    raw_id = data.get("id")
    if raw_id is not None and parse_memory_id(str(raw_id)) != file_id:
        raise InvalidInput(f"frontmatter id {raw_id} does not match the file name")
    if "subject" not in data or data["subject"] is None:
        raise InvalidInput("missing 'subject'")
    subject = validate_subject(str(data["subject"]))
    keywords = _keywords_field(data.get("keywords"))
    applies_to = parse_scope(str(data.get("applies_to") or "global"))
    if data.get("occurred_at") is None:
        raise InvalidInput("missing 'occurred_at'")
    occurred_at = memory_time(parse_timestamp(data["occurred_at"]))
    if not normalise_body(body):
        raise InvalidInput("body is empty")
    actual = content_hash(body)
    stored = data.get("content_hash")
    stored_text = None if stored is None else str(stored)  # YAML may read an all-digit hash as int
    source = data.get("source")
    extra = {str(k): v for k, v in data.items() if k not in KNOWN_KEYS}
    return Memory(
        id=file_id,
        subject=subject,
        body=normalise_body(body),
        keywords=keywords,
        applies_to=applies_to,
        occurred_at=occurred_at,
        content_hash=actual,
        source=None if source is None else str(source),
        kind=kind,
        extra=MappingProxyType(extra),
        path=path,
        stale_hash=stored_text if stored_text not in (None, actual) else None,
    )


def _keywords_field(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):  # "a, b, c" written by hand
        return validate_keywords([part for part in value.split(",")])
    if isinstance(value, list | tuple):
        return validate_keywords([str(item) for item in value if item is not None])
    raise InvalidInput("'keywords' must be a list")


def render_memory(memory: Memory) -> str:
    """The file text. Known keys first in a fixed order, then the person's own keys."""
    fields: dict[str, Any] = {
        "id": memory.id,
        "subject": memory.subject,
        "keywords": list(memory.keywords),
        "applies_to": memory.applies_to,
        "occurred_at": format_timestamp(memory.occurred_at),
        "content_hash": memory.content_hash,
    }
    if memory.source:
        fields["source"] = memory.source
    for key, value in memory.extra.items():
        if key not in fields:
            fields[key] = _plain(value)
    header = yaml.dump(
        fields,
        Dumper=_QuotingDumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=1000,
    )
    return f"---\n{header}---\n\n{normalise_body(memory.body)}\n"


def _plain(value: Any) -> Any:
    """MappingProxy/tuple → dict/list so the safe dumper accepts them."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


class _QuotingDumper(yaml.SafeDumper):
    """Quotes the timestamp and hash so YAML never reads them back as datetime or number."""


def _str_representer(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    needs_quotes = bool(re.match(r"^\d{4}-\d\d-\d\dT", data)) or bool(
        re.fullmatch(r"[0-9a-f]{64}", data)
    )
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar(
        "tag:yaml.org,2002:str", data, style='"' if needs_quotes else None
    )


_QuotingDumper.add_representer(str, _str_representer)


def new_memory_id() -> str:
    return str(uuid.uuid4())


def estimate_tokens(text: str) -> int:
    """~4 characters per token: the usual estimate for English prose and code."""
    return max(1, (len(text) + 3) // 4)
