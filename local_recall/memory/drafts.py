"""Turning what a user, an agent or the extractor gives into a `Draft` the store can write.

Every write path goes through `make_draft`, so every memory file is validated and redacted
(`<private>` spans removed, secrets replaced by `[REDACTED:<kind>]`) before it touches disk."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import Any

from local_recall.errors import InvalidInput
from local_recall.memory.keywords import extract_keywords
from local_recall.memory.model import (
    memory_time,
    parse_scope,
    validate_body,
    validate_keywords,
    validate_subject,
)
from local_recall.memory.store import Draft
from local_recall.redaction.secrets import find_secrets, redact_for_storage


def make_draft(
    *,
    subject: str,
    body: str,
    keywords: Sequence[str] | None,
    applies_to: str,
    occurred_at: datetime,
    source: str | None,
    extra: Mapping[str, Any] | None = None,
) -> Draft:
    clean_body = validate_body(redact_for_storage(validate_body(body)).text)
    # Subject and keywords are redacted before validation folds them onto one line and cuts
    # keywords short: a PEM block folded flat, a YAML `key: value` no longer at a line start or
    # a token cut at 100 characters is no longer recognisable (the first validation only
    # refuses bad input before any work).
    clean_subject = redacted_subject(subject)
    if keywords:
        validate_keywords(keywords)
        given = [keywords] if isinstance(keywords, str) else keywords
        redacted = (redact_for_storage(str(k)).text for k in given)
        clean_keywords = validate_keywords([k for k in redacted if k.strip()])
    else:
        clean_keywords = extract_keywords(f"{clean_subject}\n{clean_body}")
    return Draft(
        subject=clean_subject,
        body=clean_body,
        keywords=clean_keywords,
        applies_to=stored_scope(applies_to),
        occurred_at=memory_time(occurred_at),
        source=source,
        extra=MappingProxyType(dict(extra or {})),
    )


def redact_edit(value: str) -> str:
    return redact_for_storage(value).text


def redacted_subject(subject: str) -> str:
    """A subject validated, then redacted before validation folds it onto one line (a folded
    PEM block or `key: value` off its line start is no longer recognisable)."""
    validate_subject(subject)
    return validate_subject(redact_for_storage(subject).text)


def stored_scope(scope: str) -> str:
    """A scope as written to the frontmatter. A scope names a path or an area, so it is not
    redacted (a `[REDACTED]` path would match nothing): one that holds a secret is refused, and
    the message does not repeat it."""
    value = parse_scope(scope)
    found = find_secrets(value)
    if found:
        raise InvalidInput(f"the scope holds what looks like a secret ({found[0].kind}); not saved")
    return value
