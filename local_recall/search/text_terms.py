"""Words of a query or a memory as search sees them: identifiers split, stop words dropped.

Pure functions over strings, shared by the index (what a memory's full-text document holds) and
search (which terms a query asks for). Nothing here parses query syntax: a query is only ever
a bag of words, so quotes, `OR`, parentheses or SQL in it are just characters.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from local_recall.search.limits import MAX_QUERY_CHARS, MAX_QUERY_TERMS

_WORD = re.compile(r"[^\W_]+", re.UNICODE)  # letters and digits; '_' and punctuation split
_IDENTIFIER = re.compile(
    r"[A-Za-z][A-Za-z0-9]*(?:[_.\-][A-Za-z0-9]+)+"  # snake_case, dotted.names, kebab-case
    r"|[A-Za-z]+[a-z0-9][A-Z][A-Za-z0-9]*"  # camelCase, PascalCase
)
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

# English function words and question scaffolding ("how do we ..."): they say nothing about
# which memory is meant. Kept short on purpose: domain words (e.g. "test", "file") stay.
STOP_WORDS: Final = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t don ll ve re d m o y ever also us let lets get got
    """.split()  # noqa: SIM905 - a word list reads better as prose
)


def split_identifier(word: str) -> tuple[str, ...]:
    """`ProcessedLog` → (processed, log); `procesed_log` → (procesed, log); others → ()."""
    parts: list[str] = []
    for chunk in re.split(r"[_.\-]+", word):
        parts.extend(_CAMEL_PART.findall(chunk))
    lowered = tuple(p.lower() for p in parts if p)
    return lowered if len(lowered) > 1 else ()


def identifier_parts(text: str) -> list[str]:
    """The words hidden inside the code identifiers of `text`, in order of appearance.

    The full-text tokenizer splits `a_b` by itself but sees `CamelCase` as one word; adding the
    parts to a memory's document lets `processed log` find `ProcessedLog`."""
    found: list[str] = []
    for match in _IDENTIFIER.finditer(text):
        found.extend(split_identifier(match.group(0)))
    return found


def words(text: str) -> list[str]:
    """Lower-cased words (NFKC, accents kept), in order."""
    return [w.lower() for w in _WORD.findall(unicodedata.normalize("NFKC", text))]


def query_terms(query: str) -> list[str]:
    """The content words of a query: identifiers split and kept whole, stop words dropped,
    duplicates removed, at most MAX_QUERY_TERMS. Empty when nothing searchable is left."""
    head = query[:MAX_QUERY_CHARS]
    seen: dict[str, None] = {}
    for word in [*words(head), *identifier_parts(head)]:
        if word not in STOP_WORDS and word not in seen:
            seen[word] = None
        if len(seen) >= MAX_QUERY_TERMS:
            break
    return list(seen)


def query_text(query: str) -> str:
    """What a query embeds: whitespace folded, cut to MAX_QUERY_CHARS, lone surrogates (JSON
    allows `"\\ud800"`; the tokenizer refuses them) dropped."""
    head = query[:MAX_QUERY_CHARS].encode("utf-8", "ignore").decode("utf-8")
    return " ".join(head.split())
