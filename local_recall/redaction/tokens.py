"""Token formats with a distinctive prefix, private key blocks, and passwords inside URLs."""

from __future__ import annotations

import base64
import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

from local_recall.redaction.escapes import blank_json_escapes
from local_recall.redaction.findings import TOKEN_CHARS, Hit, Rank
from local_recall.redaction.placeholders import has_letter_and_digit, is_fake_body, is_placeholder

# --------------------------------------------------------------------------------------------
# Token formats with a distinctive prefix. Each pattern starts with a literal `head` so the
# regex engine can jump between candidates; the lookbehind placed right after the head rejects a
# head inside a longer word ("task-", "xghp_", the 2nd "eyJ" of "eyJeyJ...") in O(1) — without it
# every such start would rescan the run, which is quadratic. Possessive quantifiers (`++`,
# `{m,n}+`) never give characters back.

_WORD = r"[A-Za-z0-9_\-]"
_END = r"(?![A-Za-z0-9_\-])"


@dataclass(frozen=True, slots=True)
class _TokenRule:
    kind: str
    pattern: re.Pattern[str]  # group 1 is the random body, checked for placeholder shapes
    value_only: bool = False  # redact group 1 (the value after a header word), not the match
    rank: Rank = Rank.FORMAT


def _token(kind: str, head: str, rest: str, body: str) -> _TokenRule:
    """`head` must be fixed-width (it is repeated inside the lookbehind)."""
    return _TokenRule(kind, re.compile(f"{head}(?<!{_WORD}{head}){rest}({body}){_END}"))


_TOKEN_RULES: tuple[_TokenRule, ...] = (
    _token("anthropic-admin-key", "sk-ant-admin", r"\d\d-", r"[A-Za-z0-9_\-]{20,400}+"),
    _token("anthropic-api-key", "sk-ant-", r"(?:api|oat|ort|sid)\d\d-", r"[A-Za-z0-9_\-]{20,400}+"),
    _token("openai-api-key", "sk-", r"(?:proj|svcacct|admin|None)-", r"[A-Za-z0-9_\-]{20,400}+"),
    _token("openai-api-key", "sk-", "", r"[A-Za-z0-9]{32,200}+"),
    _token("github-token", "github_pat_", "", r"[A-Za-z0-9_]{50,255}+"),
    _token("github-token", "gh", "[pousr]_", r"[A-Za-z0-9]{36,251}+"),
    _token("google-api-key", "AIza", "", r"[0-9A-Za-z_\-]{35}"),
    _token("google-oauth-token", r"ya29\.", "", r"[0-9A-Za-z_\-]{20,2000}+"),
    _token("google-client-secret", "GOCSPX-", "", r"[0-9A-Za-z_\-]{20,60}+"),
    _token("slack-token", "xox", "[abposre]-", r"[0-9A-Za-z\-]{10,250}+"),
    _token("slack-token", "xapp-", r"\d-", r"[0-9A-Za-z\-]{20,250}+"),
    _token("stripe-key", "[sr]k_", "(?:live|test)_", r"[0-9A-Za-z]{16,250}+"),
    _token("stripe-key", "whsec_", "", r"[0-9A-Za-z]{24,250}+"),
    _token("npm-token", "npm_", "", r"[A-Za-z0-9]{36}"),
    _token("huggingface-token", "hf_", "", r"[A-Za-z0-9]{30,60}+"),
    # Betterleaks knows Mailgun's legacy keys only next to the word "mailgun".
    _token("mailgun-key", "key-", "", r"[a-f0-9]{32}"),
    # fly.io's `fly tokens create` tokens (Betterleaks knows only the `FlyV1 fm…` macaroons).
    _token("flyio-access-token", "fo1_", "", r"[A-Za-z0-9_\-]{40,64}+"),
    # Sentry org tokens: Betterleaks wants the base64 JSON inside to hold `region_url`.
    _token("sentry-org-token", "sntrys_", "", r"[A-Za-z0-9+/=_]{60,1000}+"),
    _token("aws-access-key", "A", "(?:KIA|SIA|BIA|CCA)", r"[0-9A-Z]{16}"),
    # header.payload[.signature]; "eyJ" is base64 of '{"'. The whole match is the secret.
    _TokenRule(
        "jwt",
        re.compile(
            rf"(eyJ(?<!{_WORD}eyJ)[A-Za-z0-9_\-]{{7,}}+\.eyJ[A-Za-z0-9_\-]{{7,}}+"
            rf"(?:\.[A-Za-z0-9_\-]*+){{1,3}}+){_END}"
        ),
    ),
    _TokenRule(
        "slack-webhook",
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows)/([A-Za-z0-9_/\-]{20,200}+)"),
        value_only=True,
    ),
    _TokenRule(
        "bearer-token",
        re.compile(
            r"[Bb]earer(?<![A-Za-z][Bb]earer)[ \t]++([A-Za-z0-9._~+/\-]{16,4000}+=*+)(?![\w.~+/\-])"
        ),
        value_only=True,
        rank=Rank.CONTEXT,
    ),
    _TokenRule(
        "basic-auth",
        re.compile(
            r"[Aa]uthorization(?<![A-Za-z][Aa]uthorization)[\"']?[ \t]*+[:=][ \t]*+[\"']?"
            r"[Bb]asic[ \t]++([A-Za-z0-9+/]{8,4000}+=*+)"
        ),
        value_only=True,
        rank=Rank.CONTEXT,
    ),
    _TokenRule(  # GitHub's `Authorization: token ...`
        "bearer-token",
        re.compile(
            r"[Aa]uthorization(?<![A-Za-z][Aa]uthorization)[\"']?[ \t]*+[:=][ \t]*+[\"']?"
            r"[Tt]oken[ \t]++([A-Za-z0-9._~+/\-]{16,4000}+=*+)(?![\w.~+/\-])"
        ),
        value_only=True,
        rank=Rank.CONTEXT,
    ),
    _TokenRule(  # .npmrc: //registry.npmjs.org/:_authToken=...
        "npm-token",
        re.compile(r":_(?:authToken|auth|password)[ \t]*+=[ \t]*+([^\s\"'$]{8,500}+)"),
        value_only=True,
    ),
)


