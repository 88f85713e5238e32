"""What redaction reports: findings, redacted text, and the ranks that name a merged finding."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str  # short slug, e.g. "anthropic-api-key", "env-assignment"
    start: int  # character offsets of the secret value in the scanned text
    end: int
    line: int  # 1-based line of `start`


@dataclass(frozen=True, slots=True)
class Redacted:
    text: str
    findings: tuple[Finding, ...]  # offsets refer to the text that was scanned, not `text`


@dataclass(frozen=True, slots=True)
class FileFinding:
    """A secret in a file, deliberately without the secret: reports can be shown anywhere."""

    path: Path
    line: int
    kind: str


class Rank(IntEnum):
    """Lower wins when hits overlap: a named format beats a generic assignment."""

    FORMAT = 0  # our named token formats
    DS_FORMAT = 1  # detect-secrets' formats
    VENDORED = 2  # Betterleaks' rules
    CONTEXT = 3  # headers, URLs, a value repeated from another field of the same memory
    ASSIGNMENT = 4  # `KEY=value` whose key names a secret
    PROSE = 5  # "my password is ..."


@dataclass(frozen=True, slots=True)
class Hit:
    start: int
    end: int
    kind: str
    rank: Rank


def marker(kind: str) -> str:
    """The text that replaces a secret of `kind`."""
    return f"[REDACTED:{kind}]"


MARKER = re.compile(r"\[REDACTED:[a-z0-9-]{1,40}\]")
_MARKER_KIND = re.compile(r"\[REDACTED:([a-z0-9-]{1,40})\]")


def redacted_kinds(given: Iterable[str], stored: Iterable[str]) -> Counter[str]:
    """The kinds of secret the store replaced: markers in what was stored and not in what was
    given (a memory may quote a marker on purpose). For the one-line notice of each adapter."""
    before = Counter(m.group(1) for text in given for m in _MARKER_KIND.finditer(text))
    after = Counter(m.group(1) for text in stored for m in _MARKER_KIND.finditer(text))
    return after - before


TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
