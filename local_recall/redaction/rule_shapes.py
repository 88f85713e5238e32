"""Betterleaks' rules, adapted so that a token is found in prose as well as in code.

The rules were written for source files, and three of their habits lose a token a person
wrote in a sentence, a note or a chat:

1. **The end of a token.** A token rule ends in `(?:\\?['"`]|[\\s;]|\\[nr]|$)`: a quote,
   whitespace, `;`, an escaped newline or the end. A token followed by `)`, `.`, `,`, `]`, `*`,
   `>`, `?`, `!` or `&` (a sentence, brackets, markdown, a URL) is not matched at all.
   `widen_bounds` accepts any character that cannot continue a token (`[^\\w-]`): what a
   token can hold is still taken by the rule's own repeat first, so only what follows it
   changes. The two rules with boundaries of their own get the same treatment (`_BOUNDS`).
2. **The vendor's name required around a self-identifying token.** A keyword-in-context rule
   (`new-relic … = NRAK-…`) matches only after the vendor's name and an `=` or `:`, although
   its value starts with a prefix that names the vendor (`NRAK-`, `NRII-`, `NRJS-`, `endr+`)
   and is the rule's own keyword. `standalone_value` turns such a value into a rule of its
   own; its matches must hold a letter and a digit (`vendored.py`), as every real one does.
   A prefix of lower-case letters and `_`/`-` (`live_`, `cs_`, `tfp_`) could begin any
   identifier: those values keep their context.
3. **Keywords that are not in the token.** A rule runs only near one of its keywords; a few
   token rules are keyed on the vendor's name although the token starts with a fixed prefix of
   its own (Airtable's `pat…`, Ionic's `ion_`, Resend's `re_`, Miro's `eyJtaXJv`,
   Salesforce's `00…!…`). `own_keywords` adds the prefix, where it starts a word, to the
   keywords.

Pure functions on regex strings; `vendored.py` applies them when it loads the rules.
"""

from __future__ import annotations

import re
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

from local_recall.redaction.rules.translate import translate_regex

# How a Betterleaks token rule ends, and what we accept instead.
THEIR_END = r"""(?:\\?['"\x60]|[\s;]|\\[nr]|$)"""
WIDE_END = r"(?:[^\w-]|$)"
# In a keyword-in-context rule, the value follows the operator and up to 5 quotes or spaces.
_VALUE_OPEN = r"""[\x60'"\s=]{0,5}("""
_MIN_VALUE_PREFIX = 3  # a value freed from its context must start with more than "00" or "0x"
# ... and not with what could begin an identifier: `live_`, `cs_`, `tfp_`, `dnkey-`
_WORDLIKE = re.compile(r"[a-z]+[_\-]?")
_BOUNDS = (
    # Azure AD client secrets hold `.`, `~` and `-`, so the rule lists what may stand around
    # one (quotes, spaces, `=:(,)`); we take any character a secret cannot hold, and a `.`
    # after one (the body's repeat takes a `.` that belongs to it first).
    (r"""(?:^|[\\'"\x60\s>=:(,)])""", r"(?:^|[^\w~.\-])"),
    (r"""(?:$|[\\'"\x60\s<),])""", r"(?:$|[^\w~\-])"),
    # A Sentry org token ends in exactly 43 base64 characters: a `/` after it (a URL path)
    # cannot be part of it. (Its rule has no group: `widen_bounds` adds one.)
    (r"(?:[^a-zA-Z0-9+/]|\z)", r"(?:[^a-zA-Z0-9+]|\z)"),
)


def widen_bounds(regex: str) -> str:
    """A token rule with Betterleaks' token end (and the few boundaries of their own that
    rules spell out) replaced by any character the token cannot hold. Keyword-in-context rules
    keep theirs: they are written for code (a value that includes its quotes, `"…"`), and in
    prose the token rules and `standalone_value` do the work."""
    if regex.endswith(THEIR_END) and is_token_rule(regex):
        regex = regex[: -len(THEIR_END)] + WIDE_END
    for theirs, ours in _BOUNDS:
        if theirs in regex:
            regex = regex.replace(theirs, ours)
            if regex.endswith(ours) and re.compile(translate_regex(regex)).groups == 0:
                # Without a group the whole match is redacted: the character after it too.
                regex = f"({regex[: -len(ours)]}){ours}"
    return regex