def _is_basic_credentials(value: str) -> bool:
    """HTTP Basic credentials are base64 of `user:password`."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except ValueError:
        return False
    return b":" in decoded


def token_hits(text: str) -> Iterator[Hit]:
    text = blank_json_escapes(text)  # `\n<token>` in a JSON-encoded tool result
    for rule in _TOKEN_RULES:
        for m in rule.pattern.finditer(text):
            body = m.group(1)
            if is_fake_body(body) or is_placeholder(body):
                continue
            if rule.kind == "bearer-token" and not has_letter_and_digit(body):
                continue  # "Bearer authentication", "Bearer YOUR_TOKEN_HERE"
            if rule.kind == "basic-auth" and not _is_basic_credentials(body):
                continue
            start, end = m.span(1) if rule.value_only else m.span()
            yield Hit(start, end, rule.kind, rule.rank)


# --------------------------------------------------------------------------------------------
# PEM / PuTTY private keys: the whole block, armour included. END markers are located once and
# looked up by bisect, so many BEGIN lines without an END stay linear.

_PEM_BEGIN = re.compile(r"-----BEGIN[ A-Z0-9]{0,40}?PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END[ A-Z0-9]{0,40}?PRIVATE KEY(?: BLOCK)?-----")
# Without an END (a truncated paste) we fail closed: take the base64 lines that follow, also
# when the newlines are escaped (`\n` inside a JSON string) or the block was folded onto one
# line (a subject, a transcript's tool result: runs of 16+ key characters after a space). A line
# cut short by a length limit ends in "…".
_PEM_BODY = re.compile(
    r"(?:[ \t]*+(?:\r?\n|\\n)[ \t]*+"
    r"(?:[A-Za-z0-9+/=]++(?=[ \t]*+(?:\r?\n|\\n|\Z|[\"'\u2026]))"
    r"|(?:Proc-Type|DEK-Info|Comment|Version|Hash):[^\r\n\\]*+)?+"
    r"|[ \t]++(?:[A-Za-z0-9+/]{16,}+=*+|[A-Za-z0-9+/=]++(?=\u2026|\Z)))*+"
)
_KEY_MATERIAL = re.compile(r"[A-Za-z0-9+/]{32}")  # a mention of the header has none
_PEM_MAX_BLOCK = 64 * 1024
_PUTTY = re.compile(
    r"PuTTY-User-Key-File-\d:[^\r\n]*+"
    r"(?:\r?\n(?:[A-Za-z-]{2,30}+:[^\r\n]*+|[A-Za-z0-9+/=]++(?=\r?\n|\Z|\u2026)))*+"
)


def private_key_hits(text: str) -> Iterator[Hit]:
    ends = [m.end() for m in _PEM_END.finditer(text)]
    begins = list(_PEM_BEGIN.finditer(text))
    covered = -1
    for n, m in enumerate(begins):
        if m.start() < covered:
            continue
        # This block's END: the first one after it, if it comes before the next BEGIN.
        limit = begins[n + 1].start() if n + 1 < len(begins) else len(text)
        i = bisect.bisect_left(ends, m.end())
        end = ends[i] if i < len(ends) and ends[i] <= limit else -1
        end = end if end - m.start() <= _PEM_MAX_BLOCK else -1
        if end < 0 or not _KEY_MATERIAL.search(text, m.end(), min(end, m.end() + 4096)):
            body = _PEM_BODY.match(text, m.end())
            end = body.end() if body else m.end()
            while end > m.end() and text[end - 1] in " \t\r\n":
                end -= 1
        if not _KEY_MATERIAL.search(text, m.end(), min(end, m.end() + 4096)):
            continue  # `_SK_START = b"-----BEGIN OPENSSH PRIVATE KEY-----"`: a mention
        covered = end
        yield Hit(m.start(), end, "private-key", Rank.FORMAT)
    for m in _PUTTY.finditer(text):
        yield Hit(m.start(), m.end(), "private-key", Rank.FORMAT)


# --------------------------------------------------------------------------------------------
# Passwords inside URLs: `scheme://user:password@host`. Only the password is redacted. It runs to
# the last `@` before the host, so an unencoded `@` inside it does not leak a tail.

_URL_PASSWORD = re.compile(
    r"://[^\s:/?#@\"'<>()\[\]]{0,256}+:([^\s/?#\"'<>]{1,256}?)@"
    r"(?=\[|[^\s@/?#\"'<>()\[\],;]{1,256}+(?:[/?#\s\"'<>()\[\],;]|\Z))"
)


def url_password_hits(text: str) -> Iterator[Hit]:
    for m in _URL_PASSWORD.finditer(text):
        if m.start() == 0 or text[m.start() - 1] not in TOKEN_CHARS:
            continue  # no scheme before "://"
        if not is_placeholder(m.group(1)):
            yield Hit(m.start(1), m.end(1), "password-in-url", Rank.CONTEXT)
