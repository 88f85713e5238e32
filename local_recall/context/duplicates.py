"""Two hits that say one fact are shown once. Pure, and cheap enough for every prompt.

The prompt hook fills its budget best hit first; a hit whose words are mostly those of a hit
already taken is the same fact written twice (two sessions, two teammates) and would spend the
budget twice. There are no vectors at this point, so the measure is the overlap of content
words (the write path's rule, with vectors, is memory/likeness.py): measured on labelled
paraphrases and on every pair of this repository's own memories in benchmarks/README.md ("One
fact, one memory"). Two hits that each state a figure the other does not are two facts, as on
the write path ("100 requests per minute" beside "1000 requests per minute"); one whose subject
recurs whole in the other's words is one fact with a detail added, as there.
"""

from collections.abc import Iterable

from local_recall.context.notes import Note
from local_recall.memory.likeness import (
    MIN_SUBJECT_WORDS,
    content_words,
    stated_figures,
    subject_within,
)

__all__ = ["content_words", "same_fact", "without_near_duplicates", "word_overlap"]

# Jaccard of content words at or above which two hits are one fact (benchmarks/README.md).
SAME_FACT = 0.4
# One hit's subject wholly in the other's words (memory/likeness.py `restates`): one fact at a
# lower overlap, the other having added a detail of its own.
SAME_FACT_RESTATED = 0.3


def same_fact(a_subject: str, a_body: str, b_subject: str, b_body: str) -> bool:
    """Whether two memories (subject, body or snippet) state one fact."""
    return same_words(fact_words(a_subject, a_body), fact_words(b_subject, b_body))


def without_near_duplicates(ranked: Iterable[Note]) -> list[Note]:
    """`ranked` (best first) without any hit that states the fact of a better one."""
    kept: list[tuple[Note, FactWords]] = []
    for note in ranked:
        words = fact_words(note.subject, note.body)
        if not any(same_words(other, words) for _, other in kept):
            kept.append((note, words))
    return [note for note, _ in kept]


# A memory's content words (subject's, subject's and body's) and figures: computed once,
# compared often.
FactWords = tuple[frozenset[str], frozenset[str], frozenset[str]]


def fact_words(subject: str, body: str) -> FactWords:
    words = content_words(subject)
    return words, words | content_words(body), stated_figures(f"{subject}\n{body}")


def same_words(a: FactWords, b: FactWords) -> bool:
    (subject_a, whole_a, figures_a), (subject_b, whole_b, figures_b) = a, b
    if figures_a - figures_b and figures_b - figures_a:
        return False  # each states a figure the other does not (memory/likeness.py)
    if min(len(subject_a), len(subject_b)) >= MIN_SUBJECT_WORDS and (
        word_overlap(subject_a, subject_b) >= SAME_FACT
    ):
        return True
    overlap = word_overlap(whole_a, whole_b)
    if overlap >= SAME_FACT_RESTATED and (
        subject_within(subject_a, whole_b) or subject_within(subject_b, whole_a)
    ):
        return True
    return overlap >= SAME_FACT


def word_overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard of two content-word sets: 0..1, 0 when either is empty."""
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)
