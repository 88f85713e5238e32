"""What the terminal says, with and without the daemon: a search that matches nothing says so on
stderr (stdout stays for results, `--json` keeps its `[]`), and a config.toml broken while the
daemon runs (a second `[learning]` table appended after the one `init` writes) is reported by
`search`, `list` and `why` with the same line and exit code as without it — the warm path used
to answer through the daemon without a word. A real daemon, the real CLI."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from local_recall.recall import Recall
from local_recall.repo.toml_errors import toml_error_detail
from local_recall.settings import Settings
from tests.conftest import git_init
from tests.daemon_runs import daemon_env, lr, status_json, stop_and_reap, wait_for

NO_MATCH = ("search", "zebra quantum", "--mode", "text")
BROKEN_TABLE = "\n[learning]\ncalibrate = true\n"
COMMANDS = [NO_MATCH, ("search", "filelock"), ("list",), ("why", "why do we use filelock?")]
# Only the daemon (started with the default embedder) can answer a semantic search with this:
# the same output then means the daemon answered.
UNREACHABLE_EMBEDDER = {
    "LOCAL_RECALL_EMBEDDER_PROVIDER": "ollama",
    "LOCAL_RECALL_EMBEDDER_OLLAMA_HOST": "http://127.0.0.1:9",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = git_init(tmp_path_factory.mktemp("said") / "repo")
    env = daemon_env(root)
    assert lr(root, "init", "--no-claude", env=env).returncode == 0
    recall = Recall.open(settings=Settings(root=root, environ=env))
    recall.add("Use filelock for dedup", "Two sessions race on one file.", keywords=["locks"])
    recall.sync_index()
    yield root
    stop_and_reap(root)


def _cli(
    root: Path, *args: str, extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "local_recall", *args],
        capture_output=True,
        text=True,
        env={**daemon_env(root), **(extra or {})},
        cwd=root,
        timeout=120,
        check=False,
    )


def test_nothing_matched_and_a_broken_config_read_the_same_warm_and_cold(repo: Path) -> None:
    config = repo / "local-recall" / "config.toml"
    good = config.read_text()
    assert "\n[learning]\n" in good  # the table init writes (its keys commented)
    cold_none = _cli(repo, *NO_MATCH)
    assert cold_none.returncode == 0 and cold_none.stdout == ""
    assert cold_none.stderr.strip().splitlines() == ['no memory matched "zebra quantum"']
    as_json = _cli(repo, *NO_MATCH, "--json")
    assert as_json.stdout == "[]\n" and "no memory matched" not in as_json.stderr
    config.write_text(good + BROKEN_TABLE)
    cold = {args: _cli(repo, *args) for args in COMMANDS}
    for args, done in cold.items():
        assert done.returncode == 1 and done.stdout == "", (args, done)
        (line,) = done.stderr.strip().splitlines()
        assert "Cannot declare ('learning',) twice" in line, line
    config.write_text(good)
    assert lr(repo, "daemon", "start").returncode == 0
    wait_for(lambda: status_json(repo).get("state") == "running")
    warm_none = _cli(repo, *NO_MATCH, extra=UNREACHABLE_EMBEDDER)
    assert (warm_none.returncode, warm_none.stdout, warm_none.stderr) == (
        0,
        "",
        cold_none.stderr,
    )
    hit = _cli(repo, "search", "filelock", extra=UNREACHABLE_EMBEDDER)
    assert "Use filelock for dedup" in hit.stdout and "no memory matched" not in hit.stderr
    config.write_text(good + BROKEN_TABLE)  # broken while the daemon runs
    for args in COMMANDS:
        warm = _cli(repo, *args)
        assert (warm.returncode, warm.stdout, warm.stderr) == (
            cold[args].returncode,
            cold[args].stdout,
            cold[args].stderr,
        ), args
    doctor = lr(repo, "doctor")
    assert doctor.returncode == 1
    said = [line for line in doctor.stdout.splitlines() if "Cannot declare" in line]
    assert len(said) == 1 and said[0].startswith("[FAIL] config:"), doctor.stdout
    assert "is `[learning]`, already declared at line" in said[0]
    config.write_text(good)


def test_a_toml_error_names_its_line_and_the_first_declaration() -> None:
    text = "[search]\nx = 1\n\n[learning]\n# calibrate = false\n\n[learning]\ncalibrate = true\n"
    message = "Cannot declare ('learning',) twice (at line 7, column 10)"
    assert toml_error_detail(text, message) == (
        f"{message}: line 7 is `[learning]`, already declared at line 4: keep one [learning] table"
    )
    other = "Cannot overwrite a value (at line 2, column 4)"
    assert toml_error_detail("x = 1\nx = 2\n", other) == f"{other}: line 2 is `x = 2`"
    assert toml_error_detail("", "Invalid value (at end of document)") == (
        "Invalid value (at end of document)"
    )
