"""The viewer's first-week fixes in a real headless Chromium against a real daemon:
no page ever shows "null" or "undefined", typing searches (debounced, the box keeps focus),
session summaries are listed, searched and opened, the new-memory form writes through the
library (redaction named, never the value), links follow a renamed file, and the review queue
names a look-alike and merges it. Every wait is on a condition (tests/browser.py)."""

from __future__ import annotations

import re
import subprocess
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.browser import click, make_driver, missing_browser, serving_viewer, texts, until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(missing_browser() is not None, reason=str(missing_browser())),
]

TOX_MINE = "Run the tests with pytest via tox"
TOX_THEIRS = "Run tests with pytest through tox"
LOCK_SESSION = str(uuid.uuid4())
DOCS_SESSION = str(uuid.uuid4())
NULLISH = re.compile(r"\b(null|undefined|NaN|\[object Object\])\b")


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
    return done.stdout.decode()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, dict[str, str]]]:
    from local_recall.memory.drafts import make_draft
    from local_recall.memory.model import Provenance
    from local_recall.recall import Recall
    from local_recall.settings import Settings

    root = tmp_path_factory.mktemp("web-first-week") / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    (root / "src").mkdir()
    (root / "src" / "old_name.py").write_text("VALUE = 1\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    recall = Recall.open(settings=Settings(root=root, environ={}))
    recall.init()
    ids = {
        "cli": recall.add("LanceDB index is derived", "Delete `local-recall/index/`: rebuilt."),
        "scoped": recall.add(
            "VALUE is read once at import",
            "Changing it needs a restart.",
            scope="file:src/old_name.py",
        ),
        "mine": recall.add(
            TOX_MINE, "Tests run through tox, which calls pytest; do not run pytest directly."
        ),
        "theirs": recall.save(
            TOX_THEIRS,
            "The test suite is run with tox, which invokes pytest, rather than calling pytest "
            "by hand.",
            reviewed=False,
        ).memory,
    }
    for session, request in (
        (LOCK_SESSION, "Fix the flaky lock test"),
        (DOCS_SESSION, "Write the release notes"),
    ):
        draft = make_draft(
            subject=f"Session: {request}",
            body=f"## Request\n\n{request}\n\n## Done\n\n- Looked into it",
            keywords=["session summary"],
            applies_to="global",
            occurred_at=datetime.now(UTC),
            source=f"transcript:{session}",
            provenance=Provenance(branch="main", session=session),
        )
        recall.summaries.put(session, draft)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "memories")
    git(root, "mv", "src/old_name.py", "src/new_name.py")
    git(root, "commit", "-qm", "rename")
    with serving_viewer(root) as url:
        yield root, url, {name: memory.id for name, memory in ids.items()}


