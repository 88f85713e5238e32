"""The real `local-recall` process in a real git repository."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from local_recall.recall import Recall
from local_recall.settings import Settings
from tests.conftest import CliRunner, clean_env, git_init
from tests.waiting import Ceiling

MEMORY_DIR = Path("local-recall") / "episodic-memory"


def test_round_trip(cli: CliRunner, repo: Path) -> None:
    added = cli(
        "add",
        "--subject",
        "Use filelock",
        "--keyword",
        "lock",
        "--scope",
        "area:store",
        input="Cross-process create needs a lock.\n",
    )
    assert added.returncode == 0, added.stderr
    memory_id = added.stdout.strip()
    assert (repo / MEMORY_DIR / f"{memory_id}.md").exists()

    again = cli("add", "--subject", "dup", "--body", "Cross-process create needs a lock.")
    assert again.stdout.strip() == memory_id

    listed = json.loads(cli("list", "--json").stdout)
    assert len(listed) == 1
    row = listed[0]
    assert {
        "id",
        "subject",
        "keywords",
        "applies_to",
        "occurred_at",
        "content_hash",
        "path",
    } <= set(row)
    assert row["keywords"] == ["lock"] and row["applies_to"] == "area:store"

    shown = json.loads(cli("show", memory_id, "--json").stdout)
    assert shown["body"] == "Cross-process create needs a lock."
    assert "Cross-process" in cli("show", memory_id).stdout

    edited = cli("edit", memory_id, "--subject", "Use filelock for dedup", "--keyword", "filelock")
    assert edited.returncode == 0, edited.stderr
    shown = json.loads(cli("show", memory_id, "--json").stdout)
    assert shown["subject"] == "Use filelock for dedup" and shown["keywords"] == ["filelock"]

    assert cli("rm", memory_id).returncode == 0
    assert json.loads(cli("list", "--json").stdout) == []


@pytest.mark.parametrize(
    ("args", "stdin", "fragment"),
    [
        (("show", "not-a-uuid"), None, "not a memory id"),
        (("show", "0b9f5f43-6c1e-4b1a-9a57-0c2f0c6b9a10"), None, "no memory with id"),
        (("rm", "../../etc/passwd"), None, "not a memory id"),
        (
            ("add", "--subject", "s", "--scope", "file:/etc/passwd", "--body", "b"),
            None,
            "invalid scope",
        ),
        (("add", "--subject", "s"), "   \n", "body is empty"),
        (("add", "--subject", "", "--body", "b"), None, "subject is empty"),
        (("list", "--since", "last tuesday"), None, "--since"),
        # no flags: the file in $EDITOR, once the memory is found
        (("edit", "0b9f5f43-6c1e-4b1a-9a57-0c2f0c6b9a10"), None, "no memory with id"),
        (("frobnicate",), None, "No such command"),
    ],
)
def test_bad_input_is_one_line_on_stderr(
    cli: CliRunner, args: tuple[str, ...], stdin: str | None, fragment: str
) -> None:
    result = cli(*args, input=stdin)
    assert result.returncode != 0
    assert fragment in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_config_key_is_one_line(cli: CliRunner, repo: Path) -> None:
    (repo / "local-recall" / "config.toml").write_text("[search]\nlimit = 3\n")
    result = cli("list")
    assert result.returncode == 1
    assert "search.limit" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    doctor = cli("doctor")
    assert doctor.returncode == 1 and "search.limit" in doctor.stdout


def test_root_discovery_from_subdirectory_worktree_and_env(
    cli: CliRunner, repo: Path, tmp_path: Path
) -> None:
    memory_id = cli("add", "-s", "S", "-b", "found from anywhere").stdout.strip()
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    assert memory_id in cli("list", cwd=sub).stdout
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert memory_id in cli("list", env={"LOCAL_RECALL_ROOT": str(repo)}, cwd=elsewhere).stdout
    assert memory_id in cli("--root", str(repo), "list", cwd=elsewhere).stdout
    # a git worktree has its own checkout of local-recall/ and is its own root
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "memories"], check=True)
    worktree = tmp_path / "wt"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(worktree)], check=True)
    listed = json.loads(cli("list", "--json", cwd=worktree / "local-recall").stdout)
    assert [row["id"] for row in listed] == [memory_id]
    assert listed[0]["path"].startswith(str(worktree))


def test_gitignore_ignores_derived_files_only(cli: CliRunner, repo: Path) -> None:
    cli("add", "-s", "S", "-b", "body")
    status = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain", "-uall"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    tracked = sorted(line[3:] for line in status.splitlines())
    assert any(p.startswith("local-recall/episodic-memory/") for p in tracked)
    assert "local-recall/config.toml" in tracked and "local-recall/.gitignore" in tracked
    assert not any("/state/" in p or p.endswith(".log") for p in tracked), tracked


def test_doctor_reports_garbage_and_leaves_it_byte_for_byte(cli: CliRunner, repo: Path) -> None:
    cli("add", "-s", "good", "-b", "good")
    garbage = repo / MEMORY_DIR / "0b9f5f43-6c1e-4b1a-9a57-0c2f0c6b9a10.md"
    content = b"---\x00garbage: [\n\xff\xfe not yaml"
    garbage.write_bytes(content)
    result = cli("doctor")
    assert result.returncode == 1
    assert garbage.name in result.stdout
    assert garbage.read_bytes() == content
    assert len(json.loads(cli("list", "--json").stdout)) == 1
    checks = json.loads(cli("doctor", "--json").stdout)
    assert any(c["status"] == "fail" and garbage.name in c["detail"] for c in checks)


def test_help_and_version(cli: CliRunner) -> None:
    help_text = cli("--help").stdout
    for command in ("init", "add", "list", "show", "edit", "rm", "doctor"):
        assert command in help_text
    assert cli("--version").stdout.strip().endswith("0.1.0")


def test_init_in_a_fresh_repo(tmp_path: Path) -> None:
    root = git_init(tmp_path / "fresh")
    proc = subprocess.run(
        [sys.executable, "-m", "local_recall", "init"],
        cwd=root,
        capture_output=True,
        text=True,
        env=clean_env(),
    )
    assert proc.returncode == 0, proc.stderr
    assert (root / "local-recall" / "config.toml").exists()
    assert (root / "local-recall" / "episodic-memory").is_dir()


_ADD_ONE = """
import sys
from local_recall import Recall
result = Recall.open(sys.argv[1]).save("Same", "Twenty processes, one file.", keywords=["dedup"])
print(result.memory.id)
"""


def test_twenty_processes_adding_the_same_memory_leave_one_file(repo: Path) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _ADD_ONE, str(repo)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=clean_env(),
        )
        for _ in range(20)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outputs]
    ids = {out.strip() for out, _ in outputs}
    assert len(ids) == 1
    assert len(list((repo / MEMORY_DIR).glob("*.md"))) == 1


# One process imports local_recall once, then forks a fresh writer per round on each line of its
# stdin, printing the writer's pid and then how it ended. Start-up and the imports of a first add
# (keyword extraction, secret rules: ~2.5 s, all before the first memory the kill waits for) were
# nearly all of each round's time; every writer is still its own OS process that opens the store
# itself and is SIGKILLed in the middle of its add/update loop, as one started afresh would be.
# (Forking after the imports is safe: the only other thread then is numpy's BLAS pool, which
# handles fork.)
_WRITERS = """
import itertools, os, sys, traceback
from local_recall import Recall
from local_recall.memory.keywords import extract_keywords
from local_recall.redaction.secrets import redact_fields
redact_fields(["warm up"]), extract_keywords("warm up")  # pure: imports and compiled rules
for _ in sys.stdin:
    pid = os.fork()
    if pid == 0:
        try:
            recall = Recall.open(sys.argv[1])
            for i in itertools.count():
                m = recall.add(f"memory {i}", f"body {i} " + "x" * (i % 7000))
                recall.update(m.id, body=f"updated {i} " + "y" * (i % 5000))
        finally:
            traceback.print_exc()
            os._exit(1)
    print(pid, flush=True)
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
"""


@pytest.mark.slow
def test_sigkill_during_writes_leaves_no_partial_file(repo: Path) -> None:
    rng = random.Random(7)
    folder = repo / MEMORY_DIR
    server = subprocess.Popen(
        [sys.executable, "-c", _WRITERS, str(repo)],
        env=clean_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        for _ in range(25):
            before = len(list(folder.glob("*.md")))
            server.stdin.write("go\n")
            server.stdin.flush()
            pid = int(server.stdout.readline())
            # Kill while it writes, however long start-up takes on a loaded machine: wait for
            # its first memory, then let it go on for a random moment of its add/update loop.
            ceiling = Ceiling()
            while len(list(folder.glob("*.md"))) == before and not ceiling.passed():
                time.sleep(0.01)
            assert len(list(folder.glob("*.md"))) > before  # it writes: the kill lands mid-loop
            time.sleep(rng.random() * 0.4)
            os.kill(pid, signal.SIGKILL)
            ended = server.stdout.readline().strip()
            assert ended == str(-signal.SIGKILL), ended  # killed mid-loop, not failed
    finally:
        server.kill()
        _, err = server.communicate()
    assert "Traceback" not in err, err
    scan = Recall.open(settings=Settings(root=repo, environ=clean_env())).scan()
    assert scan.problems == ()
    assert len(scan.memories) > 25
    files = list((repo / MEMORY_DIR).glob("*.md"))
    assert len(files) == len(scan.memories)
