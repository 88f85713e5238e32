"""The viewer in a real headless Chromium against a real daemon on a temp repository: list,
search, open, edit (the file on disk changes; a failed save loses nothing), review accept and
reject with one keystroke, a live update after a file is added on disk, and the token and
origin checks over plain HTTP. Every wait is on a condition (tests/browser.py)."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.browser import click, make_driver, missing_browser, serving_viewer, texts, until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(missing_browser() is not None, reason=str(missing_browser())),
]

OLD_SUBJECT = "Use filelock for cross-process dedup"
KEEP = "Prefer rg over grep in scripts"
DROP = "The build is broken on main"
UNREVIEWED = "review: unreviewed"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    from local_recall.recall import Recall
    from local_recall.settings import Settings

    base = tmp_path_factory.mktemp("web")
    root = base / "repo"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    recall = Recall.open(settings=Settings(root=root, environ={}))
    recall.init()
    recall.add(OLD_SUBJECT, "Two processes may create the same memory; a lock makes it one.")
    recall.add("LanceDB index is derived", "Delete `local-recall/index/` and it is rebuilt.")
    recall.add("Hooks fail open", "A hook never breaks a session: exit 0 and log.")
    with serving_viewer(root) as url:
        yield root, url


@pytest.fixture(scope="module")
def browser(site: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    driver = make_driver(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield driver
    finally:
        driver.quit()


def css(driver: Any, selector: str) -> list[Any]:
    return list(driver.find_elements("css selector", selector))


def subjects(driver: Any) -> list[str]:
    return texts(driver, "tr.item a.subject")


def open_list(driver: Any, url: str) -> None:
    driver.get(url)
    until(driver, lambda d: d.execute_script("return document.body.dataset.view") == "list")
    until(driver, lambda d: subjects(d))


def memory_file(root: Path, subject: str) -> Path:
    for path in (root / "local-recall" / "episodic-memory").glob("*.md"):
        if f"subject: {subject}" in path.read_text(encoding="utf-8"):
            return path
    raise AssertionError(f"no file holds {subject!r}")


def write_by_hand(root: Path, subject: str, body: str, *extra: str) -> str:
    """A memory file written the way a person or another tool would: temp file, rename."""
    memory_id = str(uuid.uuid4())
    folder = root / "local-recall" / "episodic-memory"
    lines = [f"id: {memory_id}", f"subject: {subject}", "occurred_at: 2099-01-01T00:00:00Z", *extra]
    temp = folder / f".{memory_id}.tmp"
    temp.write_text("---\n" + "\n".join(lines) + f"\n---\n{body}\n", encoding="utf-8")
    temp.rename(folder / f"{memory_id}.md")
    return memory_id


# --- over plain HTTP ---------------------------------------------------------------------------


def http(url: str, *, data: bytes | None = None, headers: dict[str, str] | None = None) -> int:
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_the_token_is_required_and_cross_origin_changes_are_refused(
    site: tuple[Path, str],
) -> None:
    root, url = site
    parts = urlsplit(url)
    base = f"{parts.scheme}://{parts.netloc}"
    token = parts.query.removeprefix("token=")
    assert parts.hostname == "127.0.0.1"
    assert http(f"{base}/") == 200  # the page is code; the data needs the token
    assert http(f"{base}/api/memories") == 401
    assert http(f"{base}/api/memories?token=wrong") == 403
    assert http(f"{base}/api/memories?token={token}") == 200
    assert http(f"{base}/api/counts?token={token}") == 200
    # a page on another origin that somehow learnt the token still cannot change anything
    target = memory_file(root, "Hooks fail open")
    before = target.read_bytes()
    body = json.dumps({"ids": [target.stem]}).encode()
    for headers in (
        {"Origin": "http://evil.example", "X-Recall-Token": token},
        {"Origin": "null", "X-Recall-Token": token},
        {"Sec-Fetch-Site": "cross-site", "X-Recall-Token": token},
        {},  # no token header: a plain cross-site form post
    ):
        headers["Content-Type"] = "application/json"
        assert http(f"{base}/api/memories/{target.stem}/delete", data=body, headers=headers) in (
            401,
            403,
        )
    assert http(f"{base}/api/memories?token={token}", headers={"Host": "evil.example"}) == 403
    assert target.read_bytes() == before


# --- in the browser ----------------------------------------------------------------------------


def test_list_search_and_open(site: tuple[Path, str], browser: Any) -> None:
    _, url = site
    open_list(browser, url)
    assert {OLD_SUBJECT, "LanceDB index is derived", "Hooks fail open"} <= set(subjects(browser))
    box = css(browser, "#search")[0]
    box.send_keys("rebuild the derived index\n")
    until(browser, lambda d: css(d, "td.score"))
    assert subjects(browser)[0] == "LanceDB index is derived"
    score = float(texts(browser, "td.score")[0])
    assert 0 < score <= 1
    click(browser, "tr.item a.subject")
    until(browser, lambda d: texts(d, "article.memory h1.subject") == ["LanceDB index is derived"])
    assert texts(browser, ".markdown code") == ["local-recall/index/"]  # markdown rendered
    assert "subject: LanceDB index is derived" in texts(browser, "pre.frontmatter")[0]


def test_edit_writes_the_file_and_a_failed_save_loses_nothing(
    site: tuple[Path, str], browser: Any
) -> None:
    from selenium.webdriver.common.keys import Keys

    root, url = site
    open_list(browser, url)
    path = memory_file(root, OLD_SUBJECT)
    browser.get(url + f"#/m/{path.stem}")
    until(browser, lambda d: css(d, "#edit"))
    browser.find_element("tag name", "body").send_keys("e")  # one keystroke opens the editor
    until(browser, lambda d: css(d, "form.editor textarea"))
    body = css(browser, "form.editor textarea")[0]
    body.clear()
    subject = css(browser, "form.editor input[name=subject]")[0]
    subject.send_keys(" (edited)")
    click(browser, "form.editor button[type=submit]")
    until(browser, lambda d: texts(d, "form.editor .error:not([hidden])"))
    assert "body is empty" in texts(browser, "form.editor .error")[0]
    typed = browser.execute_script("return document.querySelector('form.editor input').value")
    assert typed == OLD_SUBJECT + " (edited)"
    assert f"subject: {OLD_SUBJECT}\n" in path.read_text(encoding="utf-8")  # nothing written
    body = css(browser, "form.editor textarea")[0]
    body.send_keys("A lock file under local-recall/state/ makes create idempotent.")
    body.send_keys(Keys.CONTROL, Keys.ENTER)
    until(browser, lambda d: texts(d, "article.memory h1.subject") == [OLD_SUBJECT + " (edited)"])
    text = path.read_text(encoding="utf-8")
    assert f"subject: {OLD_SUBJECT} (edited)\n" in text
    assert "makes create idempotent." in text


def test_a_file_added_on_disk_appears_without_a_reload(
    site: tuple[Path, str], browser: Any
) -> None:
    root, url = site
    open_list(browser, url)
    until(browser, lambda d: css(d, "#live.on"))
    marker = browser.execute_script("return (window.__marker = Math.random())")
    write_by_hand(root, "Written by hand on disk", "A person wrote this file in an editor.")
    until(browser, lambda d: "Written by hand on disk" in subjects(d))
    assert subjects(browser)[0] == "Written by hand on disk"  # newest first
    assert browser.execute_script("return window.__marker") == marker  # no reload happened


def select_in_queue(browser: Any, subject: str) -> None:
    """Move the selection with `k` to the top, then `j` down to `subject`."""
    until(browser, lambda d: texts(d, ".item.selected h1.subject"))
    count = len(texts(browser, ".item h1.subject"))
    body = browser.find_element("tag name", "body")
    for _ in range(count):
        body.send_keys("k")
    for _ in range(count):
        if texts(browser, ".item.selected h1.subject") == [subject]:
            return
        body.send_keys("j")
    raise AssertionError(f"{subject!r} is not in the queue")


def wait_subject_gone(browser: Any, subject: str) -> None:
    until(browser, lambda d: subject not in texts(d, ".item h1.subject"))


def test_review_accept_and_reject_one_keystroke_each(site: tuple[Path, str], browser: Any) -> None:
    from local_recall.recall import Recall
    from local_recall.settings import Settings

    root, url = site
    keep = write_by_hand(root, KEEP, "ripgrep is faster.", UNREVIEWED)
    drop = write_by_hand(root, DROP, "It was, once.", UNREVIEWED)
    recall = Recall.open(settings=Settings(root=root, environ={}))
    assert recall.get(keep).unreviewed and recall.get(drop).unreviewed
    browser.get(url + "#/review")
    until(browser, lambda d: {KEEP, DROP} <= set(texts(d, ".item h1.subject")))
    select_in_queue(browser, KEEP)
    browser.find_element("tag name", "body").send_keys("a")
    wait_subject_gone(browser, KEEP)
    select_in_queue(browser, DROP)
    browser.find_element("tag name", "body").send_keys("r")
    wait_subject_gone(browser, DROP)
    assert not recall.get(keep).unreviewed
    assert "review:" not in memory_file(root, KEEP).read_text(encoding="utf-8")
    assert not (root / "local-recall" / "episodic-memory" / f"{drop}.md").exists()


DISPUTED = "Retries are capped at 3"
REASON = "net.py retries 5 times since the client moved"


def test_a_dispute_shows_its_reason_and_this_users_sessions_and_accept_settles_it(
    site: tuple[Path, str], browser: Any
) -> None:
    """The Review queue and the memory's page say why a session found it wrong (its file's
    `disputed:` key) and how this user's sessions used it (their record in state/)."""
    from local_recall.learning.outcomes import Outcome
    from local_recall.learning.usage_log import append_outcomes
    from local_recall.repo.layout import Layout

    root, url = site
    session = "0123456789abcdef0123456789abcdef"
    memory_id = write_by_hand(
        root,
        DISPUTED,
        "A request is retried 3 times.",
        UNREVIEWED,
        f"disputed: {{reason: {REASON}, date: '2026-12-06', session: '{session}'}}",
    )
    at = "2026-12-01T10:00:00Z"
    append_outcomes(
        Layout(root),
        [
            Outcome(memory_id, session, at, "full", "disputed", REASON),
            Outcome(memory_id, "f" * 32, at, "pointer", "followed"),
        ],
    )
    browser.get(url + "#/review")
    until(browser, lambda d: DISPUTED in texts(d, ".item h1.subject"))
    item = f'.item[data-id="{memory_id}"]'
    (detail,) = texts(browser, f"{item} .disputed-detail")
    assert REASON in detail and "2026-12-06" in detail and session[:8] in detail
    assert texts(browser, f"{item} .badge.disputed") == ["disputed"]
    assert texts(browser, f"{item} .usage") == ["Your sessions: followed 1 · disputed 1"]

    browser.get(url + f"#/m/{memory_id}")
    until(browser, lambda d: texts(d, ".memory-page .disputed-detail"))
    assert REASON in texts(browser, ".memory-page .disputed-detail")[0]
    assert "disputed:" in texts(browser, "pre.frontmatter")[0]  # as the pull request shows it
    click(browser, "#accept")
    until(browser, lambda d: not texts(d, ".memory-page .disputed-detail"))
    text = memory_file(root, DISPUTED).read_text(encoding="utf-8")
    assert "disputed" not in text and "review:" not in text


