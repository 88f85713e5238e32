"""A real headless Chromium (selenium + Debian's chromedriver) and a real daemon serving the
viewer, for tests/web/test_web_browser.py and docs/screenshots/make_screenshots.py."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests import waiting

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
CHROMEDRIVER_CANDIDATES = ("/usr/bin/chromedriver",)
WAIT_SECONDS = 60.0  # generous: the CI machine may be loaded


def _first(paths: tuple[str, ...], name: str) -> str | None:
    for path in paths:
        if os.access(path, os.X_OK):
            return path
    return shutil.which(name)


def missing_browser() -> str | None:
    """Why the browser tests cannot run here (None: they can)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    if _first(CHROMIUM_CANDIDATES, "chromium") is None:
        return "Chromium is not installed (apt-get install chromium chromium-driver; .ci/run does)"
    if _first(CHROMEDRIVER_CANDIDATES, "chromedriver") is None:
        return "chromedriver is not installed (apt-get install chromium-driver)"
    return None


def until(driver: Any, condition: Any) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT_SECONDS, poll_frequency=0.1).until(condition)


def texts(driver: Any, selector: str) -> list[str]:
    """Read in one script: the page may re-render between two element lookups."""
    script = "return [...document.querySelectorAll(arguments[0])].map(e => e.textContent)"
    return list(driver.execute_script(script, selector))


def click(driver: Any, selector: str) -> None:
    """Find and click in one script: a live re-render (a "changed" event) may replace the
    element between a lookup and a click, which selenium reports as a stale element."""
    script = "const e = document.querySelector(arguments[0]); if (e) e.click(); return !!e"
    until(driver, lambda d: d.execute_script(script, selector))


def make_driver(profile: Path, *, width: int = 1280, height: int = 900, dark: bool = False) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = _first(CHROMIUM_CANDIDATES, "chromium") or "chromium"
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
    ):
        options.add_argument(flag)
    if dark:
        options.add_argument("--force-dark-mode")
        options.add_argument("--blink-settings=preferredColorScheme=0")
    service = Service(executable_path=_first(CHROMEDRIVER_CANDIDATES, "chromedriver"))
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(WAIT_SECONDS)
    driver.set_script_timeout(WAIT_SECONDS)
    return driver


def daemon_env(repo: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOCAL_RECALL_")}
    env.pop("CLAUDE_PROJECT_DIR", None)
    env.update(
        PYTHONUNBUFFERED="1",
        CLAUDE_CONFIG_DIR=str(repo.parent / "claude-config"),
        LOCAL_RECALL_EXTRACTION_ENABLED="false",
    )
    env.update(extra)
    return env


def local_recall(
    repo: Path, *args: str, env: Mapping[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "local_recall", "--root", str(repo), *args],
        capture_output=True,
        text=True,
        env=dict(env),
        timeout=timeout,
        cwd=repo,
    )


def wait_for(condition: Callable[[], Any], timeout: float = WAIT_SECONDS) -> Any:
    """Poll a condition until it holds (the synchronisation is the condition, not the delay)."""
    return waiting.wait_for(condition, timeout)


@contextmanager
def serving_viewer(repo: Path) -> Iterator[str]:
    """`local-recall ui --no-browser` on `repo` (which starts the daemon); yields the URL and
    stops the daemon afterwards."""
    from local_recall.daemon.control import stop_daemon
    from local_recall.repo.layout import Layout

    env = daemon_env(repo)
    try:
        result = local_recall(repo, "ui", "--no-browser", "--wait", "90", env=env)
        assert result.returncode == 0, result.stderr
        url = result.stdout.strip().splitlines()[-1]
        assert url.startswith("http://127.0.0.1:"), result.stdout
        yield url
    finally:
        stopped = stop_daemon(Layout(repo), wait_seconds=30)
        if not stopped.stopped and stopped.pid:
            os.kill(stopped.pid, signal.SIGKILL)
