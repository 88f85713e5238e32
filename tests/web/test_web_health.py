"""The viewer shows failing extraction on every page, as the session start does,
and on the Stats page whatever its state: in a real headless Chromium against a real daemon
(tests/browser.py), on a repository whose extraction has been failing for two hours."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.browser import WAIT_SECONDS, make_driver, missing_browser, serving_viewer
from tests.capture.test_health import FAKE_CLAUDE, REFUSAL, write_session
from tests.conftest import clean_env

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(missing_browser() is not None, reason=str(missing_browser())),
]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from local_recall.capture.extraction.attempts import RetryPolicy
    from local_recall.capture.extraction.claude_cli import ClaudeCliExtractor
    from local_recall.recall import Recall
    from local_recall.settings import Settings

    base = tmp_path_factory.mktemp("web-health")
    root = base / "repo"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    Recall.open(settings=Settings(root=root, environ={})).init()
    claude = base / "claude"
    claude.write_text(FAKE_CLAUDE)
    claude.chmod(0o755)
    config = base / "home" / ".claude"
    session = "5e55a9b0-0000-4000-8000-000000000034"
    write_session(config / "projects", root, session, age=timedelta(hours=3))
    two_hours_ago = datetime.now(UTC) - timedelta(hours=2)
    settings = Settings(
        root=root,
        environ=clean_env({"CLAUDE_CONFIG_DIR": str(config)}),
        clock=lambda: two_hours_ago,
    )
    retry = RetryPolicy(max_attempts=1, sleep=lambda _: None)
    recall = Recall.open(settings=settings)
    assert recall.sync_transcripts(extractor=ClaudeCliExtractor(str(claude), retry=retry)).errors
    recall.add("Hooks fail open", "A hook never breaks a session: exit 0 and log.")
    with serving_viewer(root) as url:
        yield url


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    driver = make_driver(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield driver
    finally:
        driver.quit()


def _banner(driver: Any) -> str:
    script = (
        "const b = document.getElementById('health'); return b && !b.hidden ? b.textContent : ''"
    )
    return str(driver.execute_script(script))


def _on(driver: Any, view: str) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, WAIT_SECONDS, poll_frequency=0.1).until(
        lambda d: d.execute_script("return document.body.dataset.view") == view and _banner(d)
    )


def test_every_page_says_extraction_is_failing(site: str, browser: Any) -> None:
    browser.get(site)
    for view, hash_ in (("list", "#/"), ("review", "#/review"), ("sessions", "#/sessions")):
        browser.execute_script("location.hash = arguments[0]", hash_)
        _on(browser, view)
        shown = _banner(browser)
        assert "failing since" in shown and REFUSAL in shown, (view, shown)
        assert "doctor" in shown
    browser.execute_script("location.hash = '#/stats'")
    _on(browser, "stats")
    rows = browser.execute_script(
        "return [...document.querySelectorAll('table.stats tr')].map(r => r.textContent)"
    )
    status = [row for row in rows if row.startswith("Status")]
    assert status and "failing since" in status[0] and REFUSAL in status[0], rows
