"""Finding and redacting secrets: every finder's hits merged into disjoint findings.

Finders (each linear-time on any input; docs/security.md has the measurements):
`tokens` (our named formats, PEM blocks, URL passwords), `vendored` (Betterleaks' 400+ rules),
`ds_rules` (detect-secrets' detectors), `assignments` (`KEY=value`, flags, prose).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from local_recall.redaction.assignments import assignment_hits, flag_hits, prose_hits
from local_recall.redaction.ds_rules import detect_secrets_hits
from local_recall.redaction.findings import MARKER, Finding, Hit, Rank, Redacted, marker
from local_recall.redaction.private import private_texts, remove_private
from local_recall.redaction.tokens import private_key_hits, token_hits, url_password_hits
from local_recall.redaction.vendored import vendored_hits
from local_recall.redaction.weak_prefixes import weak_prefix_hits

_FINDERS: tuple[Callable[[str], Iterable[Hit]], ...] = (
    private_key_hits,
    token_hits,
    weak_prefix_hits,
    url_password_hits,
    assignment_hits,
    flag_hits,
    prose_hits,
    detect_secrets_hits,
    vendored_hits,
)
# A value found in one field is removed from the others only when at least this long: shorter
# ones ("admin") would eat ordinary words.
_MIN_SHARED_VALUE = 6


def _resolve(hits: Iterable[Hit], protected: list[tuple[int, int]]) -> list[Hit]:
    """Overlapping hits become one span (their union) named by the best-ranked hit. Hits that
    touch an existing `[REDACTED:...]` marker are dropped, which makes redaction idempotent."""
    merged: list[Hit] = []
    for hit in sorted(hits, key=lambda h: (h.start, -h.end)):
        if _overlaps_any(hit, protected):
            continue
        if merged and hit.start < merged[-1].end:
            last = merged[-1]
            best = min(last, hit, key=lambda h: (h.rank, h.start - h.end))
            merged[-1] = Hit(last.start, max(last.end, hit.end), best.kind, best.rank)
        else:
            merged.append(hit)
    return merged


def _overlaps_any(hit: Hit, spans: list[tuple[int, int]]) -> bool:
    # Spans are sorted and disjoint: only the last one starting before hit.end can reach it.
    i = bisect.bisect_left(spans, (hit.end, -1))
    return i > 0 and spans[i - 1][1] > hit.start


def _repeats(text: str, known: Mapping[str, str]) -> Iterator[Hit]:
    """Every occurrence in `text` of a secret value found elsewhere (value -> kind)."""
    for value, kind in known.items():
        at = text.find(value)
        while at >= 0:
            yield Hit(at, at + len(value), kind, Rank.CONTEXT)
            at = text.find(value, at + len(value))


def _find(text: str, known: Mapping[str, str]) -> tuple[Finding, ...]:
    protected = [m.span() for m in MARKER.finditer(text)]
    hits = (hit for find in _FINDERS for hit in find(text))
    merged = _resolve([*hits, *_repeats(text, known)], protected)
    findings: list[Finding] = []
    line, counted_to = 1, 0
    for h in merged:
        line += text.count("\n", counted_to, h.start)
        counted_to = h.start
        findings.append(Finding(h.kind, h.start, h.end, line))
    return tuple(findings)


def find_secrets(text: str) -> tuple[Finding, ...]:
    """Secrets in `text`: non-overlapping, sorted by offset."""
    return _find(text, {})


def _apply(text: str, findings: tuple[Finding, ...]) -> Redacted:
    if not findings:
        return Redacted(text, ())
    parts: list[str] = []
    cursor = 0
    for f in findings:
        parts += [text[cursor : f.start], marker(f.kind)]
        cursor = f.end
    parts.append(text[cursor:])
    return Redacted("".join(parts), findings)


def redact(text: str) -> Redacted:
    """Replace each secret value with `[REDACTED:<kind>]`; the words around it stay."""
    return _apply(text, find_secrets(text))


def redact_for_storage(text: str) -> Redacted:
    """What every write path stores: `<private>` spans removed first, then secrets redacted.
    Finding offsets refer to the text after private spans were removed."""
    return redact(remove_private(text))


def redact_fields(fields: Sequence[str]) -> tuple[Redacted, ...]:
    """`redact_for_storage` over all fields of one memory at once (body, subject, keywords,
    ...): a secret or a private span's text found in any field is removed from every field, so
    a value recognised by its context in the body cannot stay verbatim in a keyword."""
    also = private_texts(fields)
    cleaned = [remove_private(f, also=also) for f in fields]
    found = [find_secrets(text) for text in cleaned]
    known: dict[str, str] = {}
    for text, findings in zip(cleaned, found, strict=True):
        for f in findings:
            value = text[f.start : f.end].strip()
            if len(value) >= _MIN_SHARED_VALUE:
                known.setdefault(value, f.kind)
    if not known:
        return tuple(_apply(t, f) for t, f in zip(cleaned, found, strict=True))
    return tuple(_apply(text, _find(text, known)) for text in cleaned)
