"""The store and the Recall facade on real files in tmp_path."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from local_recall.errors import InvalidInput, InvalidMemoryFile, MemoryNotFound
from local_recall.memory.model import content_hash
from local_recall.recall import Recall
from local_recall.settings import Settings
from tests.conftest import clean_env


def open_recall(root: Path) -> Recall:
    return Recall.open(settings=Settings(root=root, environ=clean_env()))


def test_add_get_list_update_delete(repo: Path) -> None:
    recall = open_recall(repo)
    first = recall.add(
        "Dedup by content hash",
        "Create is idempotent on the normalised body.",
        keywords=["dedup"],
        scope="area:store",
        occurred_at=datetime(2026, 1, 2, tzinfo=UTC),
    )
    second = recall.add(
        "Index is derived",
        "The LanceDB index can be rebuilt from files.",
        occurred_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    assert first.path == repo / "local-recall" / "episodic-memory" / f"{first.id}.md"
    assert recall.get(first.id) == first
    assert [m.id for m in recall.list()] == [second.id, first.id]  # oldest first
    assert [m.id for m in recall.list(newest_first=True, limit=1)] == [first.id]
    assert [m.id for m in recall.list(keyword="DEDUP")] == [first.id]
    assert [m.id for m in recall.list(since=datetime(2026, 1, 2, tzinfo=UTC))] == [first.id]
    assert [m.id for m in recall.list(scope="area:store", include_global=False)] == [first.id]
    assert second.keywords, "keywords are extracted when none are given"

    updated = recall.update(first.id, body="New body.", scope="file:src/store.py")
    assert updated.content_hash == content_hash("New body.")
    assert updated.applies_to == "file:src/store.py"
    assert updated.subject == first.subject and updated.occurred_at == first.occurred_at

    recall.delete(first.id)
    with pytest.raises(MemoryNotFound):
        recall.get(first.id)
    assert [m.id for m in recall.list()] == [second.id]


def test_create_is_idempotent_on_normalised_content(repo: Path) -> None:
    recall = open_recall(repo)
    a = recall.save("One", "same body\n", occurred_at=datetime(2026, 1, 1, tzinfo=UTC))
    b = recall.save(
        "Other subject", "same body   \r\n\r\n", occurred_at=datetime(2027, 1, 1, tzinfo=UTC)
    )
    assert a.created and not b.created
    assert b.memory.id == a.memory.id
    assert len(list((repo / "local-recall" / "episodic-memory").glob("*.md"))) == 1


def test_unknown_keys_survive_an_edit(repo: Path) -> None:
    recall = open_recall(repo)
    memory = recall.add("S", "body")
    path = memory.path
    assert path is not None
    text = path.read_text().replace("applies_to:", "reviewed_by: ana\napplies_to:")
    path.write_text(text)
    recall.update(memory.id, subject="New subject")
    assert "reviewed_by: ana" in path.read_text()
    assert recall.get(memory.id).extra == {"reviewed_by": "ana"}


def test_hand_edit_is_read_without_rewriting_the_file(repo: Path) -> None:
    recall = open_recall(repo)
    memory = recall.add("S", "original body")
    assert memory.path is not None
    text = memory.path.read_text().replace("original body", "edited by hand")
    memory.path.write_text(text)
    before = memory.path.read_bytes()
    again = recall.get(memory.id)
    listed = recall.list()[0]
    assert again.body == listed.body == "edited by hand"
    assert again.content_hash == content_hash("edited by hand")
    assert again.stale_hash == memory.content_hash
    assert memory.path.read_bytes() == before


def test_garbage_files_are_reported_and_left_alone(repo: Path) -> None:
    recall = open_recall(repo)
    recall.add("good", "good body")
    folder = repo / "local-recall" / "episodic-memory"
    garbage = folder / "0b9f5f43-6c1e-4b1a-9a57-0c2f0c6b9a10.md"
    garbage.write_bytes(b"---\nsubject: [broken\n---\n\xff\xfe")
    misnamed = folder / "notes.md"
    misnamed.write_text("hello")
    scan = recall.scan()
    assert len(scan.memories) == 1
    assert {p.path.name for p in scan.problems} == {garbage.name, "notes.md"}
    assert garbage.read_bytes() == b"---\nsubject: [broken\n---\n\xff\xfe"
    with pytest.raises(InvalidMemoryFile):
        recall.update(garbage.stem, subject="x")
    assert garbage.read_bytes() == b"---\nsubject: [broken\n---\n\xff\xfe"


def test_catalog_is_only_a_cache(repo: Path) -> None:
    recall = open_recall(repo)
    memory = recall.add("S", "body one")
    catalog = repo / "local-recall" / "state" / "catalog-episodic.json"
    assert catalog.exists()
    catalog.write_text("{not json")
    assert [m.id for m in recall.list()] == [memory.id]
    # a file changed behind the catalog's back (new inode via replace) is re-parsed
    assert memory.path is not None
    tmp = memory.path.with_suffix(".tmp")
    tmp.write_text(memory.path.read_text().replace("body one", "body two"))
    os.replace(tmp, memory.path)
    assert recall.list()[0].body == "body two"


@pytest.mark.parametrize(
    ("subject", "body", "scope"),
    [
        ("", "b", "global"),
        ("s", "  \n ", "global"),
        ("s", "b", "file:../x"),
        ("x" * 300, "b", "global"),
    ],
)
def test_bad_input_is_refused(repo: Path, subject: str, body: str, scope: str) -> None:
    with pytest.raises(InvalidInput):
        open_recall(repo).add(subject, body, scope=scope)
    assert not list((repo / "local-recall" / "episodic-memory").glob("*.md"))


def test_private_spans_never_reach_the_file(repo: Path) -> None:
    memory = open_recall(repo).add("S", "keep this <private>not this</private> and this")
    assert memory.path is not None
    assert "not this" not in memory.path.read_text()


def test_init_is_idempotent_and_keeps_a_persons_gitignore(repo: Path) -> None:
    gitignore = repo / "local-recall" / ".gitignore"
    gitignore.write_text("my-own-line\n")
    recall = open_recall(repo)
    report = recall.init()
    text = gitignore.read_text()
    assert text.startswith("my-own-line\n")
    assert "index/" in text and "state/" in text and "recall.log*" in text
    assert report.gitignore_added
    assert recall.init().gitignore_added == ()
    assert gitignore.read_text() == text
