"""Keyword extraction with YAKE (unsupervised, language-light, no model download)."""

from __future__ import annotations

import importlib
import re
import sys
import types
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

DEFAULT_COUNT = 8
_MAX_INPUT_CHARS = 20_000  # YAKE is super-linear on huge inputs; the start of a memory suffices
_IDENTIFIER = re.compile(
    r"\b(?:[a-z]+_[a-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]+|[A-Z][a-z]+[A-Z][A-Za-z0-9]*)\b"
)


# Verb forms that are hardly ever nouns: a two-word phrase holding one reads as a clause
# (`variables works`, `cache holds`, `holds template`), not a term anyone searches for. Forms
# that are nouns too (`runs`, `calls`, `checks`, `start`) are left alone: `test runs`.
_VERBS = frozenset(
    [
        "allows",
        "becomes",
        "compares",
        "contains",
        "creates",
        "does",
        "fails",
        "finds",
        "gets",
        "gives",
        "goes",
        "holds",
        "keeps",
        "lets",
        "makes",
        "means",
        "needs",
        "raises",
        "says",
        "seems",
        "stays",
        "takes",
        "tells",
        "tries",
        "wants",
        "works",
    ]
)


def _plural(word: str) -> bool:
    return word.endswith("s") and not word.endswith(("ss", "us", "is"))


def is_clause(phrase: str) -> bool:
    """Two words that read as a clause rather than a term: one is a verb form from _VERBS, the
    last is a past participle (`objects keyed`, `session ended`; not `random seed`), or a plural
    is followed by a verb's -s form (`variables raises`: a compound's first noun is singular)."""
    words = phrase.split()
    if len(words) != 2:
        return False
    first, last = words
    participle = len(last) > 4 and last.endswith("ed") and not last.endswith("eed")
    plural_then_verb = _plural(first) and _plural(last)
    return participle or plural_then_verb or first in _VERBS or last in _VERBS


@lru_cache(maxsize=1)
def _extractor(count: int) -> Any:
    yake = _import_yake()  # on first use: only writers pay it
    # twice as many phrases as wanted: those that read as clauses are passed over
    return yake.KeywordExtractor(lan="en", n=2, dedupLim=0.7, top=2 * count)


class CoOccurrenceGraph:
    """The part of `networkx.DiGraph` YAKE uses (0.7: add_node, add_edge, g[u][v], has_edge,
    in_edges/out_edges of a node): a dict of dicts. Importing networkx for it cost a first
    `add` ~0.37 s (all of networkx's algorithms load with the package); tests check YAKE picks
    the same keywords with either."""

    def __init__(self) -> None:
        self._succ: dict[Any, dict[Any, dict[str, Any]]] = {}
        self._pred: dict[Any, dict[Any, dict[str, Any]]] = {}

    def add_node(self, node: Any) -> None:
        self._succ.setdefault(node, {})
        self._pred.setdefault(node, {})

    def add_edge(self, u: Any, v: Any, **attr: Any) -> None:
        self.add_node(u)
        self.add_node(v)
        data = self._succ[u].setdefault(v, {})
        data.update(attr)
        self._pred[v][u] = data  # one dict per edge, as networkx keeps it

    def __getitem__(self, node: Any) -> dict[Any, dict[str, Any]]:
        return self._succ[node]

    def has_edge(self, u: Any, v: Any) -> bool:
        return v in self._succ.get(u, ())

    def out_edges(self, node: Any, data: bool = False) -> list[Any]:
        return list(_edges(node, self._succ.get(node, {}), data, outgoing=True))

    def in_edges(self, node: Any, data: bool = False) -> list[Any]:
        return list(_edges(node, self._pred.get(node, {}), data, outgoing=False))


def _edges(
    node: Any, links: dict[Any, dict[str, Any]], data: bool, *, outgoing: bool
) -> Iterator[tuple[Any, ...]]:
    for other, attrs in links.items():
        pair = (node, other) if outgoing else (other, node)
        yield (*pair, attrs) if data else pair


def _import_yake() -> types.ModuleType:
    """yake, with `CoOccurrenceGraph` as the `networkx` it imports unless networkx is already
    loaded. The stand-in is in sys.modules only while yake's modules import, so anything that
    imports networkx later gets the real one."""
    if "networkx" in sys.modules or "yake" in sys.modules:
        return importlib.import_module("yake")
    stand_in = types.ModuleType("networkx", "local-recall's stand-in while yake imports")
    stand_in.DiGraph = CoOccurrenceGraph  # type: ignore[attr-defined]
    sys.modules["networkx"] = stand_in
    try:
        return importlib.import_module("yake")
    finally:
        if sys.modules.get("networkx") is stand_in:
            del sys.modules["networkx"]


def extract_keywords(text: str, *, count: int = DEFAULT_COUNT) -> tuple[str, ...]:
    """Up to `count` keywords: code identifiers first (they are what people search for), then
    YAKE's best phrases that are terms (not `is_clause`). Lower-cased except identifiers,
    duplicates removed."""
    sample = text[:_MAX_INPUT_CHARS]
    found: dict[str, str] = {}
    for ident in _IDENTIFIER.findall(sample):
        found.setdefault(ident.lower(), ident)
        if len(found) >= count // 2:
            break
    if sample.strip():
        for phrase, _score in _extractor(count).extract_keywords(sample):
            word = " ".join(str(phrase).split()).lower()
            if word and word not in found and not is_clause(word):
                found[word] = word
            if len(found) >= count:
                break
    return tuple(found.values())[:count]
