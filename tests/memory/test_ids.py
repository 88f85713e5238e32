"""Memory ids by unique prefix everywhere (as git takes commit ids): the CLI,
the MCP tools and the viewer's API; an ambiguous prefix lists the candidates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.conftest import CliRunner
from tests.mcp_session import call, call_error, run_session

ONE = "09394837-1111-4111-8111-111111111111"
TWO = "0939aaaa-2222-4222-8222-222222222222"
THREE = "7c1d0e52-3333-4333-8333-333333333333"


def write(root: Path, memory_id: str, subject: str) -> None:
    """A memory written by hand, as docs/memory-format.md describes it."""
    path = root / "local-recall" / "episodic-memory" / f"{memory_id}.md"
    path.write_text(
        f"---\nid: {memory_id}\nsubject: {subject}\noccurred_at: 2026-11-01T10:00:00Z\n---\n\n"
        f"{subject}, written by hand.\n",
        encoding="utf-8",
    )


@pytest.fixture
def seeded(repo: Path) -> Path:
    write(repo, ONE, "Timed serializer signs with a timestamp")
    write(repo, TWO, "Signer keys rotate through a list")
    write(repo, THREE, "Tests run with pytest via tox")
    return repo


def test_prefixes_are_pure_decisions() -> None:
    from local_recall.memory.id_prefix import ids_with_prefix, looks_like_prefix

    assert looks_like_prefix("0939") and looks_like_prefix("09394837-11")
    assert not looks_like_prefix("093") and not looks_like_prefix("../x")
    assert not looks_like_prefix("zzzz")
    assert ids_with_prefix("09394837", [ONE, TWO, THREE]) == [ONE]
    assert ids_with_prefix("0939", [ONE, TWO, THREE]) == [ONE, TWO]
    assert ids_with_prefix("093948371111", [ONE, TWO]) == [ONE]  # dashes aside


def test_cli_takes_a_unique_prefix_and_lists_an_ambiguous_one(cli: CliRunner, seeded: Path) -> None:
    shown = cli("show", "09394837")
    assert shown.returncode == 0, shown.stderr
    assert f"id:          {ONE}" in shown.stdout
    assert cli("edit", "7c1d", "--subject", "Tests run with tox").returncode == 0
    assert "Tests run with tox" in cli("show", THREE).stdout
    ambiguous = cli("show", "0939")
    assert ambiguous.returncode != 0
    line = ambiguous.stderr.strip()
    assert "\n" not in line and "ambiguous" in line and ONE in line and TWO in line
    assert "Signer keys rotate" in line
    missing = cli("show", "ffff")
    assert missing.returncode != 0 and "ffff" in missing.stderr
    short = cli("show", "29")  # not "expected a UUID" for a too-short prefix
    assert short.returncode != 0 and "at least 4 of its first hex digits" in short.stderr
    assert "Traceback" not in short.stderr and len(short.stderr.strip().splitlines()) == 1
    assert cli("rm", "0939a").returncode == 0
    assert not (seeded / "local-recall" / "episodic-memory" / f"{TWO}.md").exists()


def test_library_errors_name_the_candidates(seeded: Path) -> None:
    from local_recall.errors import AmbiguousMemoryId, InvalidMemoryId, MemoryNotFound
    from local_recall.recall import Recall
    from local_recall.settings import Settings

    recall = Recall.open(settings=Settings(root=seeded, environ={}))
    assert recall.get("09394837").id == ONE
    with pytest.raises(AmbiguousMemoryId) as caught:
        recall.get("0939")
    assert [c[0] for c in caught.value.candidates] == [ONE, TWO]
    with pytest.raises(MemoryNotFound):
        recall.get("abcd")
    with pytest.raises(InvalidMemoryId):
        recall.get("../etc")
    assert [m.id for m in recall.accept(["7c1d0e52"])] == [THREE]


def test_mcp_tools_take_a_prefix(seeded: Path) -> None:
    async def body(client: Client) -> None:
        got = await call(client, "get_memories", {"ids": ["09394837", "0939"]})
        assert [m["id"] for m in got["memories"]] == [ONE]
        assert "ambiguous" in got["errors"][0]["error"]
        timeline = await call(client, "memory_timeline", {"anchor": "7c1d0e52"})
        assert timeline["anchor"]["id"] == THREE
        message = await call_error(client, "delete_memory", {"id": "0939"})
        assert "ambiguous" in message
        deleted = await call(client, "delete_memory", {"id": "0939a"})
        assert deleted["deleted"] == TWO

    run_session(seeded, body)


def test_viewer_api_takes_a_prefix(seeded: Path) -> None:
    from starlette.testclient import TestClient

    from local_recall.recall import Recall
    from local_recall.settings import Settings
    from local_recall.web.app import create_app
    from local_recall.web.events import ChangeFeed
    from local_recall.web.viewer import Viewer

    recall = Recall.open(settings=Settings(root=seeded, environ={}))
    viewer = Viewer(recall, lambda query: recall.query(query, use_index=False))
    token = "t" * 43
    app = create_app(viewer, ChangeFeed(), token=token, hosts=frozenset({"testserver"}))
    with TestClient(app, headers={"x-recall-token": token}) as http:
        shown: Any = http.get("/api/memories/09394837").json()
        assert shown["id"] == ONE
        ambiguous = http.get("/api/memories/0939")
        assert ambiguous.status_code == 400 and TWO in ambiguous.json()["error"]


def test_the_shortest_unique_prefix_is_a_pure_decision() -> None:
    from local_recall.memory.id_prefix import digits_of, unique_prefix_length

    ordered = sorted(digits_of(i) for i in (ONE, TWO, THREE))
    assert unique_prefix_length(digits_of(THREE), ordered) == 8  # as git: at least 8
    assert unique_prefix_length(digits_of(ONE), ordered) == 8  # "0939" is shared, "09394" not
    planted = "09394837-1112-4000-8000-000000000000"  # the first 11 digits are ONE's
    with_twin = sorted(digits_of(i) for i in (ONE, TWO, THREE, planted))
    assert unique_prefix_length(digits_of(ONE), with_twin) == 12
    assert unique_prefix_length(digits_of(planted), with_twin) == 12
    assert unique_prefix_length(digits_of(ONE), [*with_twin, digits_of(ONE)]) == 12  # a copy
    assert unique_prefix_length(digits_of(ONE), []) == 8


def test_a_pointer_names_one_memory_when_a_planted_id_shares_its_first_digits(
    cli: CliRunner, seeded: Path
) -> None:
    planted = "7c1d0e52-3333-4000-8000-000000000000"  # THREE's first 13 digits
    (seeded / "local-recall" / "episodic-memory" / f"{planted}.md").write_text(
        f"---\nid: {planted}\nsubject: macOS runners need an fcntl lock for pytest\n"
        "occurred_at: 2026-11-01T10:00:00Z\n---\n\nLocks differ: fcntl against flock.\n",
        encoding="utf-8",
    )
    why = cli(
        "why",
        "how do I run the tests with pytest and tox?",
        "--json",
        # one in full, and the other pointed at however far behind it
        env={
            "LOCAL_RECALL_HOOKS_PROMPT_FULL_TOKENS": "1",
            "LOCAL_RECALL_HOOKS_PROMPT_POINTER_GAP": "20",
        },
    )
    assert why.returncode == 0, why.stderr
    import json

    context = json.loads(why.stdout)["context"]
    assert "\n- 7c1d0e52333340 " in context, context  # the 14th digit tells them apart
    assert "- 7c1d0e52 " not in context
    assert cli("show", "7c1d0e52333340").stdout.startswith(f"id:          {planted}")
    shown = cli("show", "7c1d0e52333343")
    assert shown.returncode == 0 and f"id:          {THREE}" in shown.stdout


def test_a_short_id_whose_memory_is_gone_says_so(seeded: Path) -> None:
    summaries = seeded / "local-recall" / "session-summaries"
    summaries.mkdir(parents=True, exist_ok=True)
    session = "7c1d0e52-9999-4999-8999-999999999999"  # shares the removed memory's 8 digits
    (summaries / f"{session}.md").write_text(
        f"---\nid: {session}\nsubject: A session about the docs\n"
        "occurred_at: 2026-11-02T10:00:00Z\nkind: session\n---\n\nWrote the docs.\n",
        encoding="utf-8",
    )
    (seeded / "local-recall" / "episodic-memory" / f"{THREE}.md").unlink()

    async def body(client: Client) -> None:
        got = await call(client, "get_memories", {"ids": ["7c1d0e52"]})
        assert got["memories"] == []
        assert "removed since it was shown" in got["errors"][0]["error"]
        whole = await call(client, "get_memories", {"ids": [session]})  # timeline rows' ids
        assert [m["id"] for m in whole["memories"]] == [session]

    run_session(seeded, body)
