"""Redaction: secrets never reach a memory file, the index or an extractor request.

`remove_private` drops `<private>...</private>` spans a user marked as not-for-memory.
`find_secrets` / `redact` find credentials in free text and replace each secret *value* with
`[REDACTED:<kind>]`, keeping the words around it. Two sources of findings:

* detect-secrets' regex detectors (AWS, Slack, Stripe, GitHub, GitLab, Twilio, ...), used through
  their compiled `denylist` patterns on in-memory text. We do not call `scan_line`: it reports
  values without offsets, reconfigures a process-wide settings singleton (`transient_settings`),
  and costs a Python loop per line. Detectors that backtrack quadratically on adversarial input,
  flag ordinary hashes, or only name a header are left out and covered by our rules
  (`_DS_EXCLUDED` says why for each).
* Our rules for what detect-secrets lacks or matches too loosely: Anthropic/OpenAI/Google/Hugging
  Face keys, GitHub fine-grained tokens, whole PEM blocks, full JWTs, bearer/basic headers,
  passwords in URLs, and `KEY=value` / `"password": "..."` assignments whose key names a secret.

Speed and safety: every pattern starts with a literal or a small character class (so the regex
engine can skip ahead), checks the word boundary right after that literal (a run like
"eyJeyJeyJ..." is then scanned once, not once per start), and uses bounded or possessive
quantifiers, so no input makes it backtrack quadratically. detect-secrets patterns without a
literal start run only in windows around a cheap gate match. docs/security.md has the threat
model and measured numbers.
"""

from __future__ import annotations

import base64
import bisect
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from local_recall.errors import ScanTargetUnreadable

_PRIVATE_SPAN = re.compile(r"<private>.*?(?:</private>|\Z)", re.IGNORECASE | re.DOTALL)


def remove_private(text: str) -> str:
    """Remove `<private>` spans; an unclosed tag hides everything after it (fail closed)."""
    return _PRIVATE_SPAN.sub("", text)


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str  # short slug, e.g. "anthropic-api-key", "env-assignment"
    start: int  # character offsets of the secret value in the scanned text
    end: int
    line: int  # 1-based line of `start`


@dataclass(frozen=True, slots=True)
class Redacted:
    text: str
    findings: tuple[Finding, ...]  # offsets refer to the text that was scanned, not `text`


@dataclass(frozen=True, slots=True)
class FileFinding:
    """A secret in a file, deliberately without the secret: reports can be shown anywhere."""

    path: Path
    line: int
    kind: str


@dataclass(frozen=True, slots=True)
class _Hit:
    start: int
    end: int
    kind: str
    rank: int  # lower wins when hits overlap: a named format beats a generic assignment


# Our named formats, then detect-secrets' formats, then context rules, then assignments.
_FORMAT, _DS_FORMAT, _CONTEXT, _ASSIGNMENT_RANK = 0, 1, 2, 3


def marker(kind: str) -> str:
    """The text that replaces a secret of `kind`."""
    return f"[REDACTED:{kind}]"


_MARKER = re.compile(r"\[REDACTED:[a-z0-9-]{1,40}\]")
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")

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
    rank: int = _FORMAT


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
        rank=_CONTEXT,
    ),
    _TokenRule(
        "basic-auth",
        re.compile(
            r"[Aa]uthorization(?<![A-Za-z][Aa]uthorization)[\"']?[ \t]*+[:=][ \t]*+[\"']?"
            r"[Bb]asic[ \t]++([A-Za-z0-9+/]{8,4000}+=*+)"
        ),
        value_only=True,
        rank=_CONTEXT,
    ),
    _TokenRule(  # GitHub's `Authorization: token ...`
        "bearer-token",
        re.compile(
            r"[Aa]uthorization(?<![A-Za-z][Aa]uthorization)[\"']?[ \t]*+[:=][ \t]*+[\"']?"
            r"[Tt]oken[ \t]++([A-Za-z0-9._~+/\-]{16,4000}+=*+)(?![\w.~+/\-])"
        ),
        value_only=True,
        rank=_CONTEXT,
    ),
    _TokenRule(  # .npmrc: //registry.npmjs.org/:_authToken=...
        "npm-token",
        re.compile(r":_(?:authToken|auth|password)[ \t]*+=[ \t]*+([^\s\"'$]{8,500}+)"),
        value_only=True,
    ),
)