@pytest.fixture(scope="module")
def browser(site: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    driver = make_driver(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield driver
    finally:
        driver.quit()


def visit(driver: Any, url: str, fragment: str, view: str) -> None:
    """Open a view and wait until it has rendered (body[data-ready] set after this visit)."""
    driver.get("about:blank")
    driver.get(url + fragment)
    until(driver, lambda d: d.execute_script("return document.body.dataset.view") == view)
    until(driver, lambda d: d.execute_script("return document.body.dataset.ready"))


def page_text(driver: Any) -> str:
    return str(driver.execute_script("return document.body.innerText"))


def test_no_page_shows_null_or_undefined(site: Any, browser: Any) -> None:
    _, url, ids = site
    pages = [
        ("#/", "list"),
        (f"#/m/{ids['cli']}", "memory"),  # a CLI memory: no session, no transcript
        (f"#/m/{ids['scoped']}", "memory"),
        ("#/review", "review"),
        ("#/stale", "stale"),
        ("#/stats", "stats"),
        ("#/sessions", "sessions"),
        (f"#/s/{LOCK_SESSION}", "session"),
        ("#/new", "new"),
        ("#/?q=tox", "list"),
    ]
    for fragment, view in pages:
        visit(browser, url, fragment, view)
        assert texts(browser, "main"), fragment
        shown = page_text(browser)
        assert not NULLISH.search(shown), (fragment, NULLISH.search(shown))


def test_typing_searches_without_enter(site: Any, browser: Any) -> None:
    _, url, _ = site
    visit(browser, url, "#/", "list")
    box = browser.find_element("css selector", "#search")
    box.send_keys("derived index")
    until(browser, lambda d: texts(d, "td.score"))  # no Enter pressed
    assert texts(browser, "tr.item a.subject")[0] == "LanceDB index is derived"
    active = browser.execute_script("return document.activeElement.id")
    assert active == "search"  # still typing: the re-render kept the focus
    assert browser.execute_script("return document.activeElement.value") == "derived index"
    assert "q=derived" in browser.current_url


def test_session_summaries_are_listed_searched_and_opened(site: Any, browser: Any) -> None:
    _, url, _ = site
    visit(browser, url, "#/sessions", "sessions")
    listed = texts(browser, "tr.item a.subject")
    assert set(listed) == {"Session: Fix the flaky lock test", "Session: Write the release notes"}
    browser.find_element("css selector", "#session-search").send_keys("flaky lock")
    until(browser, lambda d: texts(d, "tr.item a.subject") == ["Session: Fix the flaky lock test"])
    click(browser, "tr.item a.subject")
    until(browser, lambda d: d.execute_script("return document.body.dataset.view") == "session")
    until(browser, lambda d: texts(d, "article.memory h1.subject"))
    assert texts(browser, "article.memory h1.subject") == ["Session: Fix the flaky lock test"]
    assert LOCK_SESSION in page_text(browser)


def test_the_new_memory_form_writes_through_the_library(site: Any, browser: Any) -> None:
    root, url, _ = site
    visit(browser, url, "#/new", "new")
    token = "ghp_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7d"
    browser.find_element("css selector", "#new-subject").send_keys("Deploy token lives in CI")
    browser.find_element("css selector", "#new-body").send_keys(
        f"The deploy job reads GH_TOKEN={token} from the CI secrets."
    )
    browser.find_element("css selector", "#new-keywords").send_keys("deploy, ci")
    click(browser, "#new-save")
    until(browser, lambda d: d.execute_script("return document.body.dataset.view") == "memory")
    until(browser, lambda d: texts(d, "article.memory h1.subject") == ["Deploy token lives in CI"])
    until(browser, lambda d: "Redacted" in texts(d, "#notice")[0])
    notice = texts(browser, "#notice")[0]
    assert "github-token" in notice and token not in notice
    memory_id = browser.current_url.rsplit("/", 1)[-1]
    text = (root / "local-recall" / "episodic-memory" / f"{memory_id}.md").read_text("utf-8")
    assert "[REDACTED:github-token]" in text and token not in text
    assert "source: viewer" in text and "review:" not in text  # a person wrote it
    assert "- deploy\n- ci\n" in text


def test_links_follow_a_renamed_file(site: Any, browser: Any) -> None:
    _, url, ids = site
    visit(browser, url, f"#/m/{ids['scoped']}", "memory")
    until(browser, lambda d: texts(d, "a.file-link"))
    assert "src/new_name.py" in texts(browser, "a.file-link")
    assert "(renamed from src/old_name.py)" in page_text(browser)
    click(browser, "a.file-link")
    until(browser, lambda d: d.execute_script("return document.body.dataset.view") == "file")
    until(browser, lambda d: "VALUE = 1" in page_text(d))


def test_review_names_the_look_alike_and_merges_it(site: Any, browser: Any) -> None:
    root, url, ids = site
    visit(browser, url, "#/review", "review")
    until(browser, lambda d: texts(d, ".looks-like"))
    assert texts(browser, ".item h1.subject") == [TOX_THEIRS]
    assert TOX_MINE in texts(browser, ".looks-like")[0]
    browser.find_element("tag name", "body").send_keys("m")
    until(browser, lambda d: not texts(d, ".item h1.subject"))
    folder = root / "local-recall" / "episodic-memory"
    assert (folder / f"{ids['mine']}.md").exists()
    assert not (folder / f"{ids['theirs']}.md").exists()
