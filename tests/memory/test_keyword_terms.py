"""Automatic keywords are terms, not clauses YAKE happened to rank (`variables
works`, `objects keyed` in a new user's first memories)."""

from __future__ import annotations

from local_recall.memory.keywords import extract_keywords, is_clause


def test_clauses_and_terms() -> None:
    for clause in (
        "variables works",
        "objects keyed",
        "cache holds",
        "holds template",
        "session ended",
        "variables raises",
    ):
        assert is_clause(clause), clause
    for term in (
        "unit tests",
        "test runs",
        "random seed",
        "lock file",
        "template variables",
        "undefined variables",
        "session start",
        "model calls",
        "tox",
        "strictundefined mode",
    ):
        assert not is_clause(term), term


def test_the_issues_memories_get_terms() -> None:
    text = (
        "Template variables works the same in every block; undefined variables raise in "
        "StrictUndefined mode. The cache holds template objects keyed by name and loader."
    )
    keywords = extract_keywords(text)
    assert "variables works" not in keywords and "objects keyed" not in keywords
    assert "cache holds" not in keywords
    assert "StrictUndefined" in keywords and "undefined variables" in keywords
    assert len(keywords) == 8  # the passed-over phrases leave no gap
