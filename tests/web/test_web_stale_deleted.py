"""The Stale page does not offer "Still true" for a memory whose file was deleted:
it offers to keep the memory without that file (what `review still-true` does to a deleted
anchor), and doing so does that. Real headless Chromium against a real daemon."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import WAIT_SECONDS, make_driver, missing_browser, serving_viewer

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(missing_browser() is not None, reason=str(missing_browser())),
]

GONE = "Old loader parses the legacy format"
CHANGED = "The config reader caches values"


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    from local_recall.recall import Recall
    from local_recall.settings import Settings

    root = tmp_path_factory.mktemp("web-stale") / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    (root / "src").mkdir()
    (root / "src" / "loader.py").write_text("def load():\n    return 1\n")
    (root / "src" / "config.py").write_text("CACHE = {}\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    recall = Recall.open(settings=Settings(root=root, environ={}))
    recall.init()
    recall.add(GONE, "It reads v1 files.", scope="file:src/loader.py")
    recall.add(CHANGED, "Values are read once.", scope="file:src/config.py")
    git(root, "rm", "-q", "src/loader.py")
    (root / "src" / "config.py").write_text("".join(f"VALUE_{n} = {n}\n" for n in range(40)))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "second")
    with serving_viewer(root) as url:
        yield root, url


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    driver = make_driver(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield driver
    finally:
        driver.quit()


def _buttons(driver: Any) -> dict[str, str]:
    """Each stale item's subject -> the label of its first button."""
    script = """return Object.fromEntries([...document.querySelectorAll('section.queue .item')]
        .map(i => [i.querySelector('.subject, h2, h3')?.textContent || i.textContent,
                   i.querySelector('button.still-true')?.textContent || '']))"""
    return dict(driver.execute_script(script))


def test_a_deleted_file_is_not_offered_as_still_true(site: tuple[Path, str], browser: Any) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    root, url = site
    browser.get(url)
    browser.execute_script("location.hash = '#/stale'")
    wait = WebDriverWait(browser, WAIT_SECONDS, poll_frequency=0.1)
    wait.until(lambda d: len(_buttons(d)) == 2)
    labels = {next(k for k in _buttons(browser) if s in k): s for s in (GONE, CHANGED)}
    shown = {labels[k]: v for k, v in _buttons(browser).items()}
    assert shown[CHANGED] == "Still true (s)"
    assert shown[GONE] == "Keep without src/loader.py (s)", shown
    browser.execute_script(
        "[...document.querySelectorAll('section.queue .item')]"
        ".find(i => i.textContent.includes(arguments[0]))"
        ".querySelector('button.still-true').click()",
        GONE,
    )
    wait.until(lambda d: len(_buttons(d)) == 1)
    memory = next(
        p.read_text()
        for p in (root / "local-recall" / "episodic-memory").glob("*.md")
        if GONE in p.read_text()
    )
    assert "applies_to: file:src/" in memory and "loader.py" not in memory.split("---")[1]
