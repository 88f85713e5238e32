"""When a new memory says what an existing one already says, in other words. Pure.

Edit distance alone (capture's `is_near_duplicate`, 0.9) misses paraphrases: "Run tests with
pytest through tox" beside "Run the tests with pytest via tox" scores 0.75. What catches them is
meaning AND wording together — the embeddings of the two whole texts close, and most of the
shorter one's words in the longer — or embeddings nearly identical. `consolidate` applies the
same rule with a stricter cosine (it merges whole groups); on the write path a paraphrase is
one memory about to become two, so the cosine is looser: benchmarks/write_dedup.py measures
both on labelled pairs and on every pair of this repository's own memories.

`content_words` is the cheap, import-free measure the prompt hook uses between two hits it is
about to inject (context/duplicates.py): no vectors there, and a few microseconds a pair.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

# The write path: measured in benchmarks/README.md ("One fact, one memory").
COSINE_WITH_TEXT = 0.80
TEXT_RATIO = 65.0  # rapidfuzz token_set_ratio, 0..100
COSINE_ALONE = 0.95


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
        if text is not None and is_paraphrase(cosine, ratio(candidate, text)):
            return memory_id
    return None


# --------------------------------------------------------------------------------------------
# Word overlap: the hook's measure

_WORD = re.compile(r"[a-z0-9_]+")
# Function words and the verbs a paraphrase swaps freely ("through"/"via", "use"/"with").
_STOP = frozenset(
    """a an the and or but of to in on at by for from with without via through into onto
    is are was were be been being it its this that these those as so than then there here
    we you they he she i our your their us them do does did done not no never always
    use uses used using run runs ran running must should can could may might will would
    which who what when where why how all any each every some more most less only also just
    instead rather about after before over under up down out if else while""".split()  # noqa: SIM905
)


def content_words(text: str) -> frozenset[str]:
    """A text's words that carry its meaning: lower case, function words out, a plural's
    `s` dropped ("tests" = "test")."""
    words = set()
    for found in _WORD.findall(text.lower()):
        if found in _STOP or len(found) < 2:
            continue
        plural = len(found) > 3 and found.endswith("s") and not found.endswith("ss")
        words.add(found[:-1] if plural else found)
    return frozenset(words)


def word_overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard of two content-word sets: 0..1, 0 when either is empty."""
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)
