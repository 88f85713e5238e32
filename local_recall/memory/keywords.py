"""Keyword extraction with YAKE (unsupervised, language-light, no model download)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

DEFAULT_COUNT = 8
_MAX_INPUT_CHARS = 20_000  # YAKE is super-linear on huge inputs; the start of a memory suffices
_IDENTIFIER = re.compile(
    r"\b(?:[a-z]+_[a-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]+|[A-Z][a-z]+[A-Z][A-Za-z0-9]*)\b"
)


@lru_cache(maxsize=1)
def _extractor(count: int) -> Any:
    import yake  # imported on first use: ~100 ms, only writers pay it

    return yake.KeywordExtractor(lan="en", n=2, dedupLim=0.7, top=count)


def extract_keywords(text: str, *, count: int = DEFAULT_COUNT) -> tuple[str, ...]:
    """Up to `count` keywords: code identifiers first (they are what people search for), then
    YAKE's best phrases. Lower-cased except identifiers, duplicates removed."""
    sample = text[:_MAX_INPUT_CHARS]
    found: dict[str, str] = {}
    for ident in _IDENTIFIER.findall(sample):
        found.setdefault(ident.lower(), ident)
        if len(found) >= count // 2:
            break
    if sample.strip():
        for phrase, _score in _extractor(count).extract_keywords(sample):
            word = " ".join(str(phrase).split()).lower()
            if word and word not in found:
                found[word] = word
            if len(found) >= count:
                break
    return tuple(found.values())[:count]
