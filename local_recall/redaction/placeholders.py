"""Shapes that are not secrets: placeholders, fakes from docs, what a random value looks like."""

from __future__ import annotations

import itertools
import re
import string


def is_fake_body(body: str) -> bool:
    """Fakes people write in docs: `xxxx`, `...EXAMPLE`, `****`, `abcdef...` sequences. Only
    `xxxx` and `XXXX`: a random token holds `xXxX` in some case far more often."""
    if "EXAMPLE" in body or "xxxx" in body or "XXXX" in body or "..." in body or "***" in body:
        return True
    return len(set(body)) < 6 or is_sequential(body)


# detect-secrets' `filters.heuristic.is_sequential_string` (1.5.0, Apache-2.0), copied: importing
# that module loads the whole package, ~0.2 s of a first save (tests compare the two).
_SEQUENCES = (
    string.ascii_uppercase + string.ascii_uppercase + string.digits + "+/",  # base64, letters 1st
    string.digits + string.ascii_uppercase + string.ascii_uppercase + "+/",  # base64, digits 1st
    (string.digits + string.ascii_uppercase) * 2,  # alphanumeric
    string.digits * 2,
    string.hexdigits.upper() + string.hexdigits.upper(),
    string.ascii_uppercase + "=/",
)


def is_sequential(body: str) -> bool:
    """A run of a well-known sequence ("abcdef", "123456", "ABCDEF0123"...): a placeholder."""
    upper = body.upper()
    return any(upper in sequence for sequence in _SEQUENCES)


def has_letter_and_digit(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


_NON_VALUES = frozenset(
    {"true", "false", "yes", "no", "on", "off", "none", "null", "nil", "undefined", "str",
     "string", "int", "bytes", "bool", "boolean", "secretstr", "any", "optional", "object",
     "dict", "list", "number", "float", "required"}
)  # fmt: skip
_PLACEHOLDER_WORDS = frozenset(
    {"changeme", "change-me", "change_me", "changethis", "replaceme", "replace-me", "redacted",
     "secret", "password", "passwd", "pwd", "pass", "token", "apikey", "api_key", "api-key",
     "key", "todo", "tbd", "example", "sample", "dummy", "fake", "test", "testing",
     "placeholder", "hidden", "masked", "empty", "foo", "bar", "foobar", "baz", "value",
     "mysecret", "mypassword", "secret-key", "secret_key", "unset", "default", "notset",
     "basic", "bearer", "digest"}
)  # fmt: skip
_PLACEHOLDER_SHAPE = re.compile(
    r"\[REDACTED|^\$|^%\w+%$|^<.*>$|<[A-Za-z_ \-]{2,40}>|\{\{|\$\{|^\*+$|\.\.\."
    r"|xxxx|XXXX|%[sd(]|\{\}|\{[A-Za-z_][\w.]*\}|^\{|\*\*\*|\u2026"
    r"|#[0-9A-Fa-f]{3,8}\b"
    r"|^(?:your|my|insert|enter|put|replace)[-_ ]|[-_ ](?:here|goes[-_ ]?here)$"
)
_TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_\-+/=.~]++")
_IDENTIFIER_WITH_DIGITS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*+")


def is_placeholder(value: str) -> bool:
    v = value.strip()
    if not v or v.lower() in _PLACEHOLDER_WORDS or v.lower() in _NON_VALUES:
        return True
    if len(set(v)) == 1:
        return True  # "xxxxxxxx", "********"
    return _PLACEHOLDER_SHAPE.search(v) is not None


def looks_random(value: str) -> bool:
    """Long, mixed letters and digits, and not shaped like a name: either it has characters an
    identifier cannot have (`/`, `+`, `-`), or it switches case/digit class very often."""
    if len(value) < 16 or not has_letter_and_digit(value) or not _TOKEN_SHAPE.fullmatch(value):
        return False
    if not _IDENTIFIER_WITH_DIGITS.fullmatch(value):
        return True
    classes = [0 if c.islower() else 1 if c.isupper() else 2 for c in value]
    switches = sum(1 for a, b in itertools.pairwise(classes) if a != b)
    return switches >= 0.45 * len(value)  # random: ~0.55; CamelCase names: ~0.3


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def ascii_lower(text: str) -> str:
    """`text` lower-cased with every character at its offset. `str.lower` only ever lengthens
    a character ("İ" becomes two), so the same length means the same offsets."""
    lowered = text.lower()
    return lowered if len(lowered) == len(text) else text.translate(_ASCII_LOWER)
