"""The viewer without a browser: the guard and the list shapes decided over literals, the
markdown renderer on hostile bodies, and the HTTP API on a real repository (real files, real
git, the library's own validation) through Starlette's test client."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from local_recall.errors import InvalidInput
from local_recall.lifecycle.staleness import Stale
from local_recall.memory.model import Memory
from local_recall.web.guard import allowed_hosts, refuse
from local_recall.web.render import render_markdown
from local_recall.web.shapes import ListFilter, fingerprint, list_page, parse_list_filter

TOKEN = "s3cret-token"
HOSTS = allowed_hosts(8123)
OK_HOST = {"host": "127.0.0.1:8123"}


def check(method: str, path: str, headers: dict[str, str], query_token: str | None = None) -> Any:
    refusal = refuse(method, path, headers, query_token, token=TOKEN, hosts=HOSTS)
    return None if refusal is None else refusal.status


# --- guard ---------------------------------------------------------------------------------------


def test_reads_need_the_token_in_the_header_or_the_query() -> None:
    assert check("GET", "/api/memories", OK_HOST) == 401
    assert check("GET", "/api/memories", OK_HOST, "wrong") == 403
    assert check("GET", "/api/memories", OK_HOST, TOKEN) is None
    assert check("GET", "/api/memories", {**OK_HOST, "x-recall-token": TOKEN}) is None
    assert check("GET", "/", OK_HOST) is None  # the page: code, no data
    assert check("POST", "/", OK_HOST) == 401
    assert check("GET", "/static/app.js", OK_HOST) is None  # code, no data


def test_a_foreign_host_is_refused_even_with_the_token() -> None:
    # a DNS-rebinding page reaches 127.0.0.1 under its own name
    assert check("GET", "/api/memories", {"host": "evil.example:8123"}, TOKEN) == 403
    assert check("GET", "/static/app.js", {"host": "evil.example:8123"}) == 403
    assert check("GET", "/api/memories", {"host": "localhost:8123"}, TOKEN) is None


def test_changes_need_the_header_a_same_origin_and_json() -> None:
    good = {**OK_HOST, "x-recall-token": TOKEN, "content-type": "application/json"}
    assert check("POST", "/api/review/accept", good) is None
    assert check("POST", "/api/review/accept", {**good, "origin": "http://127.0.0.1:8123"}) is None
    assert check("POST", "/api/review/accept", {**OK_HOST}, TOKEN) == 401  # query token: no
    assert check("POST", "/api/review/accept", {**good, "x-recall-token": "x"}) == 403
    assert check("POST", "/api/review/accept", {**good, "origin": "http://evil.example"}) == 403
    assert check("POST", "/api/review/accept", {**good, "origin": "null"}) == 403
    assert check("POST", "/api/review/accept", {**good, "sec-fetch-site": "cross-site"}) == 403
    assert check("POST", "/api/review/accept", {**good, "content-type": "text/plain"}) == 415
    assert check("POST", "/static/app.js", {**OK_HOST}) == 401  # static is read-only


# --- shapes --------------------------------------------------------------------------------------


def memory(n: int, **fields: Any) -> Memory:
    values: dict[str, Any] = {
        "id": f"00000000-0000-4000-8000-{n:012d}",
        "subject": f"memory {n}",
        "body": "body",
        "keywords": (),
        "applies_to": "global",
        "occurred_at": datetime(2026, 1, n, tzinfo=UTC),
        "content_hash": "h",
    }
    values.update(fields)
    return Memory(**values)


def test_list_is_newest_first_filtered_and_paginated() -> None:
    memories = [
        memory(1),
        memory(2, applies_to="file:src/a.py", unreviewed=True),
        memory(3, session="abc-123"),
        memory(4, kind="thinking"),
    ]
    stale = {memories[0].id: Stale("deleted", "src/x.py", "src/x.py was deleted")}
    everything = list_page(memories, stale, ListFilter())
    assert everything.total == 4
    assert [r["subject"] for r in everything.rows] == [
        "memory 4",
        "memory 3",
        "memory 2",
        "memory 1",
    ]
    assert everything.rows[3]["stale"]["reason"] == "deleted"

    def subjects(**wanted: Any) -> list[str]:
        return [r["subject"] for r in list_page(memories, stale, ListFilter(**wanted)).rows]

    assert subjects(kind="thinking") == ["memory 4"]
    assert subjects(scope="file:src/") == ["memory 2"]
    assert subjects(review="unreviewed") == ["memory 2"]
    assert subjects(stale="stale") == ["memory 1"]
    assert subjects(stale="fresh", review="reviewed", kind="episodic") == ["memory 3"]
    assert subjects(session="abc") == ["memory 3"]
    assert subjects(
        since=datetime(2026, 1, 2, tzinfo=UTC), until=datetime(2026, 1, 3, tzinfo=UTC)
    ) == [
        "memory 3",
        "memory 2",
    ]
    page = list_page(memories, stale, ListFilter(offset=1, limit=2))
    assert page.total == 4 and [r["subject"] for r in page.rows] == ["memory 3", "memory 2"]


def test_list_filters_from_a_query_string() -> None:
    wanted = parse_list_filter({"scope": "file:./src/", "until": "2026-01-03", "limit": "10"})
    assert wanted.scope == "file:src/"
    assert wanted.until == datetime(2026, 1, 3, 23, 59, 59, tzinfo=UTC)  # the whole day
    assert wanted.limit == 10 and wanted.offset == 0
    for bad in (
        {"kind": "x"},
        {"review": "maybe"},
        {"limit": "-1"},
        {"limit": "999"},
        {"scope": "file:../etc"},
        {"since": "yesterday"},
    ):
        with pytest.raises(InvalidInput):
            parse_list_filter(bad)


def test_fingerprint_changes_with_any_edited_field() -> None:
    base = memory(1)
    assert fingerprint(base) == fingerprint(memory(1, source="cli"))
    for change in ({"subject": "x"}, {"body": "y"}, {"keywords": ("k",)}, {"applies_to": "area:x"}):
        assert fingerprint(memory(1, **change)) != fingerprint(base)


# --- markdown -------------------------------------------------------------------------------------


def test_hostile_markdown_is_escaped_and_fetches_nothing() -> None:
    html = render_markdown(
        "<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n"
        "[a](javascript:alert(1)) [b](https://example.com) ![c](https://tracker.example/p.png)"
    )
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;" in html
    assert 'href="javascript:' not in html
    assert 'href="https://example.com" rel="noopener noreferrer nofollow"' in html
    assert "[image: c]" in html  # an image is a link, never loaded


# --- the API on a real repository -----------------------------------------------------------------


@pytest.fixture
def client(tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    from starlette.testclient import TestClient

    from local_recall.recall import Recall
    from local_recall.settings import Settings
    from local_recall.web.app import create_app
    from local_recall.web.events import ChangeFeed
    from local_recall.web.viewer import Viewer

    root = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    recall = Recall.open(settings=Settings(root=root, environ={}))
    recall.init()
    viewer = Viewer(recall, lambda query: recall.query(query, use_index=False))
    app = create_app(viewer, ChangeFeed(), token=TOKEN, hosts=frozenset({"testserver"}))
    with TestClient(app, headers={"x-recall-token": TOKEN}) as http:
        yield http, recall


def test_api_lists_searches_and_shows_a_memory(client: tuple[Any, Any]) -> None:
    http, recall = client
    first = recall.add("Use filelock for dedup", "Two processes, **one** file. <b>bold?</b>")
    recall.add("LanceDB index is derived", "Delete it and it is rebuilt.", scope="area:search")
    listed = http.get("/api/memories").json()
    assert listed["total"] == 2 and listed["search"] is None
    found = http.get("/api/memories", params={"q": "filelock"}).json()
    assert found["rows"][0]["id"] == first.id and 0 < found["rows"][0]["score"] <= 1
    assert found["search"]["degraded_reason"]  # files only here: said, not hidden
    shown = http.get(f"/api/memories/{first.id}").json()
    assert "<strong>one</strong>" in shown["body_html"] and "&lt;b&gt;" in shown["body_html"]
    assert "subject: Use filelock for dedup" in shown["frontmatter"]
    assert http.get("/api/memories/not-an-id").status_code == 400
    missing = "00000000-0000-4000-8000-000000000000"
    assert http.get(f"/api/memories/{missing}").status_code == 404
    assert http.get("/api/memories", params={"kind": "nope"}).status_code == 400
    assert http.get("/api/counts").json() == {"unreviewed": 0, "stale": 0, "extraction_warning": ""}


def test_api_edit_goes_through_the_library_and_refuses_a_stale_editor(
    client: tuple[Any, Any],
) -> None:
    http, recall = client
    memory = recall.add("Subject", "Body")
    opened = http.get(f"/api/memories/{memory.id}").json()
    path = Path(memory.path)
    refused = http.post(
        f"/api/memories/{memory.id}", json={"body": "  ", "fingerprint": opened["fingerprint"]}
    )
    assert refused.status_code == 400 and "body is empty" in refused.json()["error"]
    secret = "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"
    saved = http.post(
        f"/api/memories/{memory.id}",
        json={
            "body": f"New body, key {secret}",
            "keywords": "a, b",
            "fingerprint": opened["fingerprint"],
        },
    )
    assert saved.status_code == 200, saved.text
    text = path.read_text(encoding="utf-8")
    assert "New body" in text and secret not in text  # redaction applied on the way in
    assert saved.json()["keywords"] == ["a", "b"]
    late = http.post(
        f"/api/memories/{memory.id}", json={"body": "x", "fingerprint": opened["fingerprint"]}
    )
    assert late.status_code == 409 and "New body" in path.read_text(encoding="utf-8")


def test_api_file_view_stays_inside_the_repository(client: tuple[Any, Any]) -> None:
    http, recall = client
    (recall.root / "src").mkdir()
    (recall.root / "src" / "a.py").write_text("print('hi')\n")
    (recall.root / "escape").symlink_to("/etc")
    subprocess.run(["git", "-C", str(recall.root), "add", "src/a.py", "escape"], check=True)
    recall.add("a.py prints hi", "It does.", scope="file:src/a.py")
    recall.add("escape", "A link.", scope="file:escape/passwd")
    assert http.get("/api/file", params={"path": "src/a.py"}).json()["text"] == "print('hi')\n"
    assert http.get("/api/file", params={"path": "./src//a.py"}).status_code == 200
    for bad in ("../x", "/etc/passwd", "escape/passwd", ".git/config"):
        assert http.get("/api/file", params={"path": bad}).status_code == 400, bad


def test_api_file_view_serves_only_tracked_files_a_memory_names(client: tuple[Any, Any]) -> None:
    """`/api/file?path=.env` once served any working-tree file, ignored secrets too."""
    http, recall = client
    root = recall.root
    (root / ".gitignore").write_text(".env\n")
    (root / ".env").write_text("API_KEY=not-for-the-browser\n")
    (root / "notes.txt").write_text("untracked notes\n")
    (root / "tracked.py").write_text("TRACKED = 1\n")
    (root / "named.py").write_text("NAMED = 1\n")
    (root / "link.py").symlink_to(".env")
    subprocess.run(["git", "-C", str(root), "add", ".gitignore", "tracked.py", "named.py"])
    subprocess.run(["git", "-C", str(root), "add", "-f", "link.py"], check=True)
    recall.add("named.py holds NAMED", "A constant.", scope="file:named.py")
    recall.add("Secrets are in .env", "Never commit it.", scope="file:.env")
    recall.add("notes", "Notes.", scope="file:notes.txt")
    recall.add("The link", "A link.", scope="file:link.py")
    assert http.get("/api/file", params={"path": "named.py"}).json()["text"] == "NAMED = 1\n"
    for path, why in (
        (".env", "git tracks"),  # named by a memory, ignored by git
        ("notes.txt", "git tracks"),  # named, untracked
        ("tracked.py", "memory names"),  # tracked, named by no memory
        (".gitignore", "memory names"),
        ("link.py", "symbolic link"),  # tracked and named, but a link to .env
    ):
        answer = http.get("/api/file", params={"path": path})
        assert answer.status_code == 400, (path, answer.text)
        assert why in answer.json()["error"], (path, answer.text)
        assert "not-for-the-browser" not in answer.text


def test_api_without_the_token_gives_nothing(client: tuple[Any, Any]) -> None:
    http, recall = client
    recall.add("A private subject", "A private body.")
    bare = {"x-recall-token": ""}
    assert http.get("/api/memories", headers=bare).status_code == 403
    del http.headers["x-recall-token"]
    answer = http.get("/api/memories")
    assert answer.status_code == 401 and "token" in answer.json()["error"]
    assert "default-src 'none'" in answer.headers["content-security-policy"]
    page = http.get("/")  # the page is code, like /static/: the token reaches it in a fragment
    assert page.status_code == 200 and "private" not in page.text.lower()
    assert "default-src 'none'" in page.headers["content-security-policy"]


def write_memory(root: Path, subject: str, body: str, *lines: str) -> str:
    import uuid

    memory_id = str(uuid.uuid4())
    head = "\n".join([f"id: {memory_id}", f"subject: {subject}", "occurred_at: 2026-01-01", *lines])
    folder = root / "local-recall" / "episodic-memory"
    (folder / f"{memory_id}.md").write_text(f"---\n{head}\n---\n{body}\n", encoding="utf-8")
    return memory_id


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def test_api_stale_list_and_still_true(client: tuple[Any, Any]) -> None:
    http, recall = client
    root = recall.root
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "T")
    (root / "cache.py").write_text("CACHE = {}\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    made_at = git(root, "rev-parse", "HEAD")
    stale_id = write_memory(
        root, "Cache lives in cache.py", "A dict.", f"commit: {made_at}", "files:", "  - cache.py"
    )
    (root / "cache.py").unlink()
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "two")
    listed = http.get("/api/stale").json()
    assert [row["id"] for row in listed] == [stale_id]
    assert listed[0]["stale"]["reason"] == "deleted" and "cache.py" in listed[0]["stale"]["detail"]
    assert http.get("/api/memories", params={"stale": "stale"}).json()["total"] == 1
    assert http.get("/api/counts").json()["stale"] == 1
    marked = http.post("/api/stale/still-true", json={"id": stale_id})
    assert marked.status_code == 200, marked.text
    assert http.get("/api/stale").json() == []
    assert recall.get(stale_id).commit == git(root, "rev-parse", "HEAD")  # re-anchored


@pytest.mark.slow  # embeds with the real model: consolidation compares embeddings
def test_api_consolidation_keeps_the_chosen_text(client: tuple[Any, Any]) -> None:
    http, recall = client
    first = recall.add(
        "Duplicates are refused by content hash",
        "Creating a memory whose body hash already exists returns the existing memory.",
    )
    second = recall.add(
        "Duplicate memories are refused by their content hash",
        "Creating a memory whose body hash already exists returns the existing one.",
    )
    groups = http.get("/api/consolidation").json()
    assert len(groups) == 1
    members = {m["id"] for m in groups[0]["memories"]}
    assert members == {first.id, second.id}
    other = ({first.id, second.id} - {groups[0]["proposal"]["keep"]}).pop()
    applied = http.post("/api/consolidation/apply", json={"keep": other, "group": sorted(members)})
    assert applied.status_code == 200, applied.text
    left = [m.id for m in recall.list()]
    assert left == [other]
    assert recall.get(other).body == (first if other == first.id else second).body
    again = http.post("/api/consolidation/apply", json={"keep": other, "group": sorted(members)})
    assert again.status_code == 400  # that group is gone


def test_api_new_memory_is_written_as_add_writes_it(client: tuple[Any, Any]) -> None:
    http, recall = client
    refused = http.post("/api/memories/new", json={"subject": "S", "body": "  "})
    assert refused.status_code == 400 and "body is empty" in refused.json()["error"]
    assert http.post("/api/memories/new", json={"subject": 3, "body": "x"}).status_code == 400
    assert recall.list() == []  # nothing written
    secret = "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"
    made = http.post(
        "/api/memories/new",
        json={"subject": "Deploy key", "body": f"Key {secret}", "keywords": "a, b", "scope": ""},
    )
    assert made.status_code == 200, made.text
    data = made.json()
    assert data["created"] is True and data["redacted"] == ["github-token"]
    assert data["applies_to"] == "global" and data["keywords"] == ["a", "b"]
    memory = recall.get(data["id"])
    assert secret not in memory.body and memory.source == "viewer" and not memory.unreviewed
    again = http.post("/api/memories/new", json={"subject": "Deploy key", "body": f"Key {secret}"})
    assert again.json()["id"] == data["id"] and again.json()["created"] is False


def test_api_session_summaries_listed_searched_and_shown(client: tuple[Any, Any]) -> None:
    from datetime import UTC, datetime

    from local_recall.memory.drafts import make_draft

    http, recall = client
    sessions = {}
    for request in ("Fix the flaky lock test", "Write the release notes"):
        session = str(uuid.uuid4())
        draft = make_draft(
            subject=f"Session: {request}",
            body=f"## Request\n\n{request}",
            keywords=["session summary"],
            applies_to="global",
            occurred_at=datetime.now(UTC),
            source=f"transcript:{session}",
        )
        sessions[request] = recall.summaries.put(session, draft).memory.id
    listed = http.get("/api/sessions").json()
    assert listed["total"] == 2 and {r["subject"] for r in listed["rows"]} == {
        "Session: Fix the flaky lock test",
        "Session: Write the release notes",
    }
    found = http.get("/api/sessions", params={"q": "LOCK flaky"}).json()
    assert [r["id"] for r in found["rows"]] == [sessions["Fix the flaky lock test"]]
    assert http.get("/api/sessions", params={"q": "nothing like it"}).json()["rows"] == []
    shown = http.get(f"/api/sessions/{sessions['Write the release notes'][:8]}").json()
    assert shown["kind"] == "session" and shown["editable"] is False
    assert http.get("/api/sessions/not-an-id").status_code == 400


def test_api_merge_needs_two_memories(client: tuple[Any, Any]) -> None:
    http, recall = client
    a = recall.add("Ruff line length is 100", "Set in pyproject.toml.", keywords=["ruff"])
    b = recall.add("Lines up to 100 characters (ruff)", "pyproject.toml sets it.")
    assert http.post("/api/review/merge", json={"ids": [a.id]}).status_code == 400
    assert http.post("/api/review/merge", json={"ids": [a.id, a.id]}).status_code == 400
    merged = http.post("/api/review/merge", json={"ids": [b.id, a.id]}).json()
    assert {merged["kept"], *merged["removed"]} == {a.id, b.id}
    assert len(recall.list()) == 1
