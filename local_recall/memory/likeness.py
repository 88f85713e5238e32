"""When a new memory says what an existing one already says, in other words. Pure.

Edit distance alone (capture's `is_near_duplicate`, 0.9) misses paraphrases: "Run tests with
pytest through tox" beside "Run the tests with pytest via tox" scores 0.75. What catches them is
meaning AND wording together — the embeddings of the two whole texts close, and most of the
shorter one's words in the longer — or embeddings nearly identical. `consolidate` applies the
same rule with a stricter cosine (it merges whole groups); on the write path a paraphrase is
one memory about to become two, so the cosine is looser: benchmarks/write_dedup.py measures
both on labelled pairs and on every pair of this repository's own memories.

Two texts that each state a number the other does not ("100 per minute" / "1000 per minute",
"expires after 5 minutes" / "after 30") are different facts however alike they read: one may
correct the other, and refusing the correction as a copy would keep the stale figure. Such a
pair is never a paraphrase on the write path (supersession and `consolidate` handle corrections).

The prompt hook, which has no vectors, compares content words instead (context/duplicates.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

# The write path: measured in benchmarks/README.md ("One fact, one memory").
COSINE_WITH_TEXT = 0.80
TEXT_RATIO = 65.0  # rapidfuzz token_set_ratio, 0..100
COSINE_ALONE = 0.95
# A number as written: "100", "1,000", "0.95", "3.11.7"; a digit inside a word ("sha256",
# "utf8", "e2e") is part of a name, not a figure.
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")


def is_paraphrase(
    cosine: float,
    text_ratio: float,
    *,
    cosine_with_text: float = COSINE_WITH_TEXT,
    min_text_ratio: float = TEXT_RATIO,
    cosine_alone: float = COSINE_ALONE,
) -> bool:
    """Close in meaning and sharing most words, or nearly the same vector."""
    if cosine >= cosine_alone:
        return True
    return cosine >= cosine_with_text and text_ratio >= min_text_ratio


def text_ratio(a: str, b: str) -> float:
    """rapidfuzz token_set_ratio (0..100) of two texts, case and punctuation folded."""
    from rapidfuzz import fuzz, utils

    return float(fuzz.token_set_ratio(a, b, processor=utils.default_process))


def numbers(text: str) -> frozenset[str]:
    """The figures `text` states, thousands separators dropped ("1,000" == "1000")."""
    return frozenset(m.group().replace(",", "") for m in _NUMBER.finditer(text))


def other_figures(a: str, b: str) -> bool:
    """Whether each text states a figure the other does not: different facts. One that only
    leaves a figure out ("ran 300 queries" / "ran hundreds of queries") may still say the same."""
    first, second = numbers(a), numbers(b)
    return bool(first - second) and bool(second - first)


def paraphrase_of(
    candidate: str,
    neighbours: Iterable[tuple[str, float]],
    texts: Mapping[str, str],
    *,
    ratio: Callable[[str, str], float] = text_ratio,
) -> str | None:
    """The first of `neighbours` ((id, cosine) nearest first) that `candidate` paraphrases;
    ids missing from `texts` (a vector left for a memory deleted since) are skipped."""
    for memory_id, cosine in neighbours:
        text = texts.get(memory_id)
        if text is None or other_figures(candidate, text):
            continue
        if is_paraphrase(cosine, ratio(candidate, text)):
            return memory_id
    return None
