"""memory/likeness.py: the paraphrase rule of the write path; the content words of the hook
(context/duplicates.py)."""

from __future__ import annotations

from local_recall.context.duplicates import content_words, same_fact, word_overlap
from local_recall.memory.likeness import is_paraphrase, numbers, other_figures, paraphrase_of


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


def test_other_figures_are_other_facts() -> None:
    assert numbers("Allow 1,000 requests in 2.5 s (Python 3.11.7)") == {"1000", "2.5", "3.11.7"}
    assert numbers("sha256 of utf8, e2e tests, file_3") == frozenset()  # names, not figures
    assert other_figures("rate limit 100 per minute", "rate limit 1000 per minute")
    assert not other_figures("limit 1,000 per minute", "at most 1000 a minute")
    assert not other_figures("hooks get 1.5 s", "hooks have a second and a half")  # one side
    assert not other_figures("N+1: it ran 300 queries", "N+1: it ran hundreds of queries")
    assert other_figures("timeout 30 s (config.py:12)", "timeout 60 s")


def test_a_correction_in_the_same_words_is_not_a_paraphrase() -> None:
    texts = {"old": "The API allows 100 requests per minute"}
    found = paraphrase_of(
        "The API allows 1000 requests per minute", [("old", 0.97)], texts, ratio=lambda *_: 95.0
    )
    assert found is None
    same = paraphrase_of("The API allows at most 100 requests a minute", [("old", 0.97)], texts)
    assert same == "old"


def test_the_hook_keeps_two_facts_that_state_other_figures() -> None:
    assert same_fact("API rate limit", "100 requests per minute", "API rate limit", "100 a minute")
    assert not same_fact(
        "API rate limit", "100 requests per minute", "API rate limit", "1000 requests per minute"
    )
