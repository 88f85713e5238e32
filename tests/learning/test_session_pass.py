"""The pass notes what each session did with the memories it was shown (capture/learned.py),
on real files and git: the session's record in state/sessions/, its transcript, the committed
usage files. The extractor is scripted here; tests/learning/test_session_cli.py runs the real
`claude -p`."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from local_recall.capture.extraction.prompt import ExistingMemory, ExtractionResult
from local_recall.capture.transcripts.project_dirs import encode_project_dir
from local_recall.context.seen_log import append_shown
from local_recall.learning.outcomes import Outcome
from local_recall.learning.shown import ShownLine, session_key
from local_recall.learning.signals import Verdicts
from local_recall.learning.usage_log import read_outcomes, usage_dir
from local_recall.recall import Recall
from local_recall.settings import Settings
from tests.capture.test_pipeline import exchange_entries
from tests.conftest import clean_env

AT = "2026-11-28T10:00:00Z"


class Judge:
    """A scripted extractor that can judge what was shown (`reads_shown`), as `claude -p`."""

    reads_shown = True

    def __init__(self, verdicts: Verdicts = Verdicts()) -> None:
        self.verdicts = verdicts
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
    assert [m.id for m in recall.unreviewed()] == [retry]
    (written,) = usage_dir(recall.layout).iterdir()  # one file: this writer's
    assert written.suffix == ".jsonl" and len(written.read_text().splitlines()) == 3
    # the session's record is gitignored state; the usage folder is committed
    ignored = recall.layout.gitignore_path.read_text()
    assert "state/" in ignored and "usage" not in ignored


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
    assert judge.shown == [()] and not usage_dir(recall.layout).exists()


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
