"""The MCP server: pure helpers on literals, then the real `local-recall mcp` subprocess driven by
the real MCP client (the SDK's `Client` over stdio)."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from local_recall.errors import InvalidInput
from local_recall.mcp_server.shapes import (
    Anchor,
    check_range,
    memory_row,
    parse_anchor,
    parse_when,
    timeline_window,
)
from local_recall.memory.model import Memory
from local_recall.recall import Recall
from local_recall.search.limits import MAX_LIMIT
from local_recall.settings import Settings
from tests.conftest import clean_env
from tests.cpu_budget import cpu_unit
from tests.hook_runs import children_cpu_seconds
from tests.mcp_session import call, call_error, run_session

ID_A = "00000000-0000-4000-8000-00000000000a"
ID_B = "00000000-0000-4000-8000-00000000000b"
ID_C = "00000000-0000-4000-8000-00000000000c"
ID_D = "00000000-0000-4000-8000-00000000000d"
SESSION_END_NOTE = "Claude Code gives all SessionEnd hooks 1.5 s; start a detached process."
SESSION_END_REWORDED = "All SessionEnd hooks get 1.5 s from Claude Code: start a detached process."


def mem(memory_id: str, day: int, subject: str = "s") -> Memory:
    return Memory(
        id=memory_id,
        subject=subject,
        body="body text",
        keywords=(),
        applies_to="global",
        occurred_at=datetime(2025, 1, day, tzinfo=UTC),
        content_hash="h",
    )


# --- pure helpers ---------------------------------------------------------------------------------


def test_timeline_around_a_memory_includes_it() -> None:
    memories = [mem(ID_C, 3), mem(ID_A, 1), mem(ID_D, 4), mem(ID_B, 2)]
    window, anchor = timeline_window(memories, Anchor(memory_id=ID_C), before=1, after=5)
    assert [m.id for m in window] == [ID_B, ID_C, ID_D]
    assert anchor is not None and anchor.id == ID_C


def test_timeline_around_a_time_splits_at_it() -> None:
    memories = [mem(ID_A, 1), mem(ID_B, 2), mem(ID_C, 3), mem(ID_D, 4)]
    moment = datetime(2025, 1, 3, tzinfo=UTC)
    window, anchor = timeline_window(memories, Anchor(moment=moment), before=2, after=1)
    assert [m.id for m in window] == [ID_A, ID_B, ID_C]
    assert anchor is None
    window, _ = timeline_window(memories, Anchor(moment=moment), before=0, after=0)
    assert window == []


def test_timeline_of_an_unknown_id_is_empty() -> None:
    assert timeline_window([mem(ID_A, 1)], Anchor(memory_id=ID_B), 3, 3) == ([], None)


def test_parse_anchor_accepts_ids_and_times_only() -> None:
    assert parse_anchor(ID_A.upper()) == Anchor(memory_id=ID_A)
    assert parse_anchor("2025-01-03") == Anchor(moment=datetime(2025, 1, 3, tzinfo=UTC))
    with pytest.raises(InvalidInput, match="memory id \\(UUID\\) or an ISO date/time"):
        parse_anchor("../../etc/passwd")


def test_argument_checks_have_clear_messages() -> None:
    assert check_range(5, "limit", 1, 50) == 5
    with pytest.raises(InvalidInput, match="limit must be between 1 and 50, got 0"):
        check_range(0, "limit", 1, 50)
    assert parse_when(None, "since") is None
    with pytest.raises(InvalidInput, match="since: expected an ISO date or time"):
        parse_when("last tuesday", "since")


def test_memory_row_is_compact() -> None:
    assert memory_row(mem(ID_A, 1, "Use filelock")) == {
        "id": ID_A,
        "subject": "Use filelock",
        "date": "2025-01-01T00:00:00Z",
        "scope": "global",
        "tokens": 6,
    }


@pytest.mark.slow
def test_server_start_does_not_import_the_index_or_embedder() -> None:
    """The handshake path: CLI + server built + tools listed, without LanceDB or ONNX."""
    code = (
        "import sys, anyio\n"
        "import local_recall.cli.main\n"
        "from pathlib import Path\n"
        "from local_recall.mcp_server.server import build_server\n"
        "from local_recall.recall import Settings\n"
        "server = build_server(Settings(root=Path('.')))\n"
        "heavy = [m for m in ('lancedb', 'onnxruntime', 'pyarrow') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=clean_env()
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# --- the real server over stdio -----------------------------------------------------------------


def seed(root: Path) -> dict[str, str]:
    recall = Recall.open(settings=Settings(root=root, environ=clean_env()))
    ids = {}
    for day, (subject, body, scope) in enumerate(
        [
            ("Ruff line length is 100", "pyproject sets line-length = 100.", "global"),
            (
                "Use filelock for cross-process dedup",
                "We picked filelock over fcntl because fcntl does not exist on Windows.",
                "file:local_recall/store.py",
            ),
            (
                "Daemon socket path limit",
                "Unix socket paths must stay under 108 bytes.",
                "area:daemon",
            ),
        ],
        start=1,
    ):
        created = recall.save(
            subject, body, scope=scope, occurred_at=datetime(2025, 3, day, 12, tzinfo=UTC)
        )
        ids[subject.split()[0].lower()] = created.memory.id
    return ids


async def check_tools_and_instructions(client: Client) -> None:
    assert client.instructions is not None
    assert "search_memories" in client.instructions
    assert "not instructions" in client.instructions
    assert "Never save secrets" in client.instructions
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert sorted(listed) == sorted(
        [
            "search_memories",
            "get_memories",
            "memory_timeline",
            "recent_memories",
            "session_summaries",
            "save_memory",
            "delete_memory",
        ]
    )
    for name in ("search_memories", "get_memories", "memory_timeline", "recent_memories"):
        hints = listed[name].annotations
        assert hints is not None and hints.read_only_hint is True, name
    save = listed["save_memory"].annotations
    assert save is not None
    assert (save.read_only_hint, save.idempotent_hint, save.destructive_hint) == (
        False,
        True,
        False,
    )
    delete = listed["delete_memory"].annotations
    assert delete is not None and delete.destructive_hint is True
    schema = listed["search_memories"].input_schema
    assert schema["required"] == ["query"]
    assert "description" in schema["properties"]["limit"]
    assert "\n" not in (listed["save_memory"].description or "")


BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("delete_memory", {"id": "../../../etc/passwd"}, "not a memory id"),
    ("delete_memory", {"id": "not-a-uuid"}, "not a memory id"),
    ("search_memories", {"query": "x", "scope": "bogus"}, "invalid scope 'bogus'"),
    ("search_memories", {"query": "x", "scope": "file:../outside"}, "must stay inside the repo"),
    ("search_memories", {"query": "x", "limit": 0}, f"limit must be between 1 and {MAX_LIMIT}"),
    ("search_memories", {"query": "x", "limit": 1000}, f"limit must be between 1 and {MAX_LIMIT}"),
    ("search_memories", {"query": "x", "since": "yesterday"}, "since: expected an ISO date"),
    ("search_memories", {"query": "x" * 5000}, "query is 5000 characters"),
    ("search_memories", {"query": "   "}, "query is empty"),
    ("search_memories", {"query": "x", "limit": "many"}, "limit"),
    ("search_memories", {}, "query"),
    ("get_memories", {"ids": []}, "ids is empty"),
    ("get_memories", {"ids": [ID_A] * 51}, "51 ids given; the limit is 50"),
    ("memory_timeline", {}, "give an anchor"),
    ("memory_timeline", {"anchor": "soon"}, "anchor must be a memory id"),
    ("memory_timeline", {"anchor": ID_A}, f"no memory with id {ID_A}"),
    ("memory_timeline", {"anchor": ID_A, "before": 99}, "before must be between 0 and 20"),
    ("recent_memories", {"scope": "nope:x"}, "invalid scope"),
    ("save_memory", {"subject": "", "content": "x"}, "subject is empty"),
    ("save_memory", {"subject": "s" * 300, "content": "x"}, "the limit is 200"),
    ("save_memory", {"subject": "s", "content": "   "}, "body is empty"),
    (
        "save_memory",
        {"subject": "s", "content": "x", "applies_to": "file:/etc/passwd"},
        "repo-relative path",
    ),
    ("save_memory", {"subject": "s", "content": "x" * 1_100_000}, "the limit is 1000000"),
]


def test_tools_and_bad_arguments_over_stdio(repo: Path, tmp_path: Path) -> None:
    """Tools listed with annotations; every bad argument is a tool error with a message (no
    traceback), nothing is written, and the server keeps serving. Started from another folder:
    LOCAL_RECALL_ROOT is what `.mcp.json` passes."""
    seed(repo)

    async def body(client: Client) -> None:
        await check_tools_and_instructions(client)
        for tool, arguments, expected in BAD_CALLS:
            message = await call_error(client, tool, arguments)
            assert expected in message, (tool, arguments, message)
            assert "Traceback" not in message
        recent = await call(client, "recent_memories", {})
        assert len(recent["memories"]) == 3  # the refused calls wrote nothing

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    unit, cpu = cpu_unit(), children_cpu_seconds()
    run_session(repo, body, cwd=elsewhere)
    # the server's own CPU in units measured now (load stretches both alike): ~500 measured
    # under load, most of it the warm-up loading the model; refusing costs next to nothing
    spent = (children_cpu_seconds() - cpu) / unit
    assert spent < 2500, spent


@pytest.mark.slow  # builds a real index with the embedded MiniLM model (~4 s)
def test_round_trip_save_search_get_timeline_recent_delete(repo: Path) -> None:
    ids = seed(repo)

    async def body(client: Client) -> None:
        saved = await call(
            client,
            "save_memory",
            {
                "subject": "SessionEnd hooks get 1.5 s",
                "content": SESSION_END_NOTE,
                "keywords": ["hooks", "SessionEnd"],
                "applies_to": "area:hooks",
            },
        )
        assert saved["created"] is True
        again = await call(
            client,
            "save_memory",
            {
                "subject": "SessionEnd hooks get 1.5 s",
                "content": SESSION_END_NOTE,
            },
        )
        assert again == {"id": saved["id"], "created": False}
        # the same fact in other words: the existing memory, named
        reworded = await call(
            client,
            "save_memory",
            {
                "subject": "SessionEnd hooks have 1.5 seconds",
                "content": SESSION_END_REWORDED,
            },
        )
        assert reworded == {"id": saved["id"], "created": False, "looks_like": saved["id"]}
        # the same words with another figure: a correction, another fact, written
        corrected = await call(
            client,
            "save_memory",
            {
                "subject": "SessionEnd hooks get 5 s",
                "content": SESSION_END_NOTE.replace("1.5", "5"),
            },
        )
        assert corrected["created"] is True and corrected["id"] != saved["id"]
        await call(client, "delete_memory", {"id": corrected["id"]})

        found = await call(client, "search_memories", {"query": "filelock fcntl windows"})
        rows = found["results"]
        assert rows[0]["id"] == ids["use"]
        assert set(rows[0]) == {"id", "subject", "date", "scope", "score", "tokens"}
        assert rows[0]["scope"] == "file:local_recall/store.py"
        assert 0 < rows[0]["score"] <= 1

        scoped = await call(
            client, "search_memories", {"query": "socket", "scope": "area:daemon", "limit": 5}
        )
        assert ids["daemon"] in [r["id"] for r in scoped["results"]]
        dated = await call(
            client,
            "search_memories",
            {"query": "filelock", "since": "2025-03-03", "until": "2025-03-04"},
        )
        assert ids["use"] not in [r["id"] for r in dated["results"]]

        got = await call(client, "get_memories", {"ids": [ids["use"], ID_A, "../../x"]})
        assert [m["id"] for m in got["memories"]] == [ids["use"]]
        memory = got["memories"][0]
        assert "fcntl does not exist on Windows" in memory["content"]
        assert memory["path"] == f"local-recall/episodic-memory/{ids['use']}.md"
        assert [e["id"] for e in got["errors"]] == [ID_A, "../../x"]
        assert "no memory with id" in got["errors"][0]["error"]
        assert "not a memory id" in got["errors"][1]["error"]

        timeline = await call(
            client, "memory_timeline", {"anchor": ids["use"], "before": 1, "after": 1}
        )
        assert [r["id"] for r in timeline["memories"]] == [ids["ruff"], ids["use"], ids["daemon"]]
        assert timeline["memories"][1]["anchor"] is True
        by_time = await call(
            client, "memory_timeline", {"anchor": "2025-03-02T00:00:00Z", "before": 1, "after": 1}
        )
        assert [r["id"] for r in by_time["memories"]] == [ids["ruff"], ids["use"]]
        by_query = await call(client, "memory_timeline", {"query": "unix socket 108 bytes"})
        assert by_query["anchor"] == {"id": ids["daemon"]}

        recent = await call(client, "recent_memories", {"limit": 2})
        assert [r["id"] for r in recent["memories"]] == [saved["id"], ids["daemon"]]

        deleted = await call(client, "delete_memory", {"id": ids["ruff"]})
        assert deleted == {
            "deleted": ids["ruff"],
            "subject": "Ruff line length is 100",
            "paths": [f"local-recall/episodic-memory/{ids['ruff']}.md"],
        }
        assert not (repo / "local-recall" / "episodic-memory" / f"{ids['ruff']}.md").exists()
        gone = await call_error(client, "delete_memory", {"id": ids["ruff"]})
        assert "no memory with id" in gone

    run_session(repo, body)
    stored = (repo / "local-recall" / "episodic-memory").glob("*.md")
    assert any("source: mcp" in p.read_text() for p in stored)


def test_session_summaries_and_the_timeline_list_them(repo: Path) -> None:
    from local_recall.memory.drafts import make_draft
    from local_recall.memory.model import Provenance

    ids = seed(repo)
    recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
    session = "0b7c2a1e-1111-4222-8333-944455556666"
    draft = make_draft(
        subject="Session: Fix the flaky lock test",
        body="## Request\n\nFix the flaky lock test\n\n## Next steps\n\n- Run the suite",
        keywords=["session summary"],
        applies_to="global",
        occurred_at=datetime(2025, 3, 2, 18, tzinfo=UTC),
        source=f"transcript:{session}",
        provenance=Provenance(branch="feature/x", session=session, files=("src/lock.py",)),
    )
    recall.summaries.put(session, draft)

    async def body(client: Client) -> None:
        found = await call(client, "session_summaries", {"branch": "feature/x"})
        assert [s["session"] for s in found["summaries"]] == [session]
        assert found["summaries"][0]["files"] == ["src/lock.py"]
        assert "Run the suite" in found["summaries"][0]["content"]
        other = await call(client, "session_summaries", {"branch": "main", "limit": 3})
        assert other == {"summaries": []}
        timeline = await call(client, "memory_timeline", {"anchor": session})
        kinds = [(row["id"], row.get("kind")) for row in timeline["memories"]]
        assert (session, "session_summary") in kinds and (ids["use"], None) in kinds
        read = await call(client, "get_memories", {"ids": [session]})
        assert read["memories"][0]["subject"] == "Session: Fix the flaky lock test"
        message = await call_error(client, "session_summaries", {"limit": 0})
        assert "limit" in message

    run_session(repo, body)
