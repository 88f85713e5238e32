"""What a row of another repository's org dataset must be before anything reads it: pure.

    checked = checked_row(row)        # CheckedRow(memory, capped) or raises InvalidInput
    problem = schema_problem(schema)  # None, or why a dataset's columns are not ours

A dataset is written by whoever may write its prefix (another repository's CI, a hostile one):
nothing in it is trusted (docs/security.md#the-org-index). Every field is checked by type and
form as the local store checks its own files (an id is a canonical UUID and the key is
`<kind>/<id>`, a scope parses, dates and commits are what they say), so no field can close the
context wrapper or carry a line break into a prompt or a terminal; sizes are cut to the store's
own limits (memory/model.py), so one huge row costs a search no more than a memory of this
repository can. The full-text document is rebuilt from the checked fields.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from local_recall.errors import InvalidInput
from local_recall.memory.dispute import Dispute, parse_dispute
from local_recall.memory.model import (
    KINDS,
    MAX_BODY_BYTES,
    MAX_KEYWORD_CHARS,
    MAX_KEYWORDS,
    MAX_SUBJECT_CHARS,
    Memory,
    content_hash,
    parse_commit,
    parse_memory_id,
    parse_scope,
)
from local_recall.text import one_line

if TYPE_CHECKING:
    import pyarrow as pa

# The meta row's body (identity and term statistics) is JSON of every stem's document
# frequency: larger than a memory's for a big repository, still bounded.
MAX_META_BODY_BYTES: Final = 8 * MAX_BODY_BYTES
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


class CheckedRow(NamedTuple):
    memory: Memory
    capped: bool  # a field was cut to the store's limits


def checked_row(row: Mapping[str, Any]) -> CheckedRow:
    """The memory a dataset row holds, its fields checked and cut to the store's limits.
    InvalidInput (one line, naming the field) for a row that is not a well-formed memory."""
    kind = _text(row, "kind")
    if kind not in KINDS:
        raise InvalidInput(f"kind {kind[:40]!r} is not a memory kind")
    memory_id = _uuid(_text(row, "id"), "id")
    # the key of a dataset row is `<kind>/<id>`; the local copy's is `<repo>/<kind>/<id>`
    key = f"{row['repo']}/{kind}/{memory_id}" if "repo" in row else f"{kind}/{memory_id}"
    if "key" in row and row["key"] != key:
        raise InvalidInput(f"key {str(row['key'])[:80]!r} is not {kind}/<id>")
    subject = one_line(_text(row, "subject"))
    if not subject:
        raise InvalidInput("subject is empty")
    body = _text(row, "body")
    if not body.strip():
        raise InvalidInput("body is empty")
    applies_to = _text(row, "applies_to")
    try:
        if _CONTROL.search(applies_to) or parse_scope(applies_to) != applies_to:
            raise InvalidInput("not normalised")
    except InvalidInput:
        raise InvalidInput(f"applies_to {applies_to[:80]!r} is not a scope") from None
    keywords, cut_keywords = _keywords(row.get("keywords"))
    cut_body = cut_utf8(body, MAX_BODY_BYTES)
    memory = Memory(
        id=memory_id,
        subject=subject[:MAX_SUBJECT_CHARS],
        body=cut_body,
        keywords=keywords,
        applies_to=applies_to,
        occurred_at=_moment(row.get("occurred_at")),
        content_hash=content_hash(cut_body),  # of the text held here, not what a row claims
        kind=kind,
        commit=_optional(row, "commit", parse_commit),
        unreviewed=_flag(row.get("unreviewed")),
        superseded_by=_optional(row, "superseded_by", lambda v: _uuid(v, "superseded_by")),
        disputed=_dispute(row.get("disputed")),
    )
    capped = cut_keywords or len(subject) > MAX_SUBJECT_CHARS or len(cut_body) < len(body)
    return CheckedRow(memory, capped)


def meta_row_problem(row: Mapping[str, Any]) -> str | None:
    """Why a dataset's meta row (identity, term statistics) is not one; None when it is."""
    body = row.get("body")
    if not isinstance(body, str):
        return "the meta row has no body"
    if cut_utf8(body, MAX_META_BODY_BYTES) != body:
        return f"the meta row is over {MAX_META_BODY_BYTES} bytes"
    return None


def schema_problem(schema: pa.Schema, wanted: pa.Schema) -> str | None:
    """Why a dataset's columns cannot be read as `wanted`'s (a missing column, another type);
    None when each column `wanted` names is there with its type."""
    for field in wanted:
        index = schema.get_field_index(field.name)
        if index < 0:
            return f"no {field.name} column"
        found = schema.field(index).type
        if not found.equals(field.type):
            return f"column {field.name} is {found}, not {field.type}"
    return None


def cut_utf8(text: str, limit: int) -> str:
    """`text` cut to at most `limit` bytes of UTF-8, on a character boundary."""
    if len(text) <= limit // 4:  # at most 4 bytes a character: surely within
        return text
    data = text.encode("utf-8")
    return text if len(data) <= limit else data[:limit].decode("utf-8", "ignore")


def _text(row: Mapping[str, Any], name: str) -> str:
    value = row.get(name)
    if not isinstance(value, str):
        raise InvalidInput(f"{name} is not text")
    return value


def _uuid(value: str, name: str) -> str:
    """A canonical (lowercase, hyphenated) UUID exactly: nothing around it, no other form."""
    try:
        if len(value) == 36 and parse_memory_id(value) == value:
            return value
    except InvalidInput:
        pass
    raise InvalidInput(f"{name} {value[:80]!r} is not a memory id")


def _optional(row: Mapping[str, Any], name: str, parse: Callable[[str], str]) -> str | None:
    value = row.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > 64:
        raise InvalidInput(f"{name} is not a well-formed value")
    try:
        parsed = parse(value)
    except InvalidInput:
        raise InvalidInput(f"{name} {value[:80]!r} is not well-formed") from None
    if parsed != value:
        raise InvalidInput(f"{name} {value[:80]!r} is not in its canonical form")
    return str(parsed)


def _keywords(value: object) -> tuple[tuple[str, ...], bool]:
    if value is None:
        return (), False
    if not isinstance(value, list | tuple) or not all(isinstance(k, str) for k in value):
        raise InvalidInput("keywords is not a list of text")
    seen: dict[str, str] = {}
    cut = False
    for raw in value:
        word = one_line(raw)
        cut = cut or len(word) > MAX_KEYWORD_CHARS
        word = word[:MAX_KEYWORD_CHARS]
        if word and word.lower() not in seen:
            if len(seen) == MAX_KEYWORDS:
                return tuple(seen.values()), True
            seen[word.lower()] = word
    return tuple(seen.values()), cut


def _moment(value: object) -> datetime:
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise InvalidInput("occurred_at is not a time")
    try:
        return datetime.fromtimestamp(int(value), UTC)
    except (OverflowError, ValueError, OSError):
        raise InvalidInput(f"occurred_at {value!r} is out of range") from None


def _dispute(value: object) -> Dispute | None:
    """A row's `disputed` column: the reason, checked as a memory file's is."""
    if value is not None and not isinstance(value, str):
        raise InvalidInput("disputed is not text")
    return parse_dispute(value)


def _flag(value: object) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InvalidInput("unreviewed is not true or false")
    return value
