"""Two hits that say one fact are shown once. Pure, and cheap enough for every prompt.

The prompt hook fills its budget best hit first; a hit whose words are mostly those of a hit
already taken is the same fact written twice (two sessions, two teammates) and would spend the
budget twice. There are no vectors at this point, so the measure is word overlap
(memory/likeness.py): measured on labelled paraphrases and on every pair of this repository's
own memories in benchmarks/README.md ("One fact, one memory").
"""

from collections.abc import Iterable
from typing import Protocol, TypeVar

from local_recall.memory.likeness import content_words, word_overlap

# Jaccard of content words at or above which two hits are one fact (benchmarks/README.md).
SAME_FACT = 0.4
# A subject this short says too little to judge on its own ("pytest" = "pytest").
MIN_SUBJECT_WORDS = 3


class Shown(Protocol):
    @property
    def subject(self) -> str: ...

    @property
    def body(self) -> str: ...


_T = TypeVar("_T", bound=Shown)


def same_fact(a_subject: str, a_body: str, b_subject: str, b_body: str) -> bool:
    """Whether two memories (subject, body or snippet) state one fact."""
    return _same(_words(a_subject, a_body), _words(b_subject, b_body))


def without_near_duplicates(ranked: Iterable[_T]) -> list[_T]:
    """`ranked` (best first) without any hit that states the fact of a better one."""
    kept: list[tuple[_T, _Words]] = []
    for note in ranked:
        words = _words(note.subject, note.body)
        if not any(_same(other, words) for _, other in kept):
            kept.append((note, words))
    return [note for note, _ in kept]


_Words = tuple[frozenset[str], frozenset[str]]  # (subject's, subject's and body's)


def _words(subject: str, body: str) -> _Words:
    words = content_words(subject)
    return words, words | content_words(body)


def _same(a: _Words, b: _Words) -> bool:
    (subject_a, whole_a), (subject_b, whole_b) = a, b
    if min(len(subject_a), len(subject_b)) >= MIN_SUBJECT_WORDS and (
        word_overlap(subject_a, subject_b) >= SAME_FACT
    ):
        return True
    return word_overlap(whole_a, whole_b) >= SAME_FACT
