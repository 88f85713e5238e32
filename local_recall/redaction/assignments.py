"""Assignments whose key names a secret: `.env` lines, YAML/JSON entries, code literals, headers,
query strings, `--password=...` flags."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from local_recall.redaction.findings import Hit, Rank
from local_recall.redaction.placeholders import (
    ascii_lower,
    has_letter_and_digit,
    is_placeholder,
    looks_random,
)

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
_NAME_WORDS = re.compile(r"(?i:pass|pwd|secret|token|auth|key|credential)")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_.\-]*+")  # no digits: a name, not a password
_TYPE_NAME = re.compile(r"[A-Z][\w.]*+")
_AUTH_SCHEME = re.compile(r"(?:Bearer|bearer|Basic|basic|[Tt]oken|Digest)[ \t]++")
_CONCATENATED = re.compile(r"[ \t]*+\+")
_QUERY_VALUE_END = re.compile(r"[&#;]")
_NUMBER = re.compile(r"-?[0-9]{1,12}(?:\.[0-9]+)?")  # ports, counts, timeouts
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


def assignment_hits(text: str) -> Iterator[Hit]:
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
        if len(value) < _MIN_VALUE or is_placeholder(value) or _NUMBER.fullmatch(value):
            continue
        if quoted and _CONCATENATED.match(text, m.end()):
            continue  # `"Basic " + encoded`, `'username:' + name`: a fragment being built
        if in_query or not _is_not_literal(m, value, quoted=quoted):
            yield Hit(start, start + len(value), "env-assignment", Rank.ASSIGNMENT)


def flag_hits(text: str) -> Iterator[Hit]:
    for m in _FLAG.finditer(text):
        if m.start() > 0 and text[m.start() - 1] in _KEY_CHARS:
            continue
        if not _key_is_secret(m.group("key")):
            continue
        value, start, quoted = _unquote(m)
        if len(value) < _MIN_VALUE or is_placeholder(value) or value.startswith("-"):
            continue
        if not quoted and (_CALL_OR_SUBSCRIPT.match(value) or _PATH_VALUE.fullmatch(value)):
            continue
        if m.group("sep") != "=" and not quoted and not has_letter_and_digit(value):
            continue  # "use --password to pass it": prose, not a value
        yield Hit(start, start + len(value), "secret-flag", Rank.ASSIGNMENT)


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
            looks_random(value)
            and not m.group("value").endswith((",", ")"))
            and not _DOTTED_REFERENCE.fullmatch(value)
        )
        return folded_literal or (
            at_line_start
            and _YAML_LINE_PREFIX.fullmatch(prefix) is not None
            and not m.group("value").endswith((",", ")"))
            and not (_TYPE_NAME.fullmatch(value) and not looks_random(value))
            and _LINE_TAIL_OK.match(text, m.end("value")) is not None
        )
    if _DOTTED_REFERENCE.fullmatch(value) and not any(map(looks_random, value.split("."))):
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
    return looks_random(value)


def _inside_brackets(prefix: str) -> bool:
    depth = 0
    for c in prefix:
        if c in "([{":
            depth += 1
        elif c in ")]}" and depth:
            depth -= 1
    return depth > 0


# --------------------------------------------------------------------------------------------
# Secrets stated in prose: "my password is hunter2-x9", "the root password for db1 was: Zq8...",
# "the API token is ghx...". A password counts when it holds a digit or a symbol (a word like
# "stored" or "required" is prose); a token or key only when it looks random. Only "is"/"was"
# join them: `key = ...` and `key: ...` are code or config, the assignment rule's business.

# Run on ASCII-lower-cased text, only where one of its words occurs (found with str.find, far
# faster than letting the regex try every p, s, k and t of ordinary prose).
_PROSE = re.compile(
    r"(?P<word>pass(?:word|wd|phrase|code)?+|pwd|secret|key|token)"
    r"(?:[ \t]++(?:for|of|on|to)[ \t]++[\w.@/:\-]{1,60}+)?"
    r"[ \t]++(?:is|was)(?:[ \t]++(?:now|still|set[ \t]++to|changed[ \t]++to))?[ \t]*+:?"
    r"[ \t]*+[\"'`\u201c\u2018]?+"
    r"(?P<value>[^\s\"'`\u201d\u2019]{6,200}+)"
)
_PASSWORD_WORDS = frozenset({"pass", "password", "passwd", "passphrase", "passcode", "pwd"})
_TRAILING = ".,;:!?)]}"


_PROSE_WORDS = ("pass", "pwd", "secret", "key", "token")


def _prose_matches(lowered: str) -> Iterator[re.Match[str]]:
    starts: set[int] = set()
    for word in _PROSE_WORDS:
        at = lowered.find(word)
        while at >= 0:
            if at == 0 or not lowered[at - 1].isalnum():  # not "apikey", "bypass"
                starts.add(at)
            at = lowered.find(word, at + 1)
    end = -1
    for at in sorted(starts):
        m = _PROSE.match(lowered, at) if at >= end else None
        if m is not None:
            end = m.end()
            yield m


def prose_hits(text: str) -> Iterator[Hit]:
    lowered = ascii_lower(text)
    for m in _prose_matches(lowered):
        start = m.start("value")
        value = text[start : m.end("value")].rstrip(_TRAILING)
        if len(value) < _MIN_VALUE or is_placeholder(value) or _NUMBER.fullmatch(value):
            continue
        if _URL_VALUE.match(value) or _PATH_VALUE.fullmatch(value):
            continue
        if m.group("word").lower() in _PASSWORD_WORDS:
            telling = any(c.isdigit() for c in value) or any(
                not c.isalnum() and c not in "-_." for c in value
            )
            if not (telling or looks_random(value)) or _CALL_OR_SUBSCRIPT.match(value):
                continue
            kind = "password-in-prose"
        elif looks_random(value):
            kind = "secret-in-prose"
        else:
            continue
        yield Hit(start, start + len(value), kind, Rank.PROSE)