def _is_fake_body(body: str) -> bool:
    """Fakes people write in docs: `xxxx`, `...EXAMPLE`, `****`, `abcdef...` sequences."""
    if "EXAMPLE" in body or "xxxx" in body.lower() or "..." in body or "***" in body:
        return True
    return len(set(body)) < 6 or _is_sequential(body)


def _is_sequential(body: str) -> bool:
    return bool(_ds_is_sequential()(body))


@cache
def _ds_is_sequential() -> Callable[[str], bool]:
    from detect_secrets.filters.heuristic import is_sequential_string

    return is_sequential_string


def _is_basic_credentials(value: str) -> bool:
    """HTTP Basic credentials are base64 of `user:password`."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except ValueError:
        return False
    return b":" in decoded


def _has_letter_and_digit(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _token_hits(text: str) -> Iterator[_Hit]:
    for rule in _TOKEN_RULES:
        for m in rule.pattern.finditer(text):
            body = m.group(1)
            if _is_fake_body(body) or _is_placeholder(body):
                continue
            if rule.kind == "bearer-token" and not _has_letter_and_digit(body):
                continue  # "Bearer authentication", "Bearer YOUR_TOKEN_HERE"
            if rule.kind == "basic-auth" and not _is_basic_credentials(body):
                continue
            start, end = m.span(1) if rule.value_only else m.span()
            yield _Hit(start, end, rule.kind, rule.rank)


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


def _private_key_hits(text: str) -> Iterator[_Hit]:
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
        yield _Hit(m.start(), end, "private-key", _FORMAT)
    for m in _PUTTY.finditer(text):
        yield _Hit(m.start(), m.end(), "private-key", _FORMAT)


# --------------------------------------------------------------------------------------------
# Passwords inside URLs: `scheme://user:password@host`. Only the password is redacted. It runs to
# the last `@` before the host, so an unencoded `@` inside it does not leak a tail.

_URL_PASSWORD = re.compile(
    r"://[^\s:/?#@\"'<>()\[\]]{0,256}+:([^\s/?#\"'<>]{1,256}?)@"
    r"(?=\[|[^\s@/?#\"'<>()\[\],;]{1,256}+(?:[/?#\s\"'<>()\[\],;]|\Z))"
)


def _url_password_hits(text: str) -> Iterator[_Hit]:
    for m in _URL_PASSWORD.finditer(text):
        if m.start() == 0 or text[m.start() - 1] not in _TOKEN_CHARS:
            continue  # no scheme before "://"
        if not _is_placeholder(m.group(1)):
            yield _Hit(m.start(1), m.end(1), "password-in-url", _CONTEXT)


# --------------------------------------------------------------------------------------------
# Assignments whose key names a secret: `.env` lines, `export X_TOKEN=...`, YAML/JSON entries,
# code literals, HTTP headers, `--password=...` flags. The key decides whether it is a secret;
# the value decides whether it is a literal (redact) or a reference/placeholder (keep).

# Finds a secret-sounding word inside a key that a separator follows; the key's start is then
# found by walking back. Spelled-out case variants keep a literal first character for speed.
_KEYWORD_KEY = re.compile(
    r"(?:pass|Pass|PASS|pwd|Pwd|PWD|secret|Secret|SECRET|token|Token|TOKEN|key|Key|KEY"
    r"|auth|Auth|AUTH|credential|Credential|CREDENTIAL)"
    r"[\w.\-]{0,100}+\\?[\"']?\]?+[ \t]*+(?::=|=>|=(?!=)|:(?![:/\\]))"
)
# A quoted value, with an optional Python bytes/unicode prefix (b"..."). Raw strings are left
# out on purpose: r"..." in code is nearly always a regex or a path. `\"...\"` is a quoted value
# inside a JSON-encoded string (a transcript line, a tool result).
_QUOTED = (
    r"[bBuU]?+(?:\"(?:[^\"\\\r\n]|\\.){0,2000}+\"|'(?:[^'\\\r\n]|\\.){0,2000}+')"
    r"|\\\"(?:[^\"\\\r\n]|\\[^\"\r\n]){0,2000}+\\\""
)
# An unquoted value ends at whitespace, a quote, or an escape such as a literal `\n`.
_UNQUOTED = r"(?:[^\s\"'`\\]|\\(?![nrt\"'\\])){1,2000}+"
_ASSIGNMENT = re.compile(
    r"(?P<kq>\\?[\"']|)(?P<key>[A-Za-z_][\w.\-]{0,100}+)(?P=kq)(?P<bracket>\]?+)"
    r"(?P<sp1>[ \t]*+)(?P<sep>:=|=>|=(?!=)|:(?![:/\\]))(?P<sp2>[ \t]*+)"
    rf"(?P<value>{_QUOTED}|{_UNQUOTED})"
)
_FLAG = re.compile(
    r"--(?P<key>[A-Za-z][\w\-]{0,60}+)(?P<sep>=|[ \t]++)"
    rf"(?P<value>{_QUOTED}|{_UNQUOTED})"
)
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_NOT_BEFORE_KEY = frozenset("$@%/\\")  # `$API_KEY=`, `%TOKEN%`, a path segment
_KEY_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_SECRET_WORDS = frozenset(
    {"password", "passwd", "pwd", "passphrase", "secret", "token", "apikey", "credential",
     "credentials", "privatekey", "accesskey", "secretkey", "authtoken", "accesstoken",
     "refreshtoken", "clientsecret"}
)  # fmt: skip
_LAST_ONLY_WORDS = frozenset({"pass", "auth", "authorization"})
_KEY_QUALIFIERS = frozenset(
    {"api", "private", "secret", "access", "signing", "encryption", "master", "client", "auth",
     "service", "account", "session", "license", "app", "webhook", "deploy", "admin", "x",
     "aws", "ssh", "gpg", "pgp", "jwt", "hmac", "shared", "consumer",
     # providers: OPENAI_KEY, MAPBOX_KEY, ... are credentials whatever their format
     "openai", "anthropic", "claude", "gemini", "google", "azure", "stripe", "github", "gitlab",
     "slack", "mapbox", "sendgrid", "twilio", "mailgun", "algolia", "datadog", "sentry",
     "heroku", "vercel", "openrouter", "groq", "mistral", "cohere", "replicate", "huggingface",
     "hf", "pinecone", "supabase", "firebase", "cloudflare", "digitalocean", "linear", "notion"}
)  # fmt: skip
_VOCABULARY_TOKENS = frozenset(
    {"mask", "pad", "unk", "cls", "sep", "bos", "eos", "eot", "special", "start", "end", "stop",
     "begin", "image", "audio", "video", "additional"}
)  # fmt: skip
# A key ending in one of these holds something *about* a secret, not the secret.
_NOT_SECRET_SUFFIXES = frozenset(
    {"id", "ids", "name", "names", "type", "types", "url", "uri", "urls", "endpoint", "path",
     "file", "dir", "env", "var", "field", "fields", "prefix", "header", "hash", "expiry",
     "expires", "expiration", "ttl", "timeout", "format", "policy", "ref", "arn", "label",
     "hint", "required", "enabled", "min", "max", "length", "len", "size", "count", "limit",
     "limits", "index", "usage", "budget", "cost", "store", "manager", "provider", "mode",
     "version", "helper", "command", "cmd", "location", "source", "kind", "rotation", "at",
     "set", "exists", "valid", "regex", "pattern", "placeholder", "prompt", "message", "error",
     "text", "template", "class", "schema", "filter", "number", "reset", "changed", "period",
     "str", "timestamp", "scope", "scopes", "audience", "issuer", "algorithm", "alg"}
)  # fmt: skip
_NON_VALUES = frozenset(
    {"true", "false", "yes", "no", "on", "off", "none", "null", "nil", "undefined", "str",
     "string", "int", "bytes", "bool", "boolean", "secretstr", "any", "optional", "object",
     "dict", "list", "number", "float", "required"}
)  # fmt: skip
_PLACEHOLDER_WORDS = frozenset(
    {"changeme", "change-me", "change_me", "changethis", "replaceme", "replace-me", "redacted",
     "secret", "password", "passwd", "pwd", "pass", "token", "apikey", "api_key", "api-key",
     "key", "todo", "tbd", "example", "sample", "dummy", "fake", "test", "testing",
     "placeholder", "hidden", "masked", "empty", "foo", "bar", "foobar", "baz", "value",
     "mysecret", "mypassword", "secret-key", "secret_key", "unset", "default", "notset",
     "basic", "bearer", "digest"}
)  # fmt: skip
_PLACEHOLDER_SHAPE = re.compile(
    r"\[REDACTED|^\$|^%\w+%$|^<.*>$|<[A-Za-z_ \-]{2,40}>|\{\{|\$\{|^\*+$|\.\.\."
    r"|xxxx|XXXX|%[sd(]|\{\}|\{[A-Za-z_][\w.]*\}|^\{|\*\*\*|\u2026"
    r"|#[0-9A-Fa-f]{3,8}\b"
    r"|^(?:your|my|insert|enter|put|replace)[-_ ]|[-_ ](?:here|goes[-_ ]?here)$"
)
_NAME_WORDS = re.compile(r"(?i:pass|pwd|secret|token|auth|key|credential)")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_.\-]*+")  # no digits: a name, not a password
_TYPE_NAME = re.compile(r"[A-Z][\w.]*+")
_AUTH_SCHEME = re.compile(r"(?:Bearer|bearer|Basic|basic|[Tt]oken|Digest)[ \t]++")
_CONCATENATED = re.compile(r"[ \t]*+\+")
_QUERY_VALUE_END = re.compile(r"[&#;]")
_NUMBER = re.compile(r"-?[0-9]{1,12}(?:\.[0-9]+)?")  # ports, counts, timeouts
_TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_\-+/=.~]++")
_IDENTIFIER_WITH_DIGITS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*+")
_CALL_OR_SUBSCRIPT = re.compile(r"[A-Za-z_][\w.]*+[(\[]")
_DOTTED_REFERENCE = re.compile(r"[A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)++")
_PATH_VALUE = re.compile(r"(?:~|\.{1,2})?/[\w.\-/]*+|[A-Za-z]:\\[\w.\-\\ ]*+")
_URL_VALUE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*+://")
# After an unquoted YAML/header value only punctuation, a comment or the end of line may follow.
_LINE_TAIL_OK = re.compile(r"[ \t]*+[;}\]\"']?[ \t]*+(?:#|//|\r?\n|\Z)")
_YAML_LINE_PREFIX = re.compile(r"[ \t]*+(?:-[ \t]++)?(?:-H[ \t]++[\"']?)?")
_ENV_LINE_PREFIX = re.compile(r"(?:[ \t]*+(?:export|set)[ \t]++)?")
_MIN_VALUE = 6  # "abc", "foo1" in an assignment are examples, not credentials
_LOOKBACK = 200  # how far back we look for the start of a line; bounds work on huge lines


@lru_cache(maxsize=4096)  # keys repeat a lot within one text (and across memories)
def _key_is_secret(key: str) -> bool:
    # `spring.datasource.password` is a password; `token.markup` is an attribute of a token.
    parts = [p.lower() for p in _KEY_PART.findall(key.rsplit(".", 1)[-1])]
    if not parts or parts[-1] in _NOT_SECRET_SUFFIXES or "public" in parts:
        return False
    if parts[-1] == "token" and len(parts) > 1 and parts[-2] in _VOCABULARY_TOKENS:
        return False  # mask_token = "[MASK]": a tokenizer's special token
    if parts[-1] in _LAST_ONLY_WORDS:
        return True
    return any(
        part in _SECRET_WORDS or (part == "key" and i > 0 and parts[i - 1] in _KEY_QUALIFIERS)
        for i, part in enumerate(parts)
    )


def _is_placeholder(value: str) -> bool:
    v = value.strip()
    if not v or v.lower() in _PLACEHOLDER_WORDS or v.lower() in _NON_VALUES:
        return True
    if len(set(v)) == 1:
        return True  # "xxxxxxxx", "********"
    return _PLACEHOLDER_SHAPE.search(v) is not None


def _assignment_hits(text: str) -> Iterator[_Hit]:
    consumed = 0  # a keyword inside the previous key or value starts nothing new
    for k in _KEYWORD_KEY.finditer(text):
        if k.start() < consumed:
            continue
        key_start = _key_start(text, k.start())
        if key_start is None:
            continue
        m = _ASSIGNMENT.match(text, _quote_start(text, key_start))
        if m is None:
            continue
        consumed = m.end()
        if (m.group("bracket") and not m.group("kq")) or not _key_is_secret(m.group("key")):
            continue  # `Union[str, AddedToken] = ...`; but `environ["API_KEY"] = ...` counts
        value, start, quoted = _unquote(m)
        # `https://host/path?api_key=...&page=2`, `Server=db;Password=...;`: a literal up to the
        # next separator.
        in_query = not quoted and m.start() > 0 and text[m.start() - 1] in "?&;"
        if in_query:
            value = _QUERY_VALUE_END.split(value, maxsplit=1)[0]
        scheme = _AUTH_SCHEME.match(value)
        if scheme:  # "Authorization": "Bearer abc...": the credential is after the scheme
            value, start = value[scheme.end() :], start + scheme.end()
        if len(value) < _MIN_VALUE or _is_placeholder(value) or _NUMBER.fullmatch(value):
            continue
        if quoted and _CONCATENATED.match(text, m.end()):
            continue  # `"Basic " + encoded`, `'username:' + name`: a fragment being built
        if in_query or not _is_not_literal(m, value, quoted=quoted):
            yield _Hit(start, start + len(value), "env-assignment", _ASSIGNMENT_RANK)


def _flag_hits(text: str) -> Iterator[_Hit]:
    for m in _FLAG.finditer(text):
        if m.start() > 0 and text[m.start() - 1] in _KEY_CHARS:
            continue
        if not _key_is_secret(m.group("key")):
            continue
        value, start, quoted = _unquote(m)
        if len(value) < _MIN_VALUE or _is_placeholder(value) or value.startswith("-"):
            continue
        if not quoted and (_CALL_OR_SUBSCRIPT.match(value) or _PATH_VALUE.fullmatch(value)):
            continue
        if m.group("sep") != "=" and not quoted and not _has_letter_and_digit(value):
            continue  # "use --password to pass it": prose, not a value
        yield _Hit(start, start + len(value), "secret-flag", _ASSIGNMENT_RANK)


def _key_start(text: str, keyword_at: int) -> int | None:
    """Where the key around a keyword begins, or None if it is not a standalone key."""
    i, floor = keyword_at, max(0, keyword_at - 100)
    while i > floor and text[i - 1] in _KEY_CHARS:
        i -= 1
    if i > 0 and text[i - 1] in _KEY_CHARS:
        return None  # longer than any key we consider
    before = i - 1
    if before >= 0 and text[before] in "\"'":
        before -= 1
        if before >= 0 and text[before] == "\\":
            before -= 1  # \"password\": inside a JSON-encoded string
    if before >= 0 and text[before] in _NOT_BEFORE_KEY:
        return None
    return i


def _quote_start(text: str, key_start: int) -> int:
    if key_start > 0 and text[key_start - 1] in "\"'":
        return key_start - 2 if key_start > 1 and text[key_start - 2] == "\\" else key_start - 1
    return key_start


def _unquote(m: re.Match[str]) -> tuple[str, int, bool]:
    """The value without its quotes (or trailing punctuation), its offset, and whether quoted."""
    raw, start = m.group("value"), m.start("value")
    if raw.startswith(('\\"', "\\'")) and len(raw) >= 4 and raw.endswith(raw[:2]):
        return raw[2:-2], start + 2, True
    opening = 1 if raw[:1] in ("b", "B", "u", "U") else 0
    quote = raw[opening : opening + 1]
    if quote and quote in "\"'" and len(raw) >= opening + 2 and raw[-1] == quote:
        return raw[opening + 1 : -1], start + opening + 1, True
    return raw.rstrip(",;)}]"), start, False


def _is_not_literal(m: re.Match[str], value: str, *, quoted: bool) -> bool:
    """True when the value is code, a type, a path, a URL, a name or prose, not a secret."""
    if _URL_VALUE.match(value) or _PATH_VALUE.fullmatch(value):
        return True  # credentials inside a URL are the URL rule's business
    if _IDENTIFIER.fullmatch(value) and _NAME_WORDS.search(value):
        return True  # `SERVER_AUTH: "serverAuth"`, `CHALLENGE_PASSWORD: "challengePassword"`
    if quoted:
        return len(value.split()) >= 3  # UI strings: "Enter your password here"
    if _CALL_OR_SUBSCRIPT.match(value):
        return True  # getpass(), os.environ["X"], settings.get("token")
    return not _is_unquoted_literal(m, value)


def _is_unquoted_literal(m: re.Match[str], value: str) -> bool:
    text, start, sep = m.string, m.start(), m.group("sep")
    window = max(0, start - _LOOKBACK)
    newline = text.rfind("\n", window, start)
    at_line_start = newline >= 0 or window == 0
    prefix = text[newline + 1 if newline >= 0 else window : start]
    if sep == ":":
        # YAML or a header: the key starts its line and the value ends it. "the token: we rotate
        # it" is prose; `password: str,` and `token: Token` are Python annotations.
        # Text folded onto one line (a subject, a keyword, a flattened tool result) has no line
        # start left: there a random-looking value is still a literal, unless it reads as an
        # annotation (`private_key: ed25519.Ed25519PrivateKey,`).
        folded_literal = (
            _looks_random(value)
            and not m.group("value").endswith((",", ")"))
            and not _DOTTED_REFERENCE.fullmatch(value)
        )
        return folded_literal or (
            at_line_start
            and _YAML_LINE_PREFIX.fullmatch(prefix) is not None
            and not m.group("value").endswith((",", ")"))
            and not (_TYPE_NAME.fullmatch(value) and not _looks_random(value))
            and _LINE_TAIL_OK.match(text, m.end("value")) is not None
        )
    if _DOTTED_REFERENCE.fullmatch(value) and not any(map(_looks_random, value.split("."))):
        return False  # SECRET_KEY=settings.SECRET, api_key = config.anthropic.key
    bare_equals = sep == "=" and not m.group("sp1") and not m.group("sp2")
    env_line = at_line_start and _ENV_LINE_PREFIX.fullmatch(prefix) is not None
    if bare_equals and (m.group("key").isupper() or env_line):
        return True  # API_KEY=abc, export FOO_TOKEN=abc, spring.datasource.password=abc
    if bare_equals and prefix.strip() and not _inside_brackets(prefix):
        # `psql "host=db password=s3cr3t"`, `curl -d password=s3cr3t`: a shell or conninfo word.
        # In a call (`f(x, password=pw)`), an indented argument line or `let pass=userPw;` it
        # is code.
        return not m.group("value").endswith((",", ")")) and not _IDENTIFIER.fullmatch(value)
    # Elsewhere an unquoted value is usually code (`token = get_token`, `Client(api_key=key)`);
    # only a random-looking one is a literal (`aws_secret_access_key = wJalr...` in an INI file).
    return _looks_random(value)


def _inside_brackets(prefix: str) -> bool:
    depth = 0
    for c in prefix:
        if c in "([{":
            depth += 1
        elif c in ")]}" and depth:
            depth -= 1
    return depth > 0


def _looks_random(value: str) -> bool:
    """Long, mixed letters and digits, and not shaped like a name: either it has characters an
    identifier cannot have (`/`, `+`, `-`), or it switches case/digit class very often."""
    if len(value) < 16 or not _has_letter_and_digit(value) or not _TOKEN_SHAPE.fullmatch(value):
        return False
    if not _IDENTIFIER_WITH_DIGITS.fullmatch(value):
        return True
    classes = [0 if c.islower() else 1 if c.isupper() else 2 for c in value]
    switches = sum(1 for a, b in itertools.pairwise(classes) if a != b)
    return switches >= 0.45 * len(value)  # random: ~0.55; CamelCase names: ~0.3


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


def _detect_secrets_hits(text: str) -> Iterator[_Hit]:
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
            if not value or _is_fake_body(value) or _is_placeholder(value):
                continue
            yield _Hit(start, end, ds.kind, _CONTEXT if ds.group else _DS_FORMAT)


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


# --------------------------------------------------------------------------------------------
# Assembly.

_FINDERS: tuple[Callable[[str], Iterable[_Hit]], ...] = (
    _private_key_hits,
    _token_hits,
    _url_password_hits,
    _assignment_hits,
    _flag_hits,
    _detect_secrets_hits,
)


def _resolve(hits: Iterable[_Hit], protected: list[tuple[int, int]]) -> list[_Hit]:
    """Overlapping hits become one span (their union) named by the best-ranked hit. Hits that
    touch an existing `[REDACTED:...]` marker are dropped, which makes redaction idempotent."""
    merged: list[_Hit] = []
    for hit in sorted(hits, key=lambda h: (h.start, -h.end)):
        if _overlaps_any(hit, protected):
            continue
        if merged and hit.start < merged[-1].end:
            last = merged[-1]
            best = min(last, hit, key=lambda h: (h.rank, h.start - h.end))
            merged[-1] = _Hit(last.start, max(last.end, hit.end), best.kind, best.rank)
        else:
            merged.append(hit)
    return merged


def _overlaps_any(hit: _Hit, spans: list[tuple[int, int]]) -> bool:
    # Spans are sorted and disjoint: only the last one starting before hit.end can reach it.
    i = bisect.bisect_left(spans, (hit.end, -1))
    return i > 0 and spans[i - 1][1] > hit.start


def find_secrets(text: str) -> tuple[Finding, ...]:
    """Secrets in `text`: non-overlapping, sorted by offset."""
    protected = [m.span() for m in _MARKER.finditer(text)]
    hits = _resolve((hit for find in _FINDERS for hit in find(text)), protected)
    findings: list[Finding] = []
    line, counted_to = 1, 0
    for h in hits:
        line += text.count("\n", counted_to, h.start)
        counted_to = h.start
        findings.append(Finding(h.kind, h.start, h.end, line))
    return tuple(findings)


def redact(text: str) -> Redacted:
    """Replace each secret value with `[REDACTED:<kind>]`; the words around it stay."""
    findings = find_secrets(text)
    if not findings:
        return Redacted(text, ())
    parts: list[str] = []
    cursor = 0
    for f in findings:
        parts += [text[cursor : f.start], marker(f.kind)]
        cursor = f.end
    parts.append(text[cursor:])
    return Redacted("".join(parts), findings)


def redact_for_storage(text: str) -> Redacted:
    """What every write path stores: `<private>` spans removed first, then secrets redacted.
    Finding offsets refer to the text after private spans were removed."""
    return redact(remove_private(text))


# --------------------------------------------------------------------------------------------
# Scanning committed files (`local-recall scan`, the pre-commit hook).

_PRIVATE_TAG = re.compile(r"<private>", re.IGNORECASE)


def scan_paths(paths: Iterable[str | Path]) -> list[FileFinding]:
    """Secrets, and `<private>` tags that escaped the store, in the given files; directories are
    searched for `*.md`. Raises ScanTargetUnreadable for a path that cannot be read: skipping it
    would report "clean" for a file nobody looked at."""
    findings: list[FileFinding] = []
    for path in _expand(paths):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise ScanTargetUnreadable(path, exc.strerror or str(exc)) from exc
        findings += [FileFinding(path, f.line, f.kind) for f in find_secrets(text)]
        findings += [
            FileFinding(path, text.count("\n", 0, m.start()) + 1, "private-span")
            for m in _PRIVATE_TAG.finditer(text)
        ]
    return sorted(findings, key=lambda f: (str(f.path), f.line, f.kind))


def _expand(paths: Iterable[str | Path]) -> Iterator[Path]:
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*.md") if p.is_file())
        else:
            yield path
