"""A warm CLI: with the daemon running, `search`, `list` and `why` are answered through
its socket (cli/warm.py) with the same hits, rows and output as the CLI's own process; without
it, the CLI answers itself and says once that a search loads the model. Real daemon, real
subprocesses, real index."""

from __future__ import annotations

import io
import json
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from local_recall.cli.warm import NOTICE_MARK, parse_args, run_warm
from local_recall.recall import Recall
from local_recall.settings import Settings
from tests.conftest import git_init
from tests.daemon_runs import daemon_env, lr, status_json, stop_and_reap, wait_for

SEARCHES = [
    ("search", "why do we use filelock", "--json"),
    ("search", "why do we use filelock"),
    ("search", "filelock", "--mode", "text", "-n", "2", "--json"),
    ("search", "parser", "--scope", "file:src/parser.py", "--no-global", "--json"),
    ("search", "parser", "--min-score=0.1", "--kind", "episodic"),
]
UNREACHABLE_EMBEDDER = {
    "LOCAL_RECALL_EMBEDDER_PROVIDER": "ollama",
    "LOCAL_RECALL_EMBEDDER_OLLAMA_HOST": "http://127.0.0.1:9",
}
WHYS = [("why", "why do we use filelock?"), ("why", "why do we use filelock?", "--json")]
LISTS = [
    ("list", "--json"),
    ("list",),
    ("list", "--scope", "file:src/parser.py", "--newest-first", "-n", "1", "--json"),
    ("list", "-k", "locks", "--json"),
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    repo = git_init(tmp_path_factory.mktemp("warm") / "repo")
    (repo / "src").mkdir()
    (repo / "src" / "parser.py").write_text("x = 1\n")
    env = daemon_env(repo)
    assert lr(repo, "init", "--no-claude", env=env).returncode == 0
    memories = [
        ("Use filelock for dedup", "Two sessions race on one file.", "global", "locks"),
        ("Parser drops BOMs", "The parser strips a UTF-8 BOM first.", "file:src/parser.py", "bom"),
        ("Release checklist", "Bump, tag, push, publish.", "global", "release"),
    ]
    # The store and index this test reads, made through the library in this process: what is
    # tested is how they are answered, cold and warm, not `add` or `index` (tested elsewhere),
    # and three `add` processes and an `index` one each paid seconds of start-up.
    recall = Recall.open(settings=Settings(root=repo, environ=env))
    for subject, body, scope, keyword in memories:
        recall.add(subject, body, keywords=[keyword], scope=scope, source="cli")
    (repo / "local-recall" / "episodic-memory" / "hand written.md").write_text("no frontmatter")
    recall.sync_index()
    yield repo
    stop_and_reap(repo)


def cli(
    repo: Path, *args: str, extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "local_recall", *args],
        capture_output=True,
        text=True,
        env={**daemon_env(repo), **(extra or {})},
        cwd=repo / "src",
        timeout=120,
        check=False,
    )


@pytest.mark.slow  # nine cold CLI runs (each loads the model) before the daemon starts
def test_the_daemon_answers_with_what_the_cli_itself_prints(served: Path) -> None:
    commands = [*SEARCHES, *LISTS, *WHYS]
    cold = {args: cli(served, *args) for args in commands}
    for args, done in cold.items():
        assert done.returncode == 0, (args, done.stderr)
        assert run_warm(list(args), daemon_env(served), served) is None  # no daemon yet
    assert lr(served, "daemon", "start").returncode == 0
    wait_for(lambda: status_json(served).get("state") == "running")
    for args in commands:
        out, err = io.StringIO(), io.StringIO()
        assert run_warm(list(args), daemon_env(served), served / "src", out, err) == 0, args
        assert out.getvalue() == cold[args].stdout, args
        # An embedder the CLI's own process cannot reach: only the daemon (started with the
        # default one) can give the cold output, so the same output means the daemon answered.
        warm = cli(served, *args, extra=UNREACHABLE_EMBEDDER)
        assert warm.stdout == cold[args].stdout, args
        # the skipped hand-written file is named on both paths; the model notice only cold
        if args[0] != "why":
            assert "hand written.md" in err.getvalue() and "hand written.md" in warm.stderr
        assert "loads the embedding model" not in warm.stderr
    hits = json.loads(cold[SEARCHES[0]].stdout)
    assert hits and hits[0]["subject"] == "Use filelock for dedup"
    explained = json.loads(cold[WHYS[1]].stdout)
    assert explained["injected"] == [hits[0]["id"]]  # the daemon computed the same tiers
    assert "result: 1 in full" in cold[WHYS[0]].stdout
    scoped = json.loads(cold[SEARCHES[3]].stdout)
    assert [h["subject"] for h in scoped] == ["Parser drops BOMs"]


