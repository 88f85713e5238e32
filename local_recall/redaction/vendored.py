"""Betterleaks' maintained rules (400+ providers), run with RE2 on in-memory text.

The rules are package data (`rules/betterleaks.json`, MIT, see rules/README.md) and run as
written, with google-re2: RE2 matches in linear time whatever the pattern and the input, so no
rule can backtrack catastrophically. A rule runs only near its keywords: an RE2 set tells which
keywords occur in each 4 KB chunk, then each rule scans the chunks holding one of its keywords,
widened by how far a match can reach and merged, so a character is scanned at most once per
rule whose keyword is near it. A finding must pass the rule's entropy threshold and
Betterleaks' global filter (placeholders such as `${TOKEN}`), as in Betterleaks, and our check
for fakes written in docs (`EXAMPLE`, `xxxx`, `...`). Rules compile on first use (~1 ms each).

As they load, the rules are adapted to find a token in prose as well as in code
(rule_shapes.py): any character a token cannot hold may end it, a value that names
its vendor (`NRAK-…`) is found without the vendor's name around it, and a token's own prefix
is among its rule's keywords.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Protocol

import re2

from local_recall.redaction.escapes import blank_json_escapes
from local_recall.redaction.findings import Hit, Rank
from local_recall.redaction.placeholders import ascii_lower, has_letter_and_digit, is_fake_body
from local_recall.redaction.rule_shapes import own_keywords, standalone_value, widen_bounds

_BEFORE = 1024  # a match may start this far before its keyword
_AFTER = 4096  # and end this far after it (the longest real tokens are ~2 KB)
_CHUNK = 4096
_LONGEST_KEYWORD = 64  # chunks overlap by this much, so no keyword is cut in two
_OPTIONS = re2.Options()
_OPTIONS.max_mem = 64 << 20  # a few rules with long counted repeats need more than 8 MB


class _Match(Protocol):
    def group(self, index: int | str = 0) -> str | None: ...
    def span(self, index: int | str = 0) -> tuple[int, int]: ...
    def start(self, index: int | str = 0) -> int: ...


class _Pattern(Protocol):
    groups: int
    groupindex: dict[str, int]

    def finditer(self, text: str, pos: int = 0, endpos: int = ...) -> Iterator[_Match]: ...
    def search(self, text: str, pos: int = 0, endpos: int = ...) -> _Match | None: ...


def _compile(regex: str) -> _Pattern:
    pattern: _Pattern = re2.compile(regex, options=_OPTIONS)
    return pattern


@dataclass(frozen=True, slots=True)
class VendoredRule:
    kind: str
    regex: str
    min_entropy: float
    standalone: bool = False  # found without its vendor's name: needs a letter and a digit


@dataclass(frozen=True, slots=True)
class _RuleSet:
    rules: tuple[VendoredRule, ...]
    keywords: Any  # an RE2 set: which keywords occur in a text (all of them, overlaps too)
    by_keyword: tuple[tuple[int, ...], ...]  # keyword index in the set -> its rules
    not_secrets: tuple[_Pattern, ...]  # Betterleaks' global filter: placeholders
    stopwords: tuple[str, ...]


@cache
def rule_set() -> _RuleSet:
    data: dict[str, Any] = json.loads(
        resources.files("local_recall.redaction.rules")
        .joinpath("betterleaks.json")
        .read_text(encoding="utf-8")
    )
    rules: list[VendoredRule] = []
    by_keyword: dict[str, list[int]] = {}

    def add(rule: VendoredRule, patterns: tuple[str, ...]) -> None:
        for pattern in patterns:
            by_keyword.setdefault(pattern, []).append(len(rules))
        rules.append(rule)

    # Adapted for prose as they load (rule_shapes.py): a token before punctuation, a token
    # that names its vendor without the vendor's name around it, keywords the token holds.
    for raw in data["rules"]:
        words = tuple(raw["keywords"])
        patterns = own_keywords(raw["regex"], words)
        add(VendoredRule(raw["kind"], widen_bounds(raw["regex"]), raw["min_entropy"]), patterns)
        derived = standalone_value(raw["regex"], words)
        if derived is not None and derived[0] not in {r.regex for r in rules}:
            regex, keyword = derived
            add(VendoredRule(raw["kind"], regex, raw["min_entropy"], standalone=True), (keyword,))
    keywords = re2.Set.SearchSet(_OPTIONS)
    for pattern in by_keyword:  # RE2 patterns: keywords escaped, our prefixes at a word start
        keywords.Add(pattern)
    keywords.Compile()
    return _RuleSet(
        tuple(rules),
        keywords,
        tuple(tuple(by_keyword[k]) for k in by_keyword),
        tuple(_compile(p) for p in data["not_secrets"]),
        tuple(data["stopwords"]),
    )


@cache
def _rule_pattern(index: int) -> tuple[_Pattern, tuple[int, ...], int]:
    """A rule's compiled pattern, the groups that can hold Betterleaks' "secret" (the first of
    them that matched; named groups are parts a validator uses, such as a user or a host) and a
    `password` group inside it, which alone is redacted (`user:password@host`)."""
    pattern = _compile(rule_set().rules[index].regex)
    named = set(pattern.groupindex.values())
    unnamed = tuple(g for g in range(1, pattern.groups + 1) if g not in named)
    return pattern, unnamed, pattern.groupindex.get("password", 0)


def shannon_entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def vendored_hits(text: str) -> Iterator[Hit]:
    rs = rule_set()
    text = blank_json_escapes(text)
    lowered = ascii_lower(text)
    # Which keywords occur in each chunk (one RE2 set match per chunk, whatever the number of
    # hits): a rule then scans the chunks that hold one of its keywords, widened by the reach
    # of a match, and merged.
    windows: dict[int, list[tuple[int, int]]] = {}
    for lo in range(0, len(text), _CHUNK):
        found = rs.keywords.Match(lowered[lo : lo + _CHUNK + _LONGEST_KEYWORD]) or ()
        span = (max(0, lo - _BEFORE), min(len(text), lo + _CHUNK + _LONGEST_KEYWORD + _AFTER))
        for keyword in found:
            for index in rs.by_keyword[keyword]:
                windows.setdefault(index, []).append(span)
    for index, unmerged in windows.items():
        spans = _merge(sorted(unmerged))
        pattern, groups, narrow = _rule_pattern(index)
        for lo, hi in spans:
            # A slice, not pos/endpos: the RE2 binding encodes the whole string on every call.
            for m in pattern.finditer(text[lo:hi]):
                yield from _accept(rs, rs.rules[index], m, groups, narrow, lo)


def _merge(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted spans, overlapping ones joined."""
    merged: list[tuple[int, int]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def _accept(
    rs: _RuleSet, rule: VendoredRule, m: _Match, groups: Sequence[int], narrow: int, offset: int
) -> Iterator[Hit]:
    group = next((g for g in groups if m.group(g)), 0)
    value = m.group(group) or ""
    if rule.min_entropy and shannon_entropy(value) <= rule.min_entropy:
        return
    if narrow and m.group(narrow):
        group, value = narrow, m.group(narrow) or ""
    start, end = m.span(group)
    if not value.strip() or is_fake_body(value) or any(w in value for w in rs.stopwords):
        return
    if rule.standalone and not has_letter_and_digit(value):
        return
    if any(p.search(value) for p in rs.not_secrets):
        return
    yield Hit(offset + start, offset + end, rule.kind, Rank.VENDORED)
