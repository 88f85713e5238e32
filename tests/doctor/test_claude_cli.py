"""`doctor` says "claude cli: not on PATH" as a warning when extraction runs it
(enabled, extractor = claude), as information otherwise."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from local_recall.doctor import check_claude_cli
from local_recall.repo.config import ExtractionConfig


def _status(config: ExtractionConfig | None, found: str | None = None) -> tuple[str, str]:
    (check,) = check_claude_cli(lambda name: found, config)
    return check.status, check.detail


def test_missing_claude_is_a_warning_only_when_extraction_runs_it(tmp_path: Path) -> None:
    runs_it = ExtractionConfig()  # the default: enabled, extractor = claude
    status, detail = _status(runs_it)
    assert status == "warn" and "not on PATH" in detail and "nothing is extracted" in detail
    assert _status(runs_it, "/usr/bin/claude") == ("ok", "found at /usr/bin/claude")
    assert _status(replace(runs_it, extractor="codex"))[0] == "ok"
    assert _status(replace(runs_it, enabled=False))[0] == "ok"
    assert _status(None)[0] == "ok"  # no readable config: nothing to say about extraction
    script = tmp_path / "claude"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert _status(replace(runs_it, claude_path=str(script)))[0] == "ok"
    gone = _status(replace(runs_it, claude_path=str(tmp_path / "nope")))
    assert gone[0] == "warn" and "not an executable file" in gone[1]
