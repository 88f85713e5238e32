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
A figure is what a memory states when its subject says it, or its body outside a runtime's
version: "run the suite for Python 3.13 only" beside "…Python 3.12…" is an example each
happened to run, not two facts; "requires Python 3.9" / "3.12" in the subjects are.

A memory whose subject's words (4 or more) all recur in another's text restates that fact with
a detail of its own ("Tests run through tox with the uv-venv-lock-runner" inside "…pytest; tox
-e py3.12 for one interpreter … (uv-venv-lock-runner)"): the extractor's copy of a memory it was
shown. Its cosine is lower (0.74) than the ratio rule needs, so it has a rule of its own, with a
looser cosine (`restates`).

The prompt hook, which has no vectors, compares content words instead (context/duplicates.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

# The write path: measured in benchmarks/README.md ("One fact, one memory").
COSINE_WITH_TEXT = 0.80
TEXT_RATIO = 65.0  # rapidfuzz token_set_ratio, 0..100
COSINE_ALONE = 0.95
# One text restating the other's subject: measured like the above (benchmarks/README.md).
COSINE_RESTATED = 0.70
# A subject this short says too little to stand for a fact ("pytest", "Lint with ruff").
MIN_SUBJECT_WORDS = 3
# ...and to be restated: a generic 3-word subject ("Fix for unit test", "Add myself to
# contributors") recurs whole in many other changes' texts (benchmarks/README.md).
MIN_RESTATED_WORDS = 4
# A number as written: "100", "1,000", "0.95", "3.11.7"; a digit inside a word ("sha256",
# "utf8", "e2e") is part of a name, not a figure.
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")
# A runtime's version in a body ("on Python 3.12", "Node 20.11"): the one the writer ran.
_RUNTIME_VERSION = re.compile(
    r"(?i)\b(?:python|pypy|node(?:js)?|ruby|go|java|jdk)\s+\d+(?:\.\d+)+(?![\w.])"
)
# Content words: no import beyond `re`, a few microseconds a pair (the prompt hook runs this).
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


def is_paraphrase(
    cosine: float,
    text_ratio: float,
    *,
    cosine_with_text: float = COSINE_WITH_TEXT,
    min_text_ratio: float = TEXT_RATIO,
    cosine_alone: float = COSINE_ALONE,
    restated: bool = False,
    cosine_restated: float = COSINE_RESTATED,
) -> bool:
    """Close in meaning and sharing most words, or nearly the same vector, or one restating
    the other's subject (`restates`) and close enough in meaning."""
    if cosine >= cosine_alone:
        return True
    if restated and cosine >= cosine_restated:
        return True
    return cosine >= cosine_with_text and text_ratio >= min_text_ratio


def text_ratio(a: str, b: str) -> float:
    """rapidfuzz token_set_ratio (0..100) of two texts, case and punctuation folded."""
    from rapidfuzz import fuzz, utils

    return float(fuzz.token_set_ratio(a, b, processor=utils.default_process))


def numbers(text: str) -> frozenset[str]:
    """The figures `text` holds, thousands separators dropped ("1,000" == "1000")."""
    return frozenset(m.group().replace(",", "") for m in _NUMBER.finditer(text))


def stated_figures(text: str) -> frozenset[str]:
    """The figures a memory's text (subject, then body) states: all of its subject's, and its
    body's but for a runtime's version mentioned in passing ("tests pass on Python 3.12")."""
    subject, _, body = text.partition("\n")
    return numbers(subject) | numbers(_RUNTIME_VERSION.sub(" ", body))


def other_figures(a: str, b: str) -> bool:
    """Whether each text states a figure the other does not: different facts. One that only
    leaves a figure out ("ran 300 queries" / "ran hundreds of queries") may still say the same."""
    first, second = stated_figures(a), stated_figures(b)
    return bool(first - second) and bool(second - first)


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


def subject_within(subject: frozenset[str], words: frozenset[str]) -> bool:
    """Whether a subject's content words (enough of them to state a fact) all recur in `words`."""
    return len(subject) >= MIN_RESTATED_WORDS and subject <= words


def restates(a: str, b: str) -> bool:
    """Whether one text (subject line, then body) says the other's subject again: every content
    word of one subject among the other text's. Texts stating other figures never do."""
    if other_figures(a, b):
        return False
    subject_a, subject_b = content_words(a.partition("\n")[0]), content_words(b.partition("\n")[0])
    return subject_within(subject_a, content_words(b)) or subject_within(
        subject_b, content_words(a)
    )


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
        if is_paraphrase(cosine, ratio(candidate, text), restated=restates(candidate, text)):
            return memory_id
    return None
