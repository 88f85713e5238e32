"""Vendor tokens whose prefix ordinary text also has: `s.` (HashiCorp Vault's legacy
service tokens), `00` (Okta API tokens), `secret_` (Notion's legacy integration secrets) and
`1//` (Google OAuth refresh tokens; `1//0` is also Python's floor division). Also Heroku's
`HRKU-`, whose vendored rule wants exactly `HRKU-AA` + 58: a token of another length or second
part, as people paste them, was kept in 4 of 5 prose phrasings, and so were
refresh tokens not starting `1//0` or shorter than 40 after it.

Each is taken wherever it stands (no vendor name, no key around it needed), but only when its
body has the exact length and alphabet of the format **and** looks random: the entropy the
format's rule asks for, upper and lower case, and less than 70 % of it in pronounceable chunks
(a capital and two or more lower-case letters, or an acronym, holding a vowel). Names do not:
`s.AcceptanceTimeoutSeconds` is all such chunks, hex digests have one case, `00000000…` has no
entropy. Of 29,149 mixed-case words of 20-30 letters and digits in the Python standard
library, site-packages and npm, 193 pass, nearly all of them base64 fragments, keys and test
vectors (names that pass: `RtlNtStatusToDosError`, `McpHttpClientFactory`, …); of 20,000
random bodies 0.7 % fail at 24 characters, 0.05 % at 43 (tests/redaction/test_vendor_tokens.py
checks at most 1 % of 2,000 tokens of each format).

Each pattern starts with its literal and a lookbehind right after it rejects a prefix inside a
longer word in O(1), with possessive repeats: linear on any input (a run of `0`s, of `s.`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from local_recall.redaction.escapes import blank_json_escapes
from local_recall.redaction.findings import Hit, Rank
from local_recall.redaction.placeholders import is_fake_body
from local_recall.redaction.vendored import shannon_entropy

_WORD_SHARE = 0.7  # random base62: ~0.3 on average; CamelCase names: 0.8-1.0
_WORDLIKE = re.compile(r"[A-Z]?[a-z]{2,}|[A-Z]{2,}(?![a-z])")
_VOWEL = re.compile(r"[aeiouAEIOU]")
_END = r"(?![A-Za-z0-9_\-])"


@dataclass(frozen=True, slots=True)
class _WeakRule:
    kind: str
    pattern: re.Pattern[str]  # group 1 is the body that must look random
    min_entropy: float


def _weak(kind: str, head: str, body: str, min_entropy: float, before: str = "") -> _WeakRule:
    """`head` is a literal (escaped for the regex); `before` are further characters that may
    not precede it (beside letters, digits, `_` and `-`)."""
    word = rf"[A-Za-z0-9_\-{before}]"
    return _WeakRule(
        kind,
        re.compile(rf"{head}(?<!{word}{head})({body}){_END}"),
        min_entropy,
    )


_RULES: tuple[_WeakRule, ...] = (
    # `vault login s.…`; not a member chain (`self.s.AcceptanceTimeoutSeconds`)
    _weak("vault-service-token", r"s\.", r"[A-Za-z0-9]{24}+", 3.5, before="."),
    # Okta SSWS tokens: "00" and 40 more
    _weak("okta-access-token", "00", r"[A-Za-z0-9_\-=]{40}+", 4.0),
    _weak("notion-api-token", "secret_", r"[A-Za-z0-9]{43}+", 4.0),
    _weak("google-oauth-refresh-token", "1//", r"[A-Za-z0-9_\-]{30,400}+", 4.0),
    _weak("heroku-api-key-v2", "HRKU-", r"[A-Za-z0-9_\-]{20,200}+", 3.5),
)


def looks_generated(body: str, min_entropy: float) -> bool:
    """Entropy, both cases, and not mostly made of pronounceable chunks (a name)."""
    if shannon_entropy(body) <= min_entropy or is_fake_body(body):
        return False
    if body.lower() == body or body.upper() == body:
        return False
    words = sum(len(w) for w in _WORDLIKE.findall(body) if _VOWEL.search(w))
    return words < _WORD_SHARE * len(body)


def weak_prefix_hits(text: str) -> Iterator[Hit]:
    text = blank_json_escapes(text)
    for rule in _RULES:
        for m in rule.pattern.finditer(text):
            if looks_generated(m.group(1), rule.min_entropy):
                yield Hit(m.start(), m.end(), rule.kind, Rank.FORMAT)
