"""One memory under several spellings of its id: `<UUID>.md` in upper case, without
dashes or with a leading space is a second file claiming the same id. Only the canonical file
is read, so `rm` used to remove that one and leave the others in the tree; now every command
that acts on an id acts on every file that claims it, or refuses naming them all."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from local_recall.recall import Recall
from local_recall.settings import Settings
from tests.conftest import CliRunner, clean_env
from tests.mcp_session import call, run_session

FOLDER = Path("local-recall") / "episodic-memory"


def spellings(memory_id: str) -> list[str]:
    return [f"{memory_id.upper()}.md", f"{memory_id.replace('-', '')}.md", f" {memory_id}.md"]


def plant(root: Path, memory_id: str) -> list[Path]:
    """Copies of the canonical file under every other spelling; all the claimants, canonical
    first."""
    folder = root / FOLDER
    canonical = folder / f"{memory_id}.md"
    copies = [folder / name for name in spellings(memory_id)]
    for copy in copies:
        shutil.copyfile(canonical, copy)
    return [canonical, *copies]


def add(root: Path, subject: str = "Deploy with make ship") -> str:
    recall = Recall.open(settings=Settings(root=root, environ=clean_env()))
    return recall.add(subject, f"{subject}: we run it from the release branch.").id


def left(root: Path) -> list[str]:
    return sorted(p.name for p in (root / FOLDER).iterdir())


def test_claimed_id_reads_every_spelling_of_a_uuid() -> None:
    from local_recall.memory.store_files import claimed_id

    memory_id = "2691bff6-551c-4b04-b5ea-3e4776435889"
    for name in [f"{memory_id}.md", *spellings(memory_id), f"{memory_id} .md"]:
        assert claimed_id(name) == memory_id, name
    for name in ("notes.md", f"{memory_id}.txt", f".{memory_id}.md.tmp", "{" + memory_id + "}.md"):
        assert claimed_id(name) is None, name


def test_rm_removes_every_file_claiming_the_id(cli: CliRunner, repo: Path) -> None:
    memory_id = add(repo)
    kept = add(repo, "Another memory")
    claimants = plant(repo, memory_id)
    done = cli("rm", memory_id.upper(), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["deleted"] == memory_id
    assert sorted(report["paths"]) == sorted(str(p) for p in claimants)
    assert left(repo) == [f"{kept}.md"]
    assert [m["id"] for m in json.loads(cli("list", "--json").stdout)] == [kept]
    assert "unreadable file" not in cli("doctor").stdout

    # plain output names each file
    other = add(repo, "Third memory")
    plant(repo, other)
    plain = cli("rm", other)
    assert plain.returncode == 0 and plain.stdout.count("\n") >= 4, plain.stdout
    assert left(repo) == [f"{kept}.md"]


def test_rm_removes_a_misspelled_file_when_no_canonical_one_exists(
    cli: CliRunner, repo: Path
) -> None:
    memory_id = add(repo)
    (repo / FOLDER / f"{memory_id}.md").rename(repo / FOLDER / f"{memory_id.upper()}.md")
    shown = cli("show", memory_id)
    assert shown.returncode == 1 and memory_id.upper() in shown.stderr
    assert "Traceback" not in shown.stderr
    assert cli("rm", memory_id).returncode == 0
    assert left(repo) == []


def test_edit_refuses_and_names_every_file(cli: CliRunner, repo: Path) -> None:
    memory_id = add(repo)
    claimants = plant(repo, memory_id)
    before = {p: p.read_bytes() for p in claimants}
    done = cli("edit", memory_id, "--subject", "Changed")
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    for path in claimants:
        assert path.name in done.stderr
    assert {p: p.read_bytes() for p in claimants} == before


def test_show_names_the_other_files(cli: CliRunner, repo: Path) -> None:
    memory_id = add(repo)
    claimants = plant(repo, memory_id)
    shown = cli("show", memory_id)
    assert shown.returncode == 0 and "Deploy with make ship" in shown.stdout
    for path in claimants[1:]:
        assert path.name in shown.stderr
    as_json = json.loads(cli("show", memory_id, "--json").stdout)
    assert sorted(as_json["duplicates"]) == sorted(str(p) for p in claimants[1:])


def test_doctor_and_check_report_the_duplicates(cli: CliRunner, repo: Path) -> None:
    memory_id = add(repo)
    claimants = plant(repo, memory_id)
    doctor = cli("doctor", "--json")
    rows = json.loads(doctor.stdout)
    duplicates = [r for r in rows if r["name"] == "duplicate id"]
    assert len(duplicates) == 1 and memory_id in duplicates[0]["detail"]
    for path in claimants:
        assert path.name in duplicates[0]["detail"]
    checked = cli("check", str(repo / FOLDER))
    assert checked.returncode == 1
    for path in claimants[1:]:
        assert path.name in checked.stdout
    assert "another file claims this id" in checked.stdout


def test_mcp_delete_memory_removes_every_file(repo: Path) -> None:
    memory_id = add(repo)
    claimants = plant(repo, memory_id)

    async def body(client: Client) -> None:
        result = await call(client, "delete_memory", {"id": memory_id})
        assert result["deleted"] == memory_id
        assert sorted(result["paths"]) == sorted(p.relative_to(repo).as_posix() for p in claimants)

    run_session(repo, body)
    assert left(repo) == []


@pytest.fixture
def viewer_client(repo: Path) -> Iterator[Any]:
    from starlette.testclient import TestClient

    from local_recall.web.app import create_app
    from local_recall.web.events import ChangeFeed
    from local_recall.web.viewer import Viewer

    recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
    viewer = Viewer(recall, lambda query: recall.query(query, use_index=False))
    app = create_app(viewer, ChangeFeed(), token="t", hosts=frozenset({"testserver"}))
    with TestClient(app, headers={"x-recall-token": "t"}) as http:
        yield http


def test_viewer_deletes_every_file_and_refuses_an_edit(viewer_client: Any, repo: Path) -> None:
    memory_id = add(repo)
    claimants = plant(repo, memory_id)
    opened = viewer_client.get(f"/api/memories/{memory_id}").json()
    assert sorted(opened["duplicates"]) == sorted(
        p.relative_to(repo).as_posix() for p in claimants[1:]
    )
    refused = viewer_client.post(
        f"/api/memories/{memory_id}", json={"subject": "x", "fingerprint": opened["fingerprint"]}
    )
    assert refused.status_code == 409
    for path in claimants:
        assert path.name in refused.json()["error"]
    deleted = viewer_client.post(f"/api/memories/{memory_id}/delete", json={})
    assert deleted.status_code == 200, deleted.text
    assert len(deleted.json()["paths"]) == 4
    assert left(repo) == []
