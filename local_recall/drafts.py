"""Turning what a user, an agent or the extractor gives into a `Draft` the store can write.

Every write path goes through `make_draft`, so every memory file is validated and redacted
(`<private>` spans removed, secrets replaced by `[REDACTED:<kind>]`) before it touches disk."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import Any

from local_recall.keywords import extract_keywords
from local_recall.memory import (
    parse_scope,
    validate_body,
    validate_keywords,
    validate_subject,
)
from local_recall.redaction import redact_for_storage
from local_recall.store import Draft


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
    clean_subject = validate_subject(redact_for_storage(validate_subject(subject)).text)
    if keywords:
        given = validate_keywords(keywords)
        redacted = (redact_for_storage(k).text for k in given)
        clean_keywords = validate_keywords([k for k in redacted if k.strip()])
    else:
        clean_keywords = extract_keywords(f"{clean_subject}\n{clean_body}")
    return Draft(
        subject=clean_subject,
        body=clean_body,
        keywords=clean_keywords,
        applies_to=parse_scope(applies_to),
        occurred_at=occurred_at,
        source=source,
        extra=MappingProxyType(dict(extra or {})),
    )


def redact_edit(value: str) -> str:
    return redact_for_storage(value).text
