"""`local-recall scan`: reports secrets in memory files by path, line and kind, never the value."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

from tests.conftest import CliRunner

# Assembled at import time so this file itself holds no scannable token.
_RNG = random.Random(3)
_BODY = "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(93))
ANTHROPIC_KEY = "sk-ant-" + "api03-" + _BODY + "AA"


def test_scan_clean_repo_exits_zero(cli: CliRunner) -> None:
    cli("add", "-s", "Clean", "-b", "nothing secret here", "-k", "x")
    result = cli("scan")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""


def test_scan_reports_a_hand_committed_secret_without_printing_it(
    cli: CliRunner, repo: Path
) -> None:
    memory_id = cli("add", "-s", "Deploy notes", "-b", "deploy with make", "-k", "x").stdout.strip()
    path = repo / "local-recall" / "episodic-memory" / f"{memory_id}.md"
    # a person edits the file by hand and pastes a key (the write path would have redacted it)
    path.write_text(path.read_text() + f"\nuse key {ANTHROPIC_KEY}\n")
    result = cli("scan")
    assert result.returncode == 1
    assert f"{path}:" in result.stdout and "anthropic" in result.stdout
    assert ANTHROPIC_KEY not in result.stdout + result.stderr
    rows = json.loads(cli("scan", "--json", str(path)).stdout)
    assert rows == [{"path": str(path), "line": rows[0]["line"], "kind": rows[0]["kind"]}]
    assert path.read_text().count(ANTHROPIC_KEY) == 1  # scan never modifies files


def test_scan_of_a_missing_path_is_a_clear_error(cli: CliRunner) -> None:
    result = cli("scan", "does/not/exist.md")
    assert result.returncode == 1 and "no such file" in result.stderr
