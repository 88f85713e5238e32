"""detect-secrets' regex detectors, run through their compiled patterns on in-memory text.

We do not call `scan_line`: it reports values without offsets, reconfigures a process-wide
settings singleton (`transient_settings`), and costs a Python loop per line. Detectors that
backtrack quadratically on adversarial input, flag ordinary hashes, or only name a header are
left out (`_DS_EXCLUDED` says why for each). Patterns without a literal start run only in windows
around a cheap gate match.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache

from local_recall.redaction.findings import Hit, Rank
from local_recall.redaction.placeholders import is_fake_body, is_placeholder

# --------------------------------------------------------------------------------------------
# detect-secrets detectors.

# Left out, with reasons (measured, see docs/security.md):
_DS_EXCLUDED = frozenset(
    {
        "KeywordDetector",  # our assignment rule, with placeholder/reference handling
        "HexHighEntropyString",  # flags every git SHA and sha256 digest
        "Base64HighEntropyString",  # flags base64 fixtures, lockfile integrity, data URIs
        "IPPublicDetector",  # an IP address is not a credential
        "PrivateKeyDetector",  # names the header only; our PEM rule takes the whole block
        "JwtTokenDetector",  # lazy tail drops the signature; quadratic on "eyJeyJ..." runs
        "NpmDetector",  # quadratic on long lines with many "//"; our `:_authToken=` rule
        "CloudantDetector",  # ` +` then ` *` backtracks quadratically on long space runs
        "IbmCloudIamDetector",  # same construction; keys named *_key are our assignments
        "IbmCosHmacDetector",  # same
        "SoftlayerDetector",  # same
        "OpenAIDetector",  # `[...]*` before `{20}`: quadratic on "sk-sk-..."; our sk- rules
    }
)
# Single patterns left out: AWS's "aws ... key ... '<40 chars>'" costs ~1.5 s/MB on text full of
# "aws"; AWS secret keys sit in assignments (`aws_secret_access_key = ...`), our rule's job.
_DS_EXCLUDED_PATTERNS = frozenset({("AWSKeyDetector", 1)})
# Detectors whose secret is a capture group rather than the whole match: (class, pattern index).
_DS_SECRET_GROUP = {("BasicAuthDetector", 0): 1}


@dataclass(frozen=True, slots=True)
class _Gate:
    """A cheap test implied by a detector pattern that cannot start with a literal: the pattern
    is only run in windows around the gate's matches (a speed-up: any match of the pattern
    contains a gate match and lies within `before`/`after` characters of it)."""

    pattern: re.Pattern[str]
    before: int
    after: int


_UNBOUNDED = 4096  # for patterns with an open-ended tail; real tokens are far shorter
_DS_GATES = {
    ("ArtifactoryDetector", 0): _Gate(re.compile(r"AKC[a-zA-Z0-9]{10}"), 1, _UNBOUNDED),
    ("ArtifactoryDetector", 1): _Gate(re.compile(r"AP[\dABCDEF][a-zA-Z0-9]{8}"), 1, _UNBOUNDED),
    ("MailchimpDetector", 0): _Gate(re.compile(r"-us[0-9]"), 32, 1),
    ("TelegramBotTokenDetector", 0): _Gate(re.compile(r":[0-9A-Za-z_-]{35}"), 10, 0),
    ("DiscordBotTokenDetector", 0): _Gate(
        re.compile(r"\.[a-zA-Z\d_-]{6}\.[a-zA-Z\d_-]{27}"), 26, 0
    ),
    ("StripeDetector", 0): _Gate(re.compile(r"k_live_"), 1, 24),
    ("SlackDetector", 0): _Gate(re.compile(r"xox", re.IGNORECASE), 0, _UNBOUNDED),
    ("SlackDetector", 1): _Gate(re.compile(r"hooks\.slack\.com", re.IGNORECASE), 8, _UNBOUNDED),
}
_DS_KINDS = {
    "AWSKeyDetector": "aws-access-key",
    "ArtifactoryDetector": "artifactory-token",
    "AzureStorageKeyDetector": "azure-storage-key",
    "BasicAuthDetector": "password-in-url",
    "DiscordBotTokenDetector": "discord-bot-token",
    "GitHubTokenDetector": "github-token",
    "GitLabTokenDetector": "gitlab-token",
    "MailchimpDetector": "mailchimp-key",
    "OpenAIDetector": "openai-api-key",
    "PypiTokenDetector": "pypi-token",
    "SendGridDetector": "sendgrid-key",
    "SlackDetector": "slack-token",
    "SquareOAuthDetector": "square-oauth-secret",
    "StripeDetector": "stripe-key",
    "TelegramBotTokenDetector": "telegram-bot-token",
    "TwilioKeyDetector": "twilio-key",
}
_DELIMITERS = " \t\r\n=:\"'"


@dataclass(frozen=True, slots=True)
class _DsPattern:
    kind: str
    pattern: re.Pattern[str]
    group: int
    gate: _Gate | None


@cache
def _ds_patterns() -> tuple[_DsPattern, ...]:
    """The detectors' compiled patterns, loaded once (importing detect-secrets costs ~0.2 s)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    detectors: dict[str, type] = get_mapping_from_secret_type_to_class()
    patterns: list[_DsPattern] = []
    for plugin in detectors.values():
        name = plugin.__name__
        if name in _DS_EXCLUDED:
            continue
        kind = _DS_KINDS.get(name) or _slug(str(getattr(plugin, "secret_type", name)))
        for index, pattern in enumerate(getattr(plugin, "denylist", ())):
            key = (name, index)
            if key in _DS_EXCLUDED_PATTERNS:
                continue
            patterns.append(
                _DsPattern(
                    kind,
                    pattern,
                    _DS_SECRET_GROUP.get(key, 0),
                    _DS_GATES.get(key),
                )
            )
    return tuple(patterns)


def _slug(secret_type: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")


def detect_secrets_hits(text: str) -> Iterator[Hit]:
    for ds in _ds_patterns():
        if ds.gate is None:
            matches: Iterable[re.Match[str]] = ds.pattern.finditer(text)
        else:
            matches = _gated_matches(ds.pattern, ds.gate, text)
        for m in matches:
            start, end = m.span(ds.group)
            while start < end and text[start] in _DELIMITERS:
                start += 1  # Artifactory's pattern includes the delimiters around the token
            while end > start and text[end - 1] in _DELIMITERS:
                end -= 1
            value = text[start:end]
            if not value or is_fake_body(value) or is_placeholder(value):
                continue
            yield Hit(start, end, ds.kind, Rank.CONTEXT if ds.group else Rank.DS_FORMAT)


def _gated_matches(pattern: re.Pattern[str], gate: _Gate, text: str) -> Iterator[re.Match[str]]:
    windows: list[list[int]] = []
    for g in gate.pattern.finditer(text):
        lo, hi = max(0, g.start() - gate.before), min(len(text), g.end() + gate.after)
        if windows and lo <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], hi)  # overlapping windows are scanned once
        else:
            windows.append([lo, hi])
    for lo, hi in windows:
        yield from pattern.finditer(text, lo, hi)