def test_without_a_daemon_the_model_notice_is_said_once(tmp_path: Path) -> None:
    """To a person (stderr a terminal: a pty here), once per repository; never to a pipe."""
    repo = git_init(tmp_path / "repo")
    (repo / "src").mkdir()
    env = daemon_env(repo)
    assert lr(repo, "init", "--no-claude", env=env).returncode == 0
    assert lr(repo, "add", "-s", "Use filelock", "-b", "Sessions race.", env=env).returncode == 0
    piped = cli(repo, "search", "filelock")
    assert piped.returncode == 0 and "loads the embedding model" not in piped.stderr
    first, second = on_a_terminal(repo, "search", "filelock"), on_a_terminal(repo, "search", "x")
    assert "no daemon is running, so this search loads the embedding model" in first
    assert "loads the embedding model" not in second
    assert (repo / "local-recall" / "state" / NOTICE_MARK).exists()


def on_a_terminal(repo: Path, *args: str) -> str:
    """What `local-recall ARGS` writes to stderr when stderr is a terminal."""
    import os
    import pty

    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "local_recall", *args],
            stdout=subprocess.PIPE,
            stderr=follower,
            env=daemon_env(repo),
            cwd=repo,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks).decode("utf-8", "replace")
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["search", "q"], (None, "search", {"query": "q"})),
        (["--root", "/r", "search", "q", "--json"], ("/r", "search", {"query": "q", "json": True})),
        (
            ["--root=/r", "list", "-k", "a", "-n", "3"],
            ("/r", "list", {"keyword": "a", "limit": "3"}),
        ),
        (
            ["search", "--scope=file:a.py", "--", "-q"],
            (None, "search", {"scope": "file:a.py", "query": "-q"}),
        ),
        (
            ["list", "--newest-first", "--no-global"],
            (None, "list", {"newest_first": True, "no_global": True}),
        ),
        (
            ["why", "how do I run tests?"],
            (None, "why", {"prompt": "how do I run tests?", "json": False}),
        ),
        (["why", "--json", "q"], (None, "why", {"prompt": "q", "json": True})),
    ],
)
def test_parse_args_takes_the_common_forms(args: list[str], expected: object) -> None:
    assert parse_args(args) == expected


@pytest.mark.parametrize(
    "args",
    [
        ["search", "q", "--org"],
        ["search", "q", "--help"],
        ["search"],
        ["search", "a", "b"],
        ["search", "q", "--newest-first"],
        ["list", "--since", "2025-01-01"],
        ["list", "extra"],
        ["list", "-n"],
        ["show", "list"],
        ["why"],
        ["why", "a", "b"],
        ["why", "q", "--help"],
        [],
    ],
)
def test_anything_else_is_left_to_the_full_cli(args: list[str]) -> None:
    assert parse_args(args) is None


def test_the_limit_matches_the_search_contract() -> None:
    from local_recall.cli import warm
    from local_recall.search.limits import MAX_LIMIT

    assert warm.MAX_LIMIT == MAX_LIMIT  # warm.py keeps its own copy to stay light


def test_a_closed_pipe_is_no_traceback(tmp_path: Path) -> None:
    """`local-recall list --json | true` through the daemon (the reader gone first), as
    through the full CLI."""
    from local_recall.recall import Recall
    from local_recall.settings import Settings

    repo = git_init(tmp_path / "repo")
    env = daemon_env(repo)
    assert lr(repo, "init", "--no-claude", env=env).returncode == 0
    recall = Recall.open(settings=Settings(root=repo, environ=env))
    for n in range(50):
        recall.add(f"Filler memory number {n} about nothing much", "Filler body.")
    assert lr(repo, "daemon", "start", env=env).returncode == 0
    try:
        wait_for(lambda: status_json(repo).get("state") == "running")
        assert run_warm(["list"], env, repo, io.StringIO(), io.StringIO()) == 0
        done = subprocess.run(
            f"{shlex.quote(sys.executable)} -m local_recall list --json | true",
            shell=True,
            capture_output=True,
            text=True,
            env=env,
            cwd=repo,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0 and done.stderr == "", done.stderr
    finally:
        stop_and_reap(repo)
