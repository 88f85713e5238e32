"""A hook's log line lands in its own repository's log, whatever the process logged before."""

from __future__ import annotations

from pathlib import Path

from local_recall.hooks.answers import log
from local_recall.logs import configure_logging
from local_recall.repo.layout import Layout


def test_an_in_process_hook_logs_into_its_own_repository_after_another_ones(
    tmp_path: Path,
) -> None:
    # An MCP server's prompt hook, or a test worker, runs hooks for one repository after the
    # process logged for another: the line went to the other one's log (a loaded CI run).
    first, second = Layout(tmp_path / "first"), Layout(tmp_path / "second")
    for layout in (first, second):
        layout.recall_dir.mkdir(parents=True)
    configure_logging(first, "INFO")
    log(second, "claude", "INFO", "marker-second-repository")
    log(first, "claude", "INFO", "marker-first-repository")
    assert "marker-second-repository" in second.log_path.read_text(encoding="utf-8")
    assert "marker-second-repository" not in first.log_path.read_text(encoding="utf-8")
    assert "marker-first-repository" in first.log_path.read_text(encoding="utf-8")
