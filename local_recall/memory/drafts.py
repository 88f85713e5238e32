"""Turning what a user, an agent or the extractor gives into a `Draft` the store can write.

Every write path goes through `make_draft`, so every memory file is validated and redacted
(`<private>` spans removed, secrets replaced by `[REDACTED:<kind>]`) before it touches disk."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from local_recall.errors import InvalidInput
from local_recall.memory.keywords import extract_keywords
from local_recall.memory.model import (
    MAX_FILES,
    MAX_SUBJECT_CHARS,
    Draft,
    Memory,
    Provenance,
    parse_commit,
    parse_provenance_name,
    parse_scope,
    repo_relative,
    validate_body,
    validate_keywords,
    validate_subject,
)
from local_recall.memory.timestamps import memory_time

if TYPE_CHECKING:
    from local_recall.redaction.findings import Finding


def make_draft(
    *,
    subject: str,
    body: str,
    keywords: Sequence[str] | None,
    applies_to: str,
    occurred_at: datetime,
    source: str | None,
    extra: Mapping[str, Any] | None = None,
    provenance: Provenance | None = None,
) -> Draft:
    # All fields are redacted together (a secret recognised in the body is removed from the
    # subject and keywords too), and before validation folds subject and keywords onto one line
    # and cuts keywords short: a PEM block folded flat, a YAML `key: value` no longer at a line
    # start or a token cut at 100 characters is no longer recognisable (the first validation
    # only refuses bad input before any work).
    from local_recall.redaction.secrets import redact_fields  # see _secrets_found

    validate_body(body)
    validate_subject(subject)
    given = [keywords] if isinstance(keywords, str) else list(keywords or ())
    if given:
        validate_keywords(given)
    redacted_body, redacted_subject_, *redacted_keywords = (
        r.text for r in redact_fields([body, subject, *(str(k) for k in given)])
    )
    clean_body = validate_body(redacted_body)
    clean_subject = validate_subject(fitted_subject(redacted_subject_))
    if given:
        clean_keywords = validate_keywords([k for k in redacted_keywords if k.strip()])
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
        **_stored_provenance(provenance or Provenance()),
    )


def fitted_subject(redacted: str) -> str:
    """A redacted subject within MAX_SUBJECT_CHARS. The subject given was within it (checked
    first), but a `[REDACTED:<kind>]` marker can be longer than the secret it replaces: the
    stored subject is cut (at a word, with "…") rather than refused for what the caller could
    neither see nor fix. Cutting redacted text reveals nothing: the secret is already gone."""
    value = " ".join(redacted.split())
    if len(value) <= MAX_SUBJECT_CHARS:
        return value
    space = value.rfind(" ", 0, MAX_SUBJECT_CHARS)
    cut = space if space > MAX_SUBJECT_CHARS // 2 else MAX_SUBJECT_CHARS - 1
    return value[:cut].rstrip() + "…"


def _stored_provenance(given: Provenance) -> dict[str, Any]:
    """Provenance as written to the frontmatter: what is not a valid commit id, name or
    repo-relative path is left out. Like a scope, a name or path is not redacted (a `[REDACTED]`
    path anchors nothing): one that holds what looks like a secret is left out too."""

    def name(value: str | None, key: str) -> str | None:
        try:
            text = None if value is None else parse_provenance_name(value, key)
        except InvalidInput:
            return None
        return None if text is None or _secrets_found(text) else text

    try:
        commit = None if given.commit is None else parse_commit(given.commit)
    except InvalidInput:
        commit = None
    files: dict[str, None] = {}
    for path in given.files:
        rel = repo_relative(path)
        if rel is not None and not _secrets_found(rel):
            files[rel] = None
    return {
        "commit": commit,
        "branch": name(given.branch, "branch"),
        "session": name(given.session, "session"),
        "files": tuple(files)[:MAX_FILES],
        "unreviewed": given.unreviewed,
    }


def redacted_edits(
    subject: str | None, body: str | None, keywords: Sequence[str] | None
) -> dict[str, object]:
    """The fields an edit gives (None: unchanged), validated and redacted together as in
    `make_draft`: a secret recognised in one field is removed from the others."""
    if subject is not None:
        validate_subject(subject)
    if body is not None:
        validate_body(body)
    from local_recall.redaction.secrets import redact_fields  # see _secrets_found

    given = [f for f in (subject, body) if f is not None] + list(keywords or ())
    redacted = iter(r.text for r in redact_fields(given))
    changes: dict[str, object] = {}
    if subject is not None:
        changes["subject"] = validate_subject(fitted_subject(next(redacted)))
    if body is not None:
        changes["body"] = validate_body(next(redacted))
    if keywords is not None:
        changes["keywords"] = validate_keywords(list(redacted))
    return changes


def edit(
    subject: str | None = None,
    body: str | None = None,
    keywords: Sequence[str] | None = None,
    scope: str | None = None,
) -> Callable[[Memory], Memory]:
    """A person's edit (None: that field unchanged) as the change it makes to a memory, its
    fields validated and redacted together (`redacted_edits`) and its scope checked, before
    any file is touched."""
    changes = redacted_edits(subject, body, keywords)
    if scope is not None:
        changes["applies_to"] = stored_scope(scope)
    return lambda current: replace(current, **changes)  # type: ignore[arg-type]


def stored_scope(scope: str) -> str:
    """A scope as written to the frontmatter. A scope names a path or an area, so it is not
    redacted (a `[REDACTED]` path would match nothing): one that holds a secret is refused, and
    the message does not repeat it."""
    value = parse_scope(scope)
    found = _secrets_found(value)
    if found:
        raise InvalidInput(f"the scope holds what looks like a secret ({found[0].kind}); not saved")
    return value


def _secrets_found(text: str) -> tuple[Finding, ...]:
    """redaction's `find_secrets`, imported on first use: its patterns cost ~40 ms to compile,
    and a process that only reads memories (a hook answering a prompt with no daemon) never
    writes one."""
    from local_recall.redaction.secrets import find_secrets

    return find_secrets(text)