def literal_prefix(regex: str) -> str:
    """The characters every match of `regex` starts with ("" when it starts with a class, a
    repeat or a branch). Anchors and the groups around the start are looked through."""
    try:
        parsed = _parser.parse(translate_regex(regex))
    except re.error:
        return ""
    prefix: list[str] = []
    _leading_literals(list(parsed), prefix)
    return "".join(prefix)


def _leading_literals(nodes: list[tuple[Any, Any]], out: list[str]) -> bool:
    """Append the literal characters `nodes` starts with; True when all of them were."""
    for op, av in nodes:
        if op is sre.LITERAL:
            out.append(chr(av))
        elif op is sre.AT:
            continue  # \b, ^
        elif op is sre.SUBPATTERN:
            if not _leading_literals(list(av[3]), out):
                return False
        else:
            return False
    return True


def is_token_rule(regex: str) -> bool:
    """A rule that matches a token by its own shape: `\\b(` first (a capturing group, not the
    `(?:vendor|name)` of a context), nothing before it."""
    body = regex.removeprefix("(?i)").removeprefix("(?i:")
    return body.startswith(r"\b(") and not body.startswith(r"\b(?")


def own_keywords(regex: str, keywords: tuple[str, ...]) -> tuple[str, ...]:
    """The RE2 patterns that let a rule run: its keywords, plus a token rule's own literal
    prefix when no keyword is in it (nor starts with it: `cfat_` and `cfut_` cover
    `cf[ua]t_`). The prefix must start a word, as the token does: `ion_` in `function_` or
    `00` in `2000` would make the rule scan nearly every chunk of code for nothing."""
    patterns = tuple(re.escape(k) for k in keywords)
    if not is_token_rule(regex):
        return patterns
    prefix = literal_prefix(regex).lower()
    if len(prefix) < 2 or any(k in prefix or k.startswith(prefix) for k in keywords):
        return patterns
    return (*patterns, _word_start(prefix))


def _word_start(literal: str) -> str:
    return (r"\b" if re.match(r"\w", literal) else "") + re.escape(literal)


def standalone_value(regex: str, keywords: tuple[str, ...]) -> tuple[str, str] | None:
    """For a keyword-in-context rule whose value starts with one of its own keywords (the
    vendor's prefix, e.g. `NRAK-`): (a rule matching the value alone, the RE2 pattern of that
    keyword at the start of a word)."""
    if not regex.endswith(THEIR_END) or is_token_rule(regex):
        return None
    at = regex.rfind(_VALUE_OPEN)
    if at < 0:
        return None
    value = regex[at + len(_VALUE_OPEN) - 1 : -len(THEIR_END)]
    if not _one_group(value):
        return None
    prefix = literal_prefix(value)
    keyword = next((k for k in keywords if prefix.lower().startswith(k)), None)
    if keyword is None or len(keyword) < _MIN_VALUE_PREFIX or _WORDLIKE.fullmatch(prefix):
        return None
    flags = "(?i)" if regex.startswith("(?i)") else ""  # the whole rule ignored case
    boundary = r"\b" if re.match(r"\w", prefix) else ""
    return f"{flags}{boundary}{value}{WIDE_END}", _word_start(keyword)


def _one_group(value: str) -> bool:
    """`value` is one parenthesised group (its closing parenthesis is the last character)."""
    if not (value.startswith("(") and value.endswith(")")):
        return False
    depth, escaped, in_class = 0, False, False
    for n, c in enumerate(value):
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0 and n != len(value) - 1:
                return False
    return depth == 0
