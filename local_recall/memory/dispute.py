"""A memory's `disputed:` key: a session found it wrong, and says why (docs/team.md#disputed-
memories). The claim sits in the memory's own file, so a team sees it in the pull request's
diff and settles it with `review` (accept, edit or reject remove it). Pure: the value and the
validation of what a file holds, which may be hand-edited or planted.

    disputed:
      reason: the pool holds 20 connections since db.py changed
      date: "2026-12-06"
      session: "0123456789abcdef0123456789abcdef"
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from local_recall.errors import InvalidInput

MAX_DISPUTE_CHARS = 200
DISPUTE_KEYS = ("reason", "date", "session")
_DATE = re.compile(r"\d{4}-\d\d-\d\d")
_SESSION = re.compile(r"[0-9a-f]{32}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


@dataclass(frozen=True, slots=True)
class Dispute:
    """Why a session found a memory wrong, until a person settles it."""

    reason: str  # one printable line, <= MAX_DISPUTE_CHARS, redacted like the body
    date: str | None = None  # YYYY-MM-DD (UTC) the session's pass wrote it
    session: str | None = None  # the 32 hex the session's record is named by (learning/shown.py)

    def to_json(self) -> dict[str, str]:
        return {key: value for key in DISPUTE_KEYS if (value := getattr(self, key))}


def parse_dispute(value: object) -> Dispute | None:
    """The `disputed` key: a mapping of `reason` (required), `date` and `session`, or a reason
    alone (a person may write one by hand). Anything else is refused with InvalidInput: the
    file is reported, as for any other bad field, and never rewritten."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        value = {"reason": value}
    if not isinstance(value, Mapping):
        raise InvalidInput("'disputed' must be a reason, or a mapping of reason, date, session")
    unknown = [str(key)[:40] for key in value if key not in DISPUTE_KEYS]
    if unknown:
        raise InvalidInput(f"'disputed' holds {unknown[0]!r}: only reason, date and session")
    reason, date, session = (value.get(key) for key in DISPUTE_KEYS)
    return Dispute(_reason(reason), _date(date), _session(session))


def _reason(value: object) -> str:
    if not isinstance(value, str):
        raise InvalidInput("'disputed' must give a reason (one line of text)")
    text = " ".join(value.split())
    if not text or _CONTROL.search(text) or len(text) > MAX_DISPUTE_CHARS:
        raise InvalidInput(
            f"'disputed' reason must be one printable line of 1-{MAX_DISPUTE_CHARS} characters"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("'disputed' reason is not valid Unicode text") from None
    return text


def _date(value: object) -> str | None:
    if value is None:
        return None
    if hasattr(value, "isoformat") and not isinstance(value, str):  # YAML reads a bare date
        value = value.isoformat()
    if not isinstance(value, str) or not _DATE.fullmatch(value):
        raise InvalidInput(f"'disputed' date is not YYYY-MM-DD: {str(value)[:40]!r}")
    return value


def _session(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _SESSION.fullmatch(value):
        raise InvalidInput("'disputed' session is not 32 hex digits")
    return value
