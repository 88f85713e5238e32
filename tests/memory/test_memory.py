"""Memory format: parsing (incl. hand edits), rendering, hashing, scopes — pure, literals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from local_recall.errors import InvalidInput, InvalidMemoryFile, InvalidMemoryId
from local_recall.memory.format import parse_memory_text, render_memory
from local_recall.memory.model import (
    Memory,
    content_hash,
    normalise_body,
    parse_memory_id,
    parse_scope,
    scope_matches,
    validate_keywords,
    validate_subject,
)
from local_recall.memory.timestamps import (
    exact_time,
    format_timestamp,
    memory_time,
    parse_timestamp,
    written_time,
    written_times,
)

MID = "3f2b8c1e-9a4d-4e5f-8a7b-1c2d3e4f5a6b"
PATH = Path(f"/repo/local-recall/episodic-memory/{MID}.md")


def file_text(header: str, body: str = "Body text.\n") -> str:
    return f"---\n{header}---\n\n{body}"


def test_normalisation_ignores_line_endings_and_trailing_whitespace() -> None:
    assert normalise_body("a  \r\nb\t\r\n\r\n") == "a\nb"
    assert content_hash("a\r\nb\n") == content_hash("a \nb   \n\n")
    assert content_hash("a\nb") != content_hash("a\n\nb")
    # NFC: a composed and a decomposed é hash the same
    assert content_hash("caf\u00e9") == content_hash("cafe\u0301")


def test_round_trip_keeps_unknown_keys_and_quotes_timestamp_and_hash() -> None:
    text = file_text(
        f"id: {MID}\nsubject: Use filelock\nkeywords: [lock, dedup]\napplies_to: global\n"
        "occurred_at: '2026-01-02T03:04:05Z'\nreviewed_by: ana\ntags: {team: core}\n"
    )
    memory = parse_memory_text(text, PATH)
    assert memory.extra == {"reviewed_by": "ana", "tags": {"team": "core"}}
    rendered = render_memory(memory)
    assert 'occurred_at: "2026-01-02T03:04:05Z"' in rendered
    assert f'content_hash: "{memory.content_hash}"' in rendered
    assert "reviewed_by: ana" in rendered
    again = parse_memory_text(rendered, PATH)
    assert again == memory


@pytest.mark.parametrize(
    "written",
    ["'2026-01-02T03:04:05.750Z'", "2026-01-02 03:04:05.750000+00:00", str(1767323045.75)],
)
def test_a_fractional_timestamp_reads_as_the_whole_second_the_file_keeps(written: str) -> None:
    """Found by the frontmatter fuzzer: `occurred_at: 1.5` parsed with its half second, but
    the file keeps whole seconds, so the memory changed after one rewrite."""
    memory = parse_memory_text(file_text(f"subject: s\noccurred_at: {written}\n"), PATH)
    assert memory.occurred_at == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert parse_memory_text(render_memory(memory), PATH) == memory


def test_tolerant_parsing_of_hand_written_files() -> None:
    # unquoted YAML datetime, numeric-looking hash, no keywords/source/applies_to/id, CRLF
    text = file_text(
        "subject: Hand written\noccurred_at: 2026-03-01 10:00:00\ncontent_hash: 1234\n",
        "Line one\nLine two\n",
    ).replace("\n", "\r\n")
    memory = parse_memory_text(text, PATH)
    assert memory.id == MID
    assert memory.occurred_at == datetime(2026, 3, 1, 10, tzinfo=UTC)
    assert memory.applies_to == "global"
    assert memory.keywords == ()
    assert memory.body == "Line one\nLine two"
    assert memory.content_hash == content_hash("Line one\nLine two")
    assert memory.stale_hash == "1234"


def test_hand_edited_body_makes_stored_hash_stale_and_hash_is_recomputed() -> None:
    original = parse_memory_text(
        file_text(
            "subject: S\noccurred_at: '2026-01-01T00:00:00Z'\n"
            f"content_hash: '{content_hash('old')}'\n",
            "new body\n",
        ),
        PATH,
    )
    assert original.content_hash == content_hash("new body")
    assert original.stale_hash == content_hash("old")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no frontmatter at all", "no YAML frontmatter"),
        ("---\nsubject: [unclosed\n---\nbody", "not valid YAML"),
        ("---\n- a list\n---\nbody", "not a mapping"),
        ("---\noccurred_at: '2026-01-01T00:00:00Z'\n---\nbody", "missing 'subject'"),
        ("---\nsubject: s\n---\nbody", "missing 'occurred_at'"),
        ("---\nsubject: s\noccurred_at: yesterday\n---\nbody", "ISO-8601"),
        ("---\nsubject: s\noccurred_at: '2026-01-01T00:00:00Z'\n---\n   \n", "body is empty"),
        (
            "---\nsubject: s\noccurred_at: '2026-01-01T00:00:00Z'\napplies_to: file:/etc\n---\nb",
            "scope",
        ),
        (
            f"---\nid: {'0' * 8}-0000-4000-8000-{'0' * 12}\nsubject: s\n"
            "occurred_at: '2026-01-01T00:00:00Z'\n---\nb",
            "does not match",
        ),
    ],
)
def test_unparsable_files_raise_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(InvalidMemoryFile) as caught:
        parse_memory_text(text, PATH)
    assert reason in caught.value.reason
    assert caught.value.path == PATH


def test_file_name_must_be_a_uuid() -> None:
    with pytest.raises(InvalidMemoryFile):
        parse_memory_text(
            file_text("subject: s\noccurred_at: '2026-01-01T00:00:00Z'\n"), Path("/x/notes.md")
        )


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("global", "global"),
        (" global ", "global"),
        ("file:src/a.py", "file:src/a.py"),
        ("file:./src//a.py", "file:src/a.py"),
        ("file:src/", "file:src/"),
        ("file:src\\win.py", "file:src/win.py"),
        ("area:search", "area:search"),
        ("area:ci/cd", "area:ci/cd"),
    ],
)
def test_valid_scopes_normalise(given: str, expected: str) -> None:
    assert parse_scope(given) == expected


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "local",
        "file:",
        "file:/etc/passwd",
        "file:../x",
        "file:a/../../b",
        "area:",
        "area:has space",
        "file:C:/x",
        "dir:x",
    ],
)
def test_invalid_scopes_are_refused(bad: str) -> None:
    with pytest.raises(InvalidInput):
        parse_scope(bad)


@pytest.mark.parametrize(
    ("applies_to", "wanted", "include_global", "expected"),
    [
        ("file:src/a.py", "file:src/", True, True),
        ("file:src/deep/b.py", "file:src", True, True),
        ("file:srcx/a.py", "file:src/", True, False),
        ("file:src/", "file:src/a.py", True, True),
        ("global", "file:src/", True, True),
        ("global", "file:src/", False, False),
        ("area:search", "area:search", True, True),
        ("area:search", "area:index", True, False),
        ("file:src/a.py", "global", True, False),
    ],
)
def test_scope_matching(applies_to: str, wanted: str, include_global: bool, expected: bool) -> None:
    assert scope_matches(applies_to, wanted, include_global=include_global) is expected


def test_ids_are_strict_uuids() -> None:
    assert parse_memory_id(MID.upper()) == MID
    for bad in ("../etc/passwd", "123", f"{{{MID}}}", f"urn:uuid:{MID}", f"{MID}/../x", ""):
        with pytest.raises(InvalidMemoryId):
            parse_memory_id(bad)


def test_subject_and_keyword_limits() -> None:
    assert validate_subject("two\nlines  here") == "two lines here"
    with pytest.raises(InvalidInput):
        validate_subject("x" * 201)
    with pytest.raises(InvalidInput):
        validate_subject("  ")
    assert validate_keywords(["A", "a", " b "]) == ("A", "b")
    with pytest.raises(InvalidInput):
        validate_keywords([f"k{i}" for i in range(21)])
    with pytest.raises(InvalidInput):
        validate_keywords([f"k{i}" for i in range(10_000)])


@pytest.mark.parametrize(
    "value",
    [
        "2026-01-02T03:04:05Z",
        "0999-12-31T23:59:59Z",  # a year isoformat pads
        "2024-02-29T00:00:00Z",
        "2026-01-02T03:04:05z",  # not the written form: the long way
        "2026-01-02T03:04:05+02:00",
        " 2026-01-02T03:04:05Z",
        "2026-01-02T03:04:05.9Z",
        1767323045,
    ],
)
def test_a_written_time_reads_as_the_long_way_reads_it(value: object) -> None:
    """`written_time`'s one step for the form the renderer writes is `memory_time` of
    `parse_timestamp`; and `written_times` is (`format_timestamp`, `isoformat`)."""
    moment = written_time(value)
    assert moment == memory_time(parse_timestamp(value))
    assert moment.tzinfo is UTC
    assert written_times(moment) == (format_timestamp(moment), moment.isoformat())


@pytest.mark.parametrize("value", ["2026-13-02T03:04:05Z", "2026-02-30T00:00:00Z", "today"])
def test_a_written_time_that_is_no_date_is_refused_as_before(value: str) -> None:
    with pytest.raises(InvalidInput, match="not an ISO-8601 timestamp"):
        written_time(value)


@pytest.mark.parametrize(
    "text", ["2026-01-02T03:04:05+00:00", "0999-12-31T23:59:59+00:00", "2026-01-02T03:04:05+02:00"]
)
def test_a_catalog_time_reads_as_parse_timestamp_reads_it(text: str) -> None:
    assert exact_time(text) == parse_timestamp(text)
    assert exact_time(text).tzinfo is UTC


def test_written_times_of_a_time_not_made_by_memory_time() -> None:
    local = datetime(2026, 1, 2, 3, 4, 5, 500, tzinfo=timezone(timedelta(hours=2)))
    assert written_times(local) == (format_timestamp(local), local.isoformat())


def test_scopes_and_keywords_checked_once_answer_as_the_first_time() -> None:
    """Scopes and keywords are kept once checked (a first scan meets each many times): the
    same answer every time, an invalid one refused every time."""
    for _ in range(3):
        assert parse_scope(" area:queue ") == "area:queue"
        assert parse_scope("file:./src//a.py") == "file:src/a.py"
        with pytest.raises(InvalidInput):
            parse_scope("file:../outside")
        assert validate_keywords(["  Two  words ", "two WORDS", "k" * 120]) == (
            "Two words",
            "k" * 100,
        )
        with pytest.raises(InvalidInput, match="lone surrogate"):
            validate_keywords(["ok", "bad\ud800"])


def test_a_lone_surrogate_past_a_keywords_cut_is_refused_not_a_crash() -> None:
    """Redaction reads a keyword whole before it is cut to 100 characters: a lone surrogate
    after the cut (found by the MCP fuzz test) must be refused up front like one before it."""
    from local_recall.memory.drafts import make_draft

    keyword = "k" * 120 + "\ud800"
    with pytest.raises(InvalidInput, match="lone surrogate"):
        validate_keywords([keyword])
    with pytest.raises(InvalidInput, match="lone surrogate"):
        make_draft(
            subject="s",
            body="b",
            keywords=[keyword],
            applies_to="global",
            occurred_at=datetime(2026, 1, 1, tzinfo=UTC),
            source="test",
        )


def test_a_subject_within_the_limit_is_kept_when_its_redaction_is_longer() -> None:
    """`[REDACTED:aws-access-key]` is 5 characters longer than the key it replaces: a
    subject the caller gave within the limit is stored cut, never refused for that."""
    from local_recall.memory.drafts import fitted_subject, make_draft, redacted_edits

    key = "AKIAIOSFODNN7QWERTYZ"
    subject = f"Rotate {key} " + "and then check the deploy logs " * 6
    subject = subject[:200].rstrip()
    assert len(subject) <= 200
    draft = make_draft(
        subject=subject,
        body="The key was rotated.",
        keywords=None,
        applies_to="global",
        occurred_at=datetime(2026, 1, 1, tzinfo=UTC),
        source=None,
    )
    assert key not in draft.subject and "[REDACTED:aws-access-key]" in draft.subject
    assert len(draft.subject) <= 200 and draft.subject.endswith("…")
    edited = redacted_edits(subject, None, None)["subject"]
    assert isinstance(edited, str) and len(edited) <= 200 and key not in edited
    assert fitted_subject("short  one") == "short one"
    assert fitted_subject("x" * 250) == "x" * 199 + "…"  # no word to cut at
    with pytest.raises(InvalidInput):  # what the caller gave over the limit is still refused
        make_draft(
            subject="x" * 201,
            body="b",
            keywords=None,
            applies_to="global",
            occurred_at=datetime(2026, 1, 1, tzinfo=UTC),
            source=None,
        )


def test_multiline_extra_values_and_unicode_survive() -> None:
    memory = Memory(
        id=MID,
        subject="Ünïcode ✓ subject: with colon",
        body="# Title\n\n- a\n- b",
        keywords=("naïve", "x: y"),
        applies_to="area:core",
        occurred_at=datetime(2026, 1, 1, tzinfo=UTC),
        content_hash=content_hash("# Title\n\n- a\n- b"),
        extra={"note": "line1\nline2"},
    )
    again = parse_memory_text(render_memory(memory), PATH)
    assert (again.subject, again.keywords, again.body, dict(again.extra)) == (
        memory.subject,
        memory.keywords,
        memory.body,
        {"note": "line1\nline2"},
    )


def test_the_new_memory_template_is_a_memory_file() -> None:
    """`new`'s template parses, so a placeholder left in is refused by name."""
    from local_recall.memory.hand_edit import PLACEHOLDER_SUBJECT, new_memory_text, read_edited

    now = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)
    template = new_memory_text(now, "file:src/app.py")
    memory = parse_memory_text(template, PATH)
    assert memory.subject == PLACEHOLDER_SUBJECT and memory.applies_to == "file:src/app.py"
    with pytest.raises(InvalidMemoryFile, match="still the placeholder"):
        read_edited(template.replace("What a teammate", "Why a teammate"), PATH, now)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-02T03:04:05Z", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2026-01-02T03:04:05.250z", datetime(2026, 1, 2, 3, 4, 5, 250000, tzinfo=UTC)),
        (" 2026-01-02T05:04:05+02:00 ", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2026-01-02T03:04:05", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)),  # naive: UTC
        ("0001-01-01T00:00:00+05:00", None),  # out of range once in UTC
        ("today", None),
        (1767323045, None),
    ],
)
def test_one_iso_time_reading_for_files_transcripts_and_state(
    text: object, expected: datetime | None
) -> None:
    from local_recall.capture.sessions.turns import timestamp_of
    from local_recall.capture.transcripts.entries import _parse_timestamp
    from local_recall.memory.timestamps import iso_time

    assert iso_time(text) == expected
    assert _parse_timestamp(text) == expected  # a transcript line's time
    if isinstance(text, str):
        assert timestamp_of(text) == expected  # an agent hook's time
