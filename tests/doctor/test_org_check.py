"""doctor/org.py: the org index's checks, on literals (the CLI's wiring: tests/org/test_org.py)."""

from __future__ import annotations

from local_recall.doctor.org import check_org
from local_recall.errors import InvalidInput

DAY = 86_400.0


def checks(**given: object) -> list[tuple[str, str, str]]:
    arguments: dict[str, object] = {
        "hook": True,
        "own_name": lambda: "github.com--acme--api",
        "copy_age": lambda: 60.0,
        "stale_after": DAY,
    }
    arguments.update(given)
    uri = str(arguments.pop("uri", "s3://acme/org"))
    return [(c.name, c.status, c.detail) for c in check_org(uri, **arguments)]  # type: ignore[arg-type]


def test_nothing_without_an_org_index() -> None:
    assert checks(uri="") == []


def test_the_index_its_name_and_a_fresh_copy() -> None:
    assert checks() == [
        ("org index", "ok", "s3://acme/org; this repository publishes as github.com--acme--api"),
        ("org in prompts", "ok", "the local copy was pulled 60 s ago"),
    ]


def test_the_hook_off_needs_no_copy() -> None:
    def never() -> float | None:
        raise AssertionError("the copy is not looked at when the hook is off")

    found = checks(hook=False, copy_age=never)
    assert found[1] == (
        "org in prompts",
        "ok",
        "off ([org] hook = false): prompts search this repo",
    )


def test_no_copy_an_old_copy_and_an_unreadable_one_warn() -> None:
    (_, (_, status, detail)) = checks(copy_age=lambda: None)
    assert status == "warn" and "run `local-recall org pull`" in detail
    (_, (_, status, detail)) = checks(copy_age=lambda: 3 * DAY)
    assert status == "warn" and "3 days old" in detail

    def broken() -> float | None:
        raise InvalidInput("no org URI")

    (_, (_, status, detail)) = checks(copy_age=broken)
    assert status == "warn" and "cannot be read: no org URI" in detail


def test_a_repository_without_a_name_is_told_how_to_get_one() -> None:
    ((_, status, detail), _) = checks(own_name=lambda: None)
    assert status == "warn" and "set [org] name" in detail