def test_ui_hands_the_token_over_without_the_browser_command_line(
    site: tuple[Path, str], browser: Any, tmp_path: Path
) -> None:
    """`local-recall ui` once ran the browser with the token in its argument, which any
    local user can read in /proc. Now the browser gets the path of a page only the user can
    read; the token travels from it in the URL fragment and is kept in sessionStorage."""
    import os
    import stat
    import sys

    from tests.browser import daemon_env, local_recall

    root, url = site
    token = urlsplit(url).query.removeprefix("token=")
    record = tmp_path / "argv.json"
    fake = tmp_path / "fake-browser"
    fake.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(record)!r}, 'w').write(json.dumps(sys.argv))\n"
    )
    fake.chmod(0o755)
    done = local_recall(root, "ui", env=daemon_env(root, BROWSER=str(fake)))
    assert done.returncode == 0, done.stderr
    argv = json.loads(record.read_text())
    assert token and token not in json.dumps(argv) and token not in done.stdout
    opened = argv[-1]
    assert opened.startswith("file://"), argv
    page = Path(urlsplit(opened).path)
    info, folder = page.stat(), page.parent.stat()
    assert stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == os.getuid()
    assert stat.S_IMODE(folder.st_mode) == 0o700 and folder.st_uid == os.getuid()

    browser.get(opened)  # what the real browser would do with its argument
    until(browser, lambda d: d.execute_script("return document.body.dataset.view") == "list")
    until(browser, lambda d: OLD_SUBJECT in " ".join(subjects(d)) or subjects(d))
    assert subjects(browser)
    assert "token" not in browser.current_url  # cleared from the address bar
    browser.refresh()  # the tab keeps it (sessionStorage: per origin, not shared by ports)
    until(browser, lambda d: subjects(d))
