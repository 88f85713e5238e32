"""Redaction: secrets never reach a memory file, the index or an extractor request.

The public API, gathered from the package's modules (docs/security.md describes each):
`remove_private` / `private_texts` (private.py) drop `<private>` spans and repeats of them;
`find_secrets` / `redact` / `redact_for_storage` / `redact_fields` (engine.py) find credentials
and replace each secret *value* with `[REDACTED:<kind>]`; `scan_paths` (scan.py) reports them
in files.
"""

from __future__ import annotations

from local_recall.redaction.engine import find_secrets, redact, redact_fields, redact_for_storage
from local_recall.redaction.findings import FileFinding, Finding, Redacted, marker
from local_recall.redaction.private import private_texts, remove_private
from local_recall.redaction.scan import scan_paths

__all__ = [
    "FileFinding",
    "Finding",
    "Redacted",
    "find_secrets",
    "marker",
    "private_texts",
    "redact",
    "redact_fields",
    "redact_for_storage",
    "remove_private",
    "scan_paths",
]
