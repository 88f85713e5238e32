"""Regenerate the viewer's screenshots in docs/screenshots/ (docs/ui.md).

    .venv/bin/python docs/screenshots/make_screenshots.py [--out docs/screenshots]

Builds a small demo repository in a temp folder (real git history: a memory anchored to a file
that a later commit deleted is stale; two teammates' wordings of one fact are near-duplicates;
extracted memories wait for review), runs `local-recall ui --no-browser` on it (a real daemon)
and photographs each view in headless Chromium (Debian's chromium + chromedriver, selenium).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.browser import make_driver, missing_browser, serving_viewer, wait_for  # noqa: E402

VIEWS = {  # file name: (hash route, CSS selector that is there once the view has data)
    "list": ("#/", "tr.item"),
    "search": ("#/?q=how+are+duplicate+memories+avoided", "td.score"),
    "memory": (None, "article.memory .markdown"),  # the first memory with anchors
    "review": ("#/review", ".item"),
    "stale": ("#/stale", ".item"),
    "consolidate": ("#/consolidate", ".side-by-side"),
    "stats": ("#/stats", "table.stats"),
}


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def write(root: Path, subject: str, body: str, when: str, **keys: Any) -> str:
    memory_id = str(uuid.uuid4())
    lines = [f"id: {memory_id}", f"subject: {subject}", f"occurred_at: {when}"]
    for key, value in keys.items():
        if isinstance(value, list):
            lines.append(f"{key}:")
            lines += [f"  - {item}" for item in value]
        else:
            lines.append(f"{key}: {value}")
    folder = root / "local-recall" / "episodic-memory"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{memory_id}.md").write_text("---\n" + "\n".join(lines) + f"\n---\n{body}\n")
    return memory_id


def demo_repository(root: Path) -> str:
    """A repository with a history; returns the id of a memory worth opening."""
    from local_recall.recall import Recall
    from local_recall.settings import Settings

    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    git(root, "config", "user.email", "dev@example.com")
    git(root, "config", "user.name", "Dev")
    Recall.open(settings=Settings(root=root, environ={})).init()
    (root / "src").mkdir()
    (root / "src" / "store.py").write_text("def create():\n    pass\n" * 20)
    (root / "src" / "legacy_cache.py").write_text("CACHE = {}\n" * 30)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    first = git(root, "rev-parse", "HEAD")
    opened = write(
        root,
        "Memory files are written atomically",
        "Every write goes to a **temp file**, is `fsync`ed and then `os.replace`d over the old "
        "file, so a crash leaves the old or the new version, never half of one.\n\n"
        "- the directory is fsynced too\n- readers never take the lock\n\n"
        "See `src/store.py`.",
        "2026-11-20T09:12:00Z",
        keywords=["atomic write", "fsync", "crash safety"],
        applies_to="file:src/store.py",
        commit=first,
        branch="main",
        files=["src/store.py"],
    )
    write(
        root,
        "Cache lives in legacy_cache.CACHE",
        "The process-wide cache is a module dict in `src/legacy_cache.py`; clear it between tests.",
        "2026-11-18T14:30:00Z",
        commit=first,
        branch="main",
        files=["src/legacy_cache.py"],
    )
    write(
        root,
        "Duplicates are refused by content hash",
        "Creating a memory whose body hash "
        "already exists returns the existing memory instead of writing a second file.",
        "2026-11-19T10:00:00Z",
        commit=first,
        branch="main",
    )
    write(
        root,
        "Duplicate memories are refused by their content hash",
        "Creating a memory "
        "whose body hash already exists returns the existing one rather than writing a "
        "second file.",
        "2026-11-21T16:45:00Z",
        commit=first,
        branch="feature/dedup",
    )
    session = "4f0c1d2e-8a9b-4c3d-9e8f-7a6b5c4d3e2f"
    write(
        root,
        "Run the slow tests with -m slow",
        "The browser and daemon tests are marked "
        "`slow`; CI runs them, locally use `pytest -m slow tests/web/test_web_browser.py`.",
        "2026-11-22T11:05:00Z",
        review="unreviewed",
        session=session,
        branch="main",
        files=["pyproject.toml"],
    )
    write(
        root,
        "Hooks must exit 0 within the deadline",
        "A hook that fails prints nothing and exits 0; the failure goes to recall.log.",
        "2026-11-22T11:07:00Z",
        review="unreviewed",
        session=session,
        branch="main",
    )
    write(
        root,
        "Search answers from the files when the index is missing",
        "Without LanceDB "
        "the query falls back to word match and fuzzy matching over subjects and keywords.",
        "2026-11-17T08:00:00Z",
        applies_to="area:search",
        branch="main",
        commit=first,
    )
    (root / "src" / "legacy_cache.py").unlink()
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "drop the legacy cache")
    return opened


def shoot(out: Path, *, dark: bool = False) -> list[Path]:
    shots = []
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp) / "demo"
        opened = demo_repository(root)
        with serving_viewer(root) as url:
            driver = make_driver(Path(temp) / "profile", width=1280, height=820, dark=dark)
            try:
                driver.get(url)
                for name, (route, ready) in VIEWS.items():
                    driver.get(url + (route or f"#/m/{opened}"))
                    wait_for(lambda r=ready: driver.find_elements("css selector", r))
                    wait_for(lambda: driver.execute_script("return document.body.dataset.ready"))
                    driver.execute_script("document.activeElement.blur(); window.scrollTo(0, 0)")
                    path = out / (f"{name}-dark.png" if dark else f"{name}.png")
                    driver.save_screenshot(str(path))
                    shots.append(path)
                    if dark:
                        break  # one dark view shows the theme
            finally:
                driver.quit()
    return shots


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args()
    reason = missing_browser()
    if reason:
        print(f"cannot take screenshots: {reason}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    for path in [*shoot(args.out), *shoot(args.out, dark=True)]:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
