"""Provenance (commit, branch, session, files) and review (unreviewed, accept, reject), from the
pure rules to the real CLI in a real git repository; and `local-recall check` on staged files."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from local_recall.capture.extraction.prompt import CandidateMemory
from local_recall.capture.provenance import chunk_files, memory_files
from local_recall.capture.report import Tally
from local_recall.capture.transcripts.model import ToolCall, Turn
from local_recall.capture.writer import MemoryWriter
from local_recall.context.notes import Note
from local_recall.context.prompt import hit_block
from local_recall.context.session import index_line
from local_recall.errors import InvalidMemoryFile, MemoryNotFound
from local_recall.lifecycle.commit_check import check_text, is_memory_path
from local_recall.lifecycle.provenance import current_head, parse_rev_parse
from local_recall.lifecycle.rejections import read_rejections
from local_recall.memory.format import parse_memory_text, render_memory
from local_recall.memory.model import Provenance, conflict_line, content_hash, repo_relative
from local_recall.memory.store import MemoryStore
from local_recall.recall import Recall
from local_recall.settings import Settings
from tests.conftest import CliRunner, clean_env, git_init
from tests.waiting import Ceiling

ID = "0b5c1e9e-8a57-4b8e-9a39-2f1c8f1f7a10"
SHA = "8173ef8a9e2b3c4d5e6f708192a3b4c5d6e7f809"
WHEN = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
WHEN2 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
WHEN3 = datetime(2026, 3, 3, 12, 0, tzinfo=UTC)


def _file(extra: str = "", body: str = "Body text.") -> str:
    return (
        f"---\nid: {ID}\nsubject: A subject\noccurred_at: '2026-03-01T12:00:00Z'\n{extra}---\n"
        f"{body}\n"
    )


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def _recall(root: Path) -> Recall:
    return Recall.open(settings=Settings(root=root, environ=clean_env()))


def _commit_all(repo: Path, message: str = "c") -> str:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", message, "--allow-empty")
    return _git(repo, "rev-parse", "HEAD").strip()


# --- the file format ------------------------------------------------------------------------


def test_provenance_keys_round_trip_and_are_optional() -> None:
    path = Path(f"{ID}.md")
    bare = parse_memory_text(_file(), path)
    assert (bare.commit, bare.branch, bare.session, bare.files, bare.unreviewed) == (
        None,
        None,
        None,
        (),
        False,
    )
    assert "commit" not in render_memory(bare) and "review" not in render_memory(bare)
    text = _file(
        f"commit: {SHA}\nbranch: feature/x\nsession: s-1\nfiles:\n- src/a.py\n- ./docs//b.md\n"
        "review: unreviewed\n"
    )
    memory = parse_memory_text(text, path)
    assert memory.commit == SHA and memory.branch == "feature/x" and memory.session == "s-1"
    assert memory.files == ("src/a.py", "docs/b.md") and memory.unreviewed
    again = parse_memory_text(render_memory(memory), path)
    assert again == memory
    rendered = render_memory(memory)
    assert "review: unreviewed" in rendered and f'commit: "{SHA}"' in rendered
    assert memory.to_json()["unreviewed"] is True and memory.to_json()["files"] == [
        "src/a.py",
        "docs/b.md",
    ]
    accepted = render_memory(
        parse_memory_text(text.replace("review: unreviewed\n", "review: reviewed\n"), path)
    )
    assert "review" not in accepted  # anything but "unreviewed" is reviewed


def test_all_digit_commit_reads_as_text() -> None:
    memory = parse_memory_text(_file("commit: 12345678\n"), Path(f"{ID}.md"))
    assert memory.commit == "12345678"


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        ("commit: --output=/tmp/x\n", "commit"),  # would be an option to `git diff`
        ("commit: [a, b]\n", "commit"),
        ("files:\n- ../outside.py\n", "files"),
        ("files:\n- /etc/passwd\n", "files"),
        ("files: src/a.py\n", "files"),
        ("branch: 'a\\nb'\n".replace("'", '"'), "branch"),
    ],
)
def test_bad_provenance_makes_the_file_invalid(extra: str, reason: str) -> None:
    with pytest.raises(InvalidMemoryFile, match=reason):
        parse_memory_text(_file(extra), Path(f"{ID}.md"))


def test_conflict_markers_are_recognised_outside_code_fences() -> None:
    conflicted = (
        f"---\nid: {ID}\n<<<<<<< HEAD\nsubject: Ours\n=======\nsubject: Theirs\n"
        ">>>>>>> other\noccurred_at: '2026-03-01T12:00:00Z'\n---\nBody.\n"
    )
    assert conflict_line(conflicted) == 3
    with pytest.raises(InvalidMemoryFile, match="unresolved merge conflict"):
        parse_memory_text(conflicted, Path(f"{ID}.md"))
    explained = "How to read a conflict:\n```\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> b\n```"
    assert conflict_line(explained) is None
    assert parse_memory_text(_file(body=explained), Path(f"{ID}.md")).body == explained
    assert conflict_line("a\n<<<<<<< HEAD\nno closing marker\n") is None
    assert conflict_line("=======\nsetext heading underline\n") is None


def test_repo_relative_paths() -> None:
    assert repo_relative("/r/src/a.py", "/r") == "src/a.py"
    assert repo_relative("/r/./src//b/../a.py", "/r") == "src/a.py"
    assert repo_relative("/other/a.py", "/r") is None
    assert repo_relative("/r2/a.py", "/r") is None  # a sibling with the same prefix
    assert repo_relative("/r/src/very-long-na…", "/r") is None  # cut by the parser
    assert repo_relative("src/", "/r") is None
    assert repo_relative("../a.py") is None and repo_relative("a.py") == "a.py"


# --- provenance at creation -----------------------------------------------------------------


def _turn(uuid: str, *calls: tuple[str, str]) -> Turn:
    return Turn(
        uuid=uuid,
        role="assistant",
        timestamp=WHEN,
        text="",
        tool_calls=tuple(ToolCall(name, arg) for name, arg in calls),
    )


def test_chunk_files_are_repo_relative_changed_first_and_from_the_chunk_only() -> None:
    turns = [
        _turn("t0", ("Edit", "/r/old.py")),  # context turn: not part of the chunk
        _turn("t1", ("Read", "/r/src/a.py"), ("Bash", "ls /r/src"), ("Read", "/elsewhere/x")),
        _turn("t2", ("Edit", "/r/src/b.py"), ("Read", "/r/local-recall/episodic-memory/x.md")),
        _turn("t3", ("Write", "/r/src/a.py"), ("Grep", "pattern")),
    ]
    assert chunk_files(turns, ["t1", "t2", "t3"], "/r") == ("src/b.py", "src/a.py")
    assert memory_files(("src/b.py", "src/a.py"), "a.py retries on EINTR") == ("src/a.py",)
    assert memory_files(("src/b.py", "src/a.py"), "nothing named") == ("src/b.py", "src/a.py")


def test_parse_rev_parse() -> None:
    assert parse_rev_parse(f"{SHA}\nrefs/heads/feature/x\n") == Provenance(SHA, "feature/x")
    assert parse_rev_parse(f"{SHA}\nHEAD\n") == Provenance(SHA, None)  # detached
    assert parse_rev_parse("HEAD\n") == Provenance()


def test_saves_record_commit_and_branch_of_a_real_repo(tmp_path: Path) -> None:
    root = git_init(tmp_path / "repo")
    recall = _recall(root)
    recall.init()
    unborn = recall.add("Before any commit", "No commit yet.")
    assert unborn.commit is None and unborn.branch is None  # nothing known: keys absent
    _git(root, "checkout", "-qb", "feature/x")
    head = _commit_all(root)
    memory = recall.add("After a commit", "Now there is one.")
    assert (memory.commit, memory.branch, memory.unreviewed) == (head, "feature/x", False)
    assert f'commit: "{head}"' in memory.path.read_text()  # type: ignore[union-attr]
    assert current_head(tmp_path / "not-a-repo") == Provenance()
    (root / "sub").mkdir()  # no .git here: asked of git itself
    assert current_head(root / "sub") == Provenance(head, "feature/x")
    _git(root, "checkout", "-q", "--detach")
    assert current_head(root) == Provenance(head, None)
    _git(root, "checkout", "-q", "feature/x")
    agent = recall.save("From the agent", "An agent saved it.", source="mcp", reviewed=False)
    assert agent.memory.unreviewed


def test_pipeline_writes_unreviewed_with_provenance_and_skips_rejected(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem", tmp_path / "state", new_id=lambda: ID)
    thinking = MemoryStore(tmp_path / "think", tmp_path / "state", kind="thinking", new_id=str)
    rejected_body = "The deploy script needs bash 5."
    calls: list[str] = []

    def head() -> Provenance:
        calls.append("git")
        return Provenance(SHA, "main")

    tally = Tally()
    writer = MemoryWriter(
        store,
        thinking,
        tally,
        near_duplicate_threshold=0.9,
        thinking_enabled=False,
        head=head,
        rejected_hashes=lambda: frozenset({content_hash(rejected_body)}),
    )
    dropped = writer.write_candidate(
        CandidateMemory("Deploy needs bash", rejected_body, (), "global"), WHEN, "transcript:s"
    )
    assert dropped is None and tally.rejected == 1 and not list((tmp_path / "mem").glob("*.md"))
    written = writer.write_candidate(
        CandidateMemory("Retry EINTR in a.py", "reads retry on EINTR", (), "global"),
        WHEN,
        "transcript:s",
        "session-1",
        ("src/b.py", "src/a.py"),
    )
    memory = store.get(written or "")
    assert memory.unreviewed and memory.commit == SHA and memory.branch == "main"
    assert memory.session == "session-1" and memory.files == ("src/a.py",)
    assert "review: unreviewed" in (tmp_path / "mem" / f"{ID}.md").read_text()
    assert calls == ["git"]  # once per pass, not once per memory


# --- review -----------------------------------------------------------------------------------


def test_accept_and_reject(repo: Path) -> None:
    recall = _recall(repo)
    first = recall.save("First", "The first body.", reviewed=False, occurred_at=WHEN).memory
    second = recall.save("Second", "The second body.", reviewed=False).memory
    person = recall.add("A person's", "A person wrote this.")
    assert [m.id for m in recall.unreviewed()] == [first.id, second.id]
    _commit_all(repo)

    accepted = recall.accept([first.id, person.id])
    assert [m.unreviewed for m in accepted] == [False, False]
    diff = _git(repo, "diff", "--numstat")
    assert diff.split()[:2] == ["0", "1"] and len(diff.splitlines()) == 1  # one line removed
    assert [m.id for m in recall.unreviewed()] == [second.id]

    with pytest.raises(MemoryNotFound):
        recall.reject([second.id, "6b0c2b8e-0000-4000-8000-000000000000"])
    assert second.path is not None and second.path.exists()  # nothing changed

    gone = recall.reject([second.id, person.id])  # a reviewed memory can be rejected too
    assert {m.id for m in gone} == {second.id, person.id}
    assert not second.path.exists()
    assert read_rejections(recall.rejected_path) == {second.content_hash, person.content_hash}
    assert recall.unreviewed() == []


def test_init_declares_the_union_merge_driver(tmp_path: Path) -> None:
    root = git_init(tmp_path / "repo")
    (root / "local-recall").mkdir()
    (root / "local-recall" / ".gitattributes").write_text("*.md text")  # a person's line
    report = _recall(root).init()
    assert report.gitattributes_added == ("rejected-hashes.txt merge=union",)
    assert (root / "local-recall" / ".gitattributes").read_text() == (
        "*.md text\nrejected-hashes.txt merge=union\n"
    )
    assert _recall(root).init().gitattributes_added == ()
    attr = _git(root, "check-attr", "merge", "local-recall/rejected-hashes.txt")
    assert attr.strip().endswith("merge: union")


def test_review_cli(cli: CliRunner, repo: Path) -> None:
    recall = _recall(repo)
    a, b, c = (
        recall.save(f"{name} memory", f"{name} body.", reviewed=False, occurred_at=at).memory
        for name, at in (("Alpha", WHEN), ("Beta", WHEN2), ("Gamma", WHEN3))
    )

    refused = cli("review")  # stdin is a pipe, not a terminal
    assert refused.returncode == 1 and "review --list" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    listed = cli("review", "--list")
    assert [line.split()[1] for line in listed.stdout.splitlines()] == [a.id, b.id, c.id]
    rows = json.loads(cli("review", "--json").stdout)
    assert [r["id"] for r in rows] == [a.id, b.id, c.id] and rows[0]["body"] == "Alpha body."
    assert rows[0]["unreviewed"] is True

    assert cli("review", "accept", a.id).returncode == 0
    rejected = cli("review", "reject", b.id, "--json")
    assert json.loads(rejected.stdout) == [{"rejected": b.id, "content_hash": b.content_hash}]
    assert cli("review", "accept").returncode == 1  # neither ids nor --all
    assert cli("review", "accept", "--all").stdout.strip() == "accepted 1 memory"
    assert cli("review", "--list").stdout == ""
    assert read_rejections(recall.rejected_path) == {b.content_hash}
    assert cli("review", "reject", "not-an-id").returncode == 1


def test_review_names_a_look_alike_and_merges_it(cli: CliRunner, repo: Path) -> None:
    """The extractor's rewording of the user's memory once waited in review unflagged."""
    recall = _recall(repo)
    mine = recall.add(
        "Run the tests with pytest via tox",
        "Tests run through tox, which calls pytest; do not run pytest directly.",
        keywords=["tox"],
    )
    theirs = recall.save(
        "Run tests with pytest through tox",
        "The test suite is run with tox, which invokes pytest, rather than calling pytest by hand.",
        keywords=["pytest"],
        reviewed=False,
    ).memory
    other = recall.save("Ruff line length is 100", "Set in pyproject.", reviewed=False).memory

    listed = {line.split()[1]: line for line in cli("review", "--list").stdout.splitlines()}
    assert listed[theirs.id].endswith(f"[looks like {mine.id}]")
    assert "looks like" not in listed[other.id]
    rows = {r["id"]: r for r in json.loads(cli("review", "--json").stdout)}
    assert rows[theirs.id]["looks_like"] == mine.id and rows[other.id]["looks_like"] is None

    refused = cli("review", "merge", other.id)
    assert refused.returncode == 1 and "looks like no other memory" in refused.stderr
    merged = cli("review", "merge", theirs.id[:8], "--json")
    assert json.loads(merged.stdout) == {"kept": [mine.id], "removed": [theirs.id]}
    kept = recall.get(mine.id)
    assert kept.body == mine.body and set(kept.keywords) == {"tox", "pytest"}
    assert [m.id for m in recall.unreviewed()] == [other.id]
    assert read_rejections(recall.rejected_path) == {theirs.content_hash}


def test_interactive_review_in_a_terminal(repo: Path) -> None:
    pty = pytest.importorskip("pty")
    import os
    import select
    import sys
    import time

    recall = _recall(repo)
    keep = recall.save("Keep me", "Keep body.", reviewed=False, occurred_at=WHEN).memory
    drop = recall.save("Drop me", "Drop body.", reviewed=False, occurred_at=WHEN2).memory
    skip = recall.save("Skip me", "Skip body.", reviewed=False, occurred_at=WHEN3).memory
    pid, fd = pty.fork()
    if pid == 0:  # the child: the real CLI on a terminal
        os.chdir(repo)
        os.execve(sys.executable, [sys.executable, "-m", "local_recall", "review"], clean_env())
    output = bytearray()

    def read_until(wanted: bytes, times: int = 1) -> None:
        ceiling = Ceiling()
        while output.count(wanted) < times and not ceiling.passed():
            if select.select([fd], [], [], 0.2)[0]:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:  # the child closed the terminal
                    return
                if not chunk:
                    return
                output.extend(chunk)

    for number, key in enumerate(b"ars", start=1):
        read_until(b"q=quit > ", number)
        time.sleep(0.5)  # click.getchar's switch to raw mode flushes a key typed before it
        os.write(fd, bytes([key]))
    read_until(b"skipped 1")
    os.kill(pid, 9) if b"skipped 1" not in output else os.waitpid(pid, 0)
    text = output.decode()
    assert "Keep me" in text and "Drop body." in text
    assert "accepted 1, edited 0, rejected 1, skipped 1" in text
    assert [m.id for m in recall.unreviewed()] == [skip.id]
    assert not recall.get(keep.id).unreviewed
    assert read_rejections(recall.rejected_path) == {drop.content_hash}


def test_interactive_review_offers_merge_for_a_look_alike(repo: Path) -> None:
    pty = pytest.importorskip("pty")
    import os
    import select
    import sys
    import time

    recall = _recall(repo)
    mine = recall.add(
        "Run the tests with pytest via tox",
        "Tests run through tox, which calls pytest; do not run pytest directly.",
    )
    theirs = recall.save(
        "Run tests with pytest through tox",
        "The test suite is run with tox, which invokes pytest, rather than calling pytest by hand.",
        reviewed=False,
    ).memory
    pid, fd = pty.fork()
    if pid == 0:  # the child: the real CLI on a terminal
        os.chdir(repo)
        os.execve(sys.executable, [sys.executable, "-m", "local_recall", "review"], clean_env())
    output = bytearray()

    def read_until(wanted: bytes) -> None:
        ceiling = Ceiling()
        while wanted not in output and not ceiling.passed():
            if select.select([fd], [], [], 0.2)[0]:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    return
                if not chunk:
                    return
                output.extend(chunk)

    read_until(b"m=merge > ")
    time.sleep(0.5)  # click.getchar's switch to raw mode flushes a key typed before it
    os.write(fd, b"m")
    read_until(b"merged 1")
    os.kill(pid, 9) if b"merged 1" not in output else os.waitpid(pid, 0)
    text = output.decode()
    assert f"looks like {mine.id}: Run the tests with pytest via tox" in text
    assert f"merged into {mine.id}" in text
    assert [m.id for m in recall.list()] == [mine.id]
    assert read_rejections(recall.rejected_path) == {theirs.content_hash}


# --- what the hooks and MCP show ------------------------------------------------------------


def test_unreviewed_notes_are_marked() -> None:
    note = Note(ID, "S", "2026-03-01T00:00:00Z", unreviewed=True)
    assert "[unreviewed]" in hit_block(note) and "[unreviewed]" in index_line(note)
    assert "[unreviewed]" not in hit_block(Note(ID, "S", "2026-03-01T00:00:00Z"))


# --- the commit-time check ------------------------------------------------------------------


def test_check_text() -> None:
    assert check_text(f"{ID}.md", _file()).problems == ()
    assert is_memory_path(f"local-recall/episodic-memory/{ID}.md")
    assert not is_memory_path("local-recall/config.toml") and not is_memory_path("docs/a.md")
    secret = check_text(f"{ID}.md", _file(body="token ghp_" + "a1B2c3D4" * 5))
    assert secret.problems == ("line 6: looks like a secret (github-token)",)
    private = check_text(f"{ID}.md", _file(body="<private>x</private> y"))
    assert private.problems == ("line 6: a <private> span",)


def test_check_refuses_bad_staged_memory_files(cli: CliRunner, repo: Path) -> None:
    recall = _recall(repo)
    good = recall.add("Fine", "A fine memory.")
    _commit_all(repo)
    folder = repo / "local-recall" / "episodic-memory"
    ids = [f"{n}b5c1e9e-8a57-4b8e-9a39-2f1c8f1f7a10" for n in "123"]
    (folder / f"{ids[0]}.md").write_text(
        _file(body="token ghp_" + "a1B2c3D4" * 5).replace(ID, ids[0])
    )
    (folder / f"{ids[1]}.md").write_text(f"---\nid: {ids[1]}\nsubject: [unclosed\n---\nBody\n")
    conflicted = (
        _file()
        .replace(ID, ids[2])
        .replace(
            "subject: A subject\n", "<<<<<<< HEAD\nsubject: A\n=======\nsubject: B\n>>>>>>> x\n"
        )
    )
    (folder / f"{ids[2]}.md").write_text(conflicted)
    assert cli("check").returncode == 0  # nothing staged yet
    good.path.write_text(good.path.read_text().replace("A fine memory.", "Still fine."))  # type: ignore[union-attr]
    _git(repo, "add", "-A")
    (folder / f"{ids[1]}.md").write_text(_file().replace(ID, ids[1]))  # fixed, but not staged
    done = cli("check")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert len(lines) == 3, done.stdout  # one per bad file; the edited good one passes
    by_id = {next(i for i in ids if i in line): line for line in lines}
    assert "secret" in by_id[ids[0]] and "ghp_" not in done.stdout
    assert "YAML" in by_id[ids[1]]  # the staged blob is checked, not the working tree
    assert "unresolved merge conflict" in by_id[ids[2]]
    assert cli("check", str(folder / f"{ids[1]}.md")).returncode == 0  # paths: working tree
    _git(repo, "reset", "-q")
    assert cli("check").returncode == 0


def test_prompt_hook_marks_unreviewed_memories_or_leaves_them_out(repo: Path) -> None:
    from tests.hook_runs import hook_env, prompt_input, run_hook

    recall = _recall(repo)
    recall.save(
        "Dedupe saves under a file lock",
        "Saves are deduplicated by content hash under a cross-process file lock.",
        reviewed=False,
    )

    def prompt() -> bytes:  # each run a session of its own: none saw the memory before
        return prompt_input("how do we dedupe saves under the file lock?", repo)

    shown = run_hook("user-prompt-submit", prompt(), repo)  # no daemon: searched in-process
    assert shown.returncode == 0 and "## Dedupe saves under a file lock [unreviewed]" in (
        shown.context()
    )
    hidden = run_hook(
        "user-prompt-submit",
        prompt(),
        repo,
        env=hook_env(repo, {"LOCAL_RECALL_REVIEW_INJECT_UNREVIEWED": "false"}),
    )
    assert hidden.returncode == 0 and hidden.stdout == ""
    recall.accept([m.id for m in recall.unreviewed()])
    accepted = run_hook(
        "user-prompt-submit",
        prompt(),
        repo,
        env=hook_env(repo, {"LOCAL_RECALL_REVIEW_INJECT_UNREVIEWED": "false"}),
    )
    context = accepted.context()
    assert "## Dedupe saves under a file lock\n" in context and "[unreviewed]" not in context


def test_mcp_saves_are_unreviewed_and_search_rows_say_so(repo: Path) -> None:
    from mcp import Client

    from tests.mcp_session import call, run_session

    person = _recall(repo).add("Retry on EINTR in the reader", "The reader retries on EINTR.")
    config = repo / "local-recall" / "config.toml"
    seen: dict[str, list[dict[str, object]]] = {}

    async def body(client: Client) -> None:
        saved = await call(
            client,
            "save_memory",
            {"subject": "Writer retries EINTR too", "content": "The writer retries on EINTR."},
        )
        seen["saved"] = [saved]
        found = await call(client, "search_memories", {"query": "retries on EINTR"})
        seen["rows"] = found["results"]

    run_session(repo, body)
    saved_id = str(seen["saved"][0]["id"])
    assert _recall(repo).get(saved_id).unreviewed  # the agent is not a person
    rows = {str(row["id"]): row for row in seen["rows"]}
    assert rows[saved_id]["unreviewed"] is True and "unreviewed" not in rows[person.id]

    text = config.read_text()
    assert "# search_unreviewed = true" in text  # init wrote the [review] section, commented
    config.write_text(text.replace("# search_unreviewed = true", "search_unreviewed = false"))

    async def hidden(client: Client) -> None:
        found = await call(client, "search_memories", {"query": "retries on EINTR"})
        seen["hidden"] = found["results"]

    run_session(repo, hidden)
    assert [row["id"] for row in seen["hidden"]] == [person.id]
