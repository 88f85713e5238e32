"""memory/likeness.py: the paraphrase rule of the write path; the content words of the hook
(context/duplicates.py)."""

from __future__ import annotations

from local_recall.context.duplicates import content_words, word_overlap
from local_recall.memory.likeness import is_paraphrase, paraphrase_of


def test_close_meaning_needs_shared_words() -> None:
    assert is_paraphrase(0.85, 70.0)
    assert not is_paraphrase(0.85, 50.0)
    assert not is_paraphrase(0.79, 100.0)


def test_nearly_the_same_vector_is_enough() -> None:
    assert is_paraphrase(0.95, 0.0)


def test_paraphrase_of_takes_the_first_that_qualifies() -> None:
    texts = {"a": "alpha beta gamma", "b": "run tests with pytest via tox"}
    ratio = {("run the tests with pytest through tox", "run tests with pytest via tox"): 90.0}

    def fake_ratio(x: str, y: str) -> float:
        return ratio.get((x, y), 10.0)

    found = paraphrase_of(
        "run the tests with pytest through tox",
        [("gone", 0.99), ("a", 0.9), ("b", 0.86)],
        texts,
        ratio=fake_ratio,
    )
    assert found == "b"
    assert paraphrase_of("x", [("a", 0.5)], texts, ratio=fake_ratio) is None


def test_content_words_fold_function_words_and_plurals() -> None:
    assert content_words("Run the tests with pytest via tox") == {"test", "pytest", "tox"}
    assert content_words("Run tests with pytest through tox") == {"test", "pytest", "tox"}
    assert content_words("class glass") == {"class", "glass"}


def test_word_overlap() -> None:
    assert word_overlap(frozenset({"a1", "b2"}), frozenset({"b2", "c3"})) == 1 / 3
    assert word_overlap(frozenset(), frozenset({"x"})) == 0.0
