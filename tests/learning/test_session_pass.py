"""The pass notes what each session did with the memories it was shown (capture/session_signals.py),
on real files and git: the session's record in state/sessions/, its transcript, this user's
outcomes in state/, a dispute in the memory's own frontmatter. The extractor is scripted here;
tests/claude_code/test_learning_e2e.py runs the real `claude -p`."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from local_recall.capture.extraction.prompt import ExistingMemory, ExtractionResult
from local_recall.capture.transcripts.project_dirs import encode_project_dir
from local_recall.errors import ExtractionFailed
from local_recall.learning.outcomes import Outcome
from local_recall.learning.shown import ShownLine, session_key
from local_recall.learning.shown_log import append_shown
from local_recall.learning.signals import Verdicts
from local_recall.learning.usage_log import outcomes_path, read_outcomes
from local_recall.recall import Recall
from local_recall.settings import Settings
from tests.capture.test_pipeline import exchange_entries
from tests.conftest import clean_env

AT = "2026-11-28T10:00:00Z"


class Judge:
    """A scripted extractor that can judge what was shown (`reads_shown`), as `claude -p`."""

    reads_shown = True

    def __init__(self, verdicts: Verdicts = Verdicts()) -> None:
        self.verdicts = verdicts._replace(judged=True)  # as read_verdicts reads an answer
        self.shown: list[Sequence[ExistingMemory]] = []

    def extract(
        self,
        condensed: str,
        *,
        context: str = "",
        repo_name: str = "",
        existing: Any = (),
        shown_memories: Sequence[ExistingMemory] = (),
    ) -> ExtractionResult:
        self.shown.append(shown_memories)
        return ExtractionResult((), (), 10, 1, None, self.verdicts)


class Plain:
    """An extractor that cannot judge: the tool calls alone are read."""

    def extract(self, condensed: str, **_: Any) -> ExtractionResult:
        return ExtractionResult((), (), 10, 1, None)


def _world(repo: Path, tmp_path: Path, **env: str) -> Recall:
    home = tmp_path / "home"
    environ = clean_env(
        {
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "LOCAL_RECALL_EXTRACTION_CLAUDE_PATH": str(tmp_path / "no-such-claude"),
            **env,
        }
    )
    return Recall.open(settings=Settings(root=repo, environ=environ))


def _session(recall: Recall, tmp_path: Path, shown: ShownLine, calls: list[dict[str, Any]]) -> str:
    """A finished session whose record says it was shown `shown` and whose transcript made
    `calls` (tool_use inputs by name)."""
    session = str(uuid.uuid4())
    append_shown(recall.layout.state_dir, session, shown)
    content: list[dict[str, Any]] = [
        {"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": args}
        for n, (name, args) in enumerate((c["name"], c["input"]) for c in calls)
    ]
    content.append({"type": "text", "text": "Fixed the pool size in db.py."})
    when = datetime.now(UTC) - timedelta(hours=2)
    entries = exchange_entries(recall.root, session, when, "Why do queries time out?", content)
    folder = tmp_path / "home" / ".claude" / "projects" / encode_project_dir(str(recall.root))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    old = (when - timedelta(hours=1)).timestamp()
    os.utime(path, (old, old))  # quiet: the session is over
    return session


def test_a_followed_pointer_a_disputed_memory_and_an_ignored_one(
    repo: Path, tmp_path: Path
) -> None:
    recall = _world(repo, tmp_path)
    pool = recall.add("Pool size is 10", "The database pool holds 10 connections.").id
    retry = recall.add("Retry limit is 3", "Requests are retried 3 times.").id
    other = recall.add("Logs go to stderr", "The CLI logs to stderr only.").id
    _commit_all(repo, "memories")
    get = {"name": "mcp__local-recall__get_memories", "input": {"ids": [pool[:8]]}}
    session = _session(recall, tmp_path, ShownLine(AT, "p1", (retry, other), (pool,)), [get])
    judge = Judge(Verdicts(frozenset(), {retry: "db.py retries 5 times now"}))

    report = recall.sync_transcripts(extractor=judge)

    assert report.errors == () and report.outcomes_recorded == 3
    (asked,) = judge.shown  # the same call judged what the session was shown
    assert {(m.id, m.subject) for m in asked} == {
        (pool, "Pool size is 10"),
        (retry, "Retry limit is 3"),
        (other, "Logs go to stderr"),
    }
    key = session_key(session)
    assert sorted(read_outcomes(recall.layout)) == sorted(
        [
            Outcome(pool, key, AT, "pointer", "followed"),
            Outcome(retry, key, AT, "full", "disputed", "db.py retries 5 times now"),
            Outcome(other, key, AT, "full", "ignored"),
        ]
    )
    # the disputed one waits for a person (review), the others are as they were
    (held,) = recall.unreviewed()
    assert held.id == retry and held.disputed is not None
    assert held.disputed.reason == "db.py retries 5 times now"
    assert held.disputed.session == key and held.disputed.date == _today()
    assert len(outcomes_path(recall.layout).read_text().splitlines()) == 3
    # outcomes are this user's, in gitignored state: nothing else under local-recall/ moved
    assert not (recall.layout.recall_dir / "usage").exists()
    assert _changed(repo) == {f"local-recall/episodic-memory/{retry}.md"}
    # accepting settles it: both keys leave the file
    recall.accept([retry])
    text = (recall.layout.episodic_dir / f"{retry}.md").read_text()
    assert "disputed" not in text and "review:" not in text


def test_without_a_judging_extractor_the_tool_calls_still_count(repo: Path, tmp_path: Path) -> None:
    recall = _world(repo, tmp_path)
    pool = recall.add("Pool size is 10", "The database pool holds 10 connections.").id
    show = {"name": "Bash", "input": {"command": f"local-recall show {pool}"}}
    _session(recall, tmp_path, ShownLine(AT, "p1", (), (pool,)), [show])
    report = recall.sync_transcripts(extractor=Plain())
    assert report.errors == () and [o.use for o in read_outcomes(recall.layout)] == ["followed"]
    assert recall.unreviewed() == []


def test_signals_off_learns_nothing(repo: Path, tmp_path: Path) -> None:
    recall = _world(repo, tmp_path, LOCAL_RECALL_LEARNING_SIGNALS="false")
    pool = recall.add("Pool size is 10", "The database pool holds 10 connections.").id
    _session(recall, tmp_path, ShownLine(AT, "p1", (pool,), ()), [])
    judge = Judge()
    report = recall.sync_transcripts(extractor=judge)
    assert report.chunks_sent == 1 and report.outcomes_recorded == 0
    assert judge.shown == [()] and not outcomes_path(recall.layout).exists()


def test_disputed_off_asks_nothing_and_marks_nothing(repo: Path, tmp_path: Path) -> None:
    recall = _world(repo, tmp_path, LOCAL_RECALL_LEARNING_DISPUTED="false")
    pool = recall.add("Pool size is 10", "The database pool holds 10 connections.").id
    get = {"name": "mcp__local-recall__get_memories", "input": {"ids": [pool]}}
    _session(recall, tmp_path, ShownLine(AT, "p1", (), (pool,)), [get])
    judge = Judge(Verdicts(frozenset(), {pool: "never asked, so never said"}))
    report = recall.sync_transcripts(extractor=judge)
    assert report.errors == () and judge.shown == [()]  # the model was not asked
    assert [o.use for o in read_outcomes(recall.layout)] == ["followed"]
    assert recall.unreviewed() == []


def _today() -> str:
    return datetime.now(UTC).date().isoformat()


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _changed(repo: Path) -> set[str]:
    """What `git status` shows as changed or new since the last commit (files, not folders)."""
    lines = _git(repo, "status", "--porcelain", "--untracked-files=all").splitlines()
    return {line[3:] for line in lines}


def _commit_all(repo: Path, message: str) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)


def test_one_persons_sessions_on_two_branches_merge_without_a_conflict(
    repo: Path, tmp_path: Path
) -> None:
    """Each session notes its outcomes; nothing tracked but memories changes, so merging the
    two branches conflicts in nothing (a committed per-writer usage file did)."""
    recall = _world(repo, tmp_path)
    pool = recall.add("Pool size is 10", "The database pool holds 10 connections.").id
    retry = recall.add("Retry limit is 3", "Requests are retried 3 times.").id
    _commit_all(repo, "memories")
    base = _git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()
    get = {"name": "mcp__local-recall__get_memories", "input": {"ids": [pool[:8]]}}
    for branch, memory in (("one", pool), ("two", retry)):
        _git(repo, "checkout", "-q", "-b", branch, base)
        _session(recall, tmp_path, ShownLine(AT, "p1", (retry,), (pool,)), [get])
        report = recall.sync_transcripts(extractor=Judge(Verdicts(frozenset({memory}))))
        assert report.errors == () and report.outcomes_recorded == 2
        assert _changed(repo) == set()  # relied on, followed: nothing tracked moved
        _git(repo, "commit", "-q", "--allow-empty", "-m", f"work on {branch}")
    _git(repo, "checkout", "-q", base)
    _git(repo, "merge", "-q", "--no-edit", "one")
    merged = subprocess.run(
        ["git", "merge", "--no-edit", "two"], cwd=repo, capture_output=True, text=True
    )
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert _changed(repo) == set()
    assert len(read_outcomes(recall.layout)) == 4  # both sessions' outcomes, on this machine


def test_a_reason_that_restates_a_secret_is_redacted_before_it_is_written(
    repo: Path, tmp_path: Path
) -> None:
    """The model joins a secret the session saw in two halves and restates it as its reason:
    the memory file (committed) holds the redaction marker, never the secret."""
    from tests.secret_corpus import anthropic_key

    secret = anthropic_key()
    recall = _world(repo, tmp_path)
    retry = recall.add("Retry limit is 3", "Requests are retried 3 times.").id
    _session(recall, tmp_path, ShownLine(AT, "p1", (retry,), ()), [])
    said = f"wrong: the new key is {secret} and\nretries are 5 now " + "x" * 300
    report = recall.sync_transcripts(extractor=Judge(Verdicts(frozenset(), {retry: said})))
    assert report.errors == ()
    text = (recall.layout.episodic_dir / f"{retry}.md").read_text()
    assert secret not in text and secret[:20] not in text and "[REDACTED" in text
    dispute = recall.get(retry).disputed
    assert dispute is not None and len(dispute.reason) <= 200 and "\n" not in dispute.reason
    assert dispute.reason.startswith("wrong: the new key is [REDACTED")
    assert "retries are 5 now" in dispute.reason


class Failing:
    """An extraction call that fails: the model never judged what was shown."""

    reads_shown = True

    def extract(self, condensed: str, **_: Any) -> ExtractionResult:
        raise ExtractionFailed("claude -p exited 1")


def test_a_failed_extraction_notes_no_verdict(repo: Path, tmp_path: Path) -> None:
    recall = _world(repo, tmp_path)
    pool = recall.add("Pool size is 10", "The database pool holds 10 connections.").id
    retry = recall.add("Retry limit is 3", "Requests are retried 3 times.").id
    show = {"name": "Bash", "input": {"command": f"local-recall show {pool}"}}
    _session(recall, tmp_path, ShownLine(AT, "p1", (retry,), (pool,)), [show])
    recall.sync_transcripts(extractor=Failing())
    assert [o.use for o in read_outcomes(recall.layout)] == ["followed"]  # no "ignored"
