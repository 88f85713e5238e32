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

# The patterns `_ds_patterns` runs: detect-secrets 1.5.0's detectors less the exclusions above,
# as (detector, pattern index, pattern, flags). A copy, because the only way to them is its
# plugin registry, which imports every plugin (and `requests`): ~0.2 s of a first save, out of
# ~0.5 s. tests/redaction/test_ds_table.py (detect-secrets is a development dependency) fails
# when the installed detect-secrets differs: review the change, then update this.
_DS_TABLE: tuple[tuple[str, int, str, int], ...] = (
    ("ArtifactoryDetector", 0, '(?:\\s|=|:|"|^)AKC[a-zA-Z0-9]{10,}(?:\\s|"|$)', 32),
    ("ArtifactoryDetector", 1, '(?:\\s|=|:|"|^)AP[\\dABCDEF][a-zA-Z0-9]{8,}(?:\\s|"|$)', 32),
    ("AWSKeyDetector", 0, "(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}", 32),
    ("AzureStorageKeyDetector", 0, "AccountKey=[a-zA-Z0-9+\\/=]{88}", 32),
    (
        "BasicAuthDetector",
        0,
        "://[^:/\\?\\#\\[\\]@!\\$\\&'\\(\\)\\*\\+,;=\\s]+:([^:/\\?\\#\\[\\]@!\\$\\&'\\(\\)\\*\\+,;=\\s]+)@",
        32,
    ),
    (
        "DiscordBotTokenDetector",
        0,
        "[MNO][a-zA-Z\\d_-]{23,25}\\.[a-zA-Z\\d_-]{6}\\.[a-zA-Z\\d_-]{27}",
        32,
    ),
    ("GitHubTokenDetector", 0, "(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36}", 32),
    ("GitLabTokenDetector", 0, "(glpat|gldt|glft|glsoat|glrt)-[A-Za-z0-9_\\-]{20,50}(?!\\w)", 32),
    ("GitLabTokenDetector", 1, "GR1348941[A-Za-z0-9_\\-]{20,50}(?!\\w)", 32),
    ("GitLabTokenDetector", 2, "glcbt-([0-9a-fA-F]{2}_)?[A-Za-z0-9_\\-]{20,50}(?!\\w)", 32),
    ("GitLabTokenDetector", 3, "glimt-[A-Za-z0-9_\\-]{25}(?!\\w)", 32),
    ("GitLabTokenDetector", 4, "glptt-[A-Za-z0-9_\\-]{40}(?!\\w)", 32),
    ("GitLabTokenDetector", 5, "glagent-[A-Za-z0-9_\\-]{50,1024}(?!\\w)", 32),
    ("GitLabTokenDetector", 6, "gloas-[A-Za-z0-9_\\-]{64}(?!\\w)", 32),
    ("MailchimpDetector", 0, "[0-9a-z]{32}-us[0-9]{1,2}", 32),
    ("PypiTokenDetector", 0, "pypi-AgEIcHlwaS5vcmc[A-Za-z0-9-_]{70,}", 32),
    ("PypiTokenDetector", 1, "pypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9-_]{70,}", 32),
    ("SendGridDetector", 0, "SG\\.[a-zA-Z0-9_-]{22}\\.[a-zA-Z0-9_-]{43}", 32),
    ("SlackDetector", 0, "xox(?:a|b|p|o|s|r)-(?:\\d+-)+[a-z0-9]+", 34),
    (
        "SlackDetector",
        1,
        "https://hooks\\.slack\\.com/services/T[a-zA-Z0-9_]+/B[a-zA-Z0-9_]+/[a-zA-Z0-9_]+",
        98,
    ),
    ("SquareOAuthDetector", 0, "sq0csp-[0-9A-Za-z\\\\\\-_]{43}", 32),
    ("StripeDetector", 0, "(?:r|s)k_live_[0-9a-zA-Z]{24}", 32),
    ("TelegramBotTokenDetector", 0, "\\d{8,10}:[0-9A-Za-z_-]{35}", 32),
    ("TwilioKeyDetector", 0, "AC[a-z0-9]{32}", 32),
    ("TwilioKeyDetector", 1, "SK[a-z0-9]{32}", 32),
)


@dataclass(frozen=True, slots=True)
class _DsPattern:
    kind: str
    pattern: re.Pattern[str]
    group: int
    gate: _Gate | None


@cache
def _ds_patterns() -> tuple[_DsPattern, ...]:
    """The detectors' compiled patterns, compiled once."""
    return tuple(
        _DsPattern(
            _DS_KINDS[name],
            re.compile(pattern, flags),
            _DS_SECRET_GROUP.get((name, index), 0),
            _DS_GATES.get((name, index)),
        )
        for name, index, pattern, flags in _DS_TABLE
    )


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
