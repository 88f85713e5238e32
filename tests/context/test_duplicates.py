"""The prompt hook shows one fact once: `without_near_duplicates` and its use in `fill_budget`."""

from __future__ import annotations

from local_recall.context.duplicates import same_fact, without_near_duplicates
from local_recall.context.notes import Note
from local_recall.context.prompt import fill_budget, prompt_context

A, B, C = "a" * 8, "b" * 8, "c" * 8


def note(memory_id: str, subject: str, body: str, score: float) -> Note:
    return Note(memory_id, subject, "2026-03-01T10:00:00Z", "global", score, body)


TOX_USER = note(
    A,
    "Run the tests with pytest via tox",
    "Tests run through tox, which calls pytest; do not run pytest directly.",
    0.9,
)
TOX_EXTRACTED = note(
    B,
    "Run tests with pytest through tox",
    "The test suite is run with tox, which invokes pytest, rather than calling pytest by hand.",
    0.8,
)
OTHER = note(C, "Flaky network tests are marked", "Mark them with @pytest.mark.network.", 0.7)


def test_the_issues_paraphrase_is_one_fact() -> None:
    assert same_fact(TOX_USER.subject, TOX_USER.body, TOX_EXTRACTED.subject, TOX_EXTRACTED.body)


def test_same_topic_other_fact_is_not() -> None:
    assert not same_fact(
        "Use filelock for cross-process dedup",
        "We use the filelock package to serialise memory creation across processes.",
        "filelock timeout is 5 seconds",
        "Taking the store lock waits at most 5 seconds, then the write fails.",
    )


def test_short_subjects_alone_do_not_decide() -> None:
    assert not same_fact("pytest", "Use -x to stop early.", "pytest", "Fixtures live in conftest.")


def test_the_better_ranked_hit_is_kept() -> None:
    assert without_near_duplicates([TOX_USER, OTHER, TOX_EXTRACTED]) == [TOX_USER, OTHER]
    assert without_near_duplicates([TOX_EXTRACTED, TOX_USER]) == [TOX_EXTRACTED]


def test_empty_texts_are_never_duplicates() -> None:
    assert without_near_duplicates([note(A, "", "", 1.0), note(B, "", "", 1.0)]) == [
        note(A, "", "", 1.0),
        note(B, "", "", 1.0),
    ]


def test_fill_budget_never_shows_both_wordings() -> None:
    selection = fill_budget([TOX_EXTRACTED, OTHER, TOX_USER], budget_tokens=2000, min_score=0.1)
    assert [n.id for n in selection.shown] == [A, C]
    assert selection.pointers == ()
    text = prompt_context([TOX_EXTRACTED, TOX_USER], budget_tokens=2000, min_score=0.1)
    assert TOX_USER.subject in text and TOX_EXTRACTED.subject not in text


def test_the_session_index_lists_one_fact_once() -> None:
    from local_recall.context.session import render_session_context

    text = render_session_context(
        [TOX_USER, TOX_EXTRACTED, OTHER], total=3, source="startup", budget_tokens=1000
    )
    assert TOX_USER.subject in text and OTHER.subject in text
    assert TOX_EXTRACTED.subject not in text
