"""The store's catalog is appended to by a save, not rewritten: whatever the sequence
of adds, edits, deletes and hand edits, by two writers (two `Recall`s: two processes' views),
the catalog read back from its base and log is the one a store scanning from scratch writes."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from local_recall.memory.catalog_file import CatalogFile, entries_text
from local_recall.memory.model import new_memory_id
from local_recall.memory.store import MemoryStore
from local_recall.recall import Recall
from local_recall.settings import Settings
from tests.conftest import clean_env

VERSION = 5  # store._CATALOG_VERSION


def open_recall(repo: Path) -> Recall:
    return Recall.open(settings=Settings(root=repo, environ=clean_env()))


def catalog_path(repo: Path) -> Path:
    return repo / "local-recall" / "state" / "catalog-episodic.json"


def rebuilt(repo: Path, tmp_path: Path, step: int) -> str:
    """The catalog a scan from scratch writes: the same files, an empty state folder."""
    state = tmp_path / f"fresh-{step}" / "state"
    state.mkdir(parents=True)
    store = open_recall(repo).memories
    fresh = MemoryStore(store.directory, state, kind="episodic", new_id=lambda: "unused")
    fresh.scan()
    return entries_text(CatalogFile(state / "catalog-episodic.json", VERSION).load())


@pytest.mark.parametrize("seed", [3, 4])
def test_random_changes_by_two_writers_read_back_as_a_scan_from_scratch(
    repo: Path, tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    writers = [open_recall(repo), open_recall(repo)]
    ids: list[str] = []
    for step in range(40):
        recall = rng.choice(writers)
        action = rng.choice(("add", "add", "edit", "delete", "hand")) if ids else "add"
        if action == "add":
            ids.append(recall.add(f"Fact {step}", f"Fact number {step}, seed {seed}.").id)
        elif action == "edit":
            recall.update(rng.choice(ids), body=f"Edited at step {step}.")
        elif action == "delete":
            recall.forget(ids.pop(rng.randrange(len(ids))))
        else:  # a person edits a file behind the catalog's back (a new inode)
            path = recall.get(rng.choice(ids)).path
            assert path is not None
            tmp = path.with_suffix(".tmp")
            tmp.write_text(path.read_text().replace("---\n\n", f"---\n\nHand {step}. ", 1))
            os.replace(tmp, path)
        rng.choice(writers).list()  # a scan: the catalog catches up with the files
        on_disk = CatalogFile(catalog_path(repo), VERSION).load()  # a third process
        assert entries_text(on_disk) == rebuilt(repo, tmp_path, step), (step, action)
        assert len(on_disk) == len(ids)


def test_a_save_appends_its_entry_and_leaves_the_base_alone(repo: Path) -> None:
    recall = open_recall(repo)
    base = catalog_path(repo)
    log = base.with_suffix(".log")
    rewrites = 0
    for n in range(40):  # the base is rewritten once the log holds a quarter of its size
        before = base.stat() if base.exists() else None
        log_before = log.stat().st_size if log.exists() else 0
        added = recall.add(f"Fact {n}", f"Fact number {n}: the parser rejects tab {n}.")
        after = base.stat()
        if before is None or after.st_ino != before.st_ino:  # the first save writes a base
            rewrites += before is not None
            continue
        last = log.read_bytes().splitlines()[-1]
        assert list(json.loads(last)["set"]) == [f"{added.id}.md"]
        assert len(last) < 2_000  # one entry, not the catalog
        assert log.stat().st_size - log_before < 2_000 or log.stat().st_size < 2_500
    assert 1 <= rewrites <= 12, rewrites  # amortised: most saves append
    # a fresh process sees it; a torn append (a crash) is ignored
    with log.open("ab") as handle:
        handle.write(b'{"set": {"broken')
    assert added.id in {m.id for m in open_recall(repo).list()}
    again = open_recall(repo)
    assert len(again.list()) == 40


def test_a_log_that_follows_another_base_is_ignored(repo: Path) -> None:
    recall = open_recall(repo)
    memory = recall.add("S", "body one")
    recall.add("T", "body two")  # appended
    base = catalog_path(repo)
    base.write_text(base.read_text())  # the base rewritten: the log no longer follows it
    assert sorted(m.subject for m in open_recall(repo).list()) == ["S", "T"]  # re-parsed
    assert memory.id in {m.id for m in open_recall(repo).list()}


def test_saves_append_again_once_a_new_base_is_written(tmp_path: Path) -> None:
    """At 100,000 memories, once the log outgrew its quarter and a save wrote a new
    base, the old log (now following nothing) still counted as the log's size, so every save
    after it wrote the whole base again (79 MB each). The same entry saved again and again (a
    session summary rewritten as its session goes on) keeps the base's size: counted here."""
    path = tmp_path / "catalog-summary.json"
    catalog = CatalogFile(path, VERSION)
    entries = {f"{i}.md": {"stat": [i, 1, 1], "memory": {"body": "x" * 100}} for i in range(40)}
    catalog.save(entries)
    base_bytes = path.stat().st_size
    rewrites = 0
    for n in range(120):
        before = path.stat().st_ino
        catalog.put("0.md", {"stat": [0, n, 1], "memory": {"body": f"{n:>100}"}})
        rewrites += path.stat().st_ino != before
    # a line is ~1/40 of the base: a new base every ~10 puts (was: every put after the first)
    assert 1 <= rewrites <= 120 // 8, rewrites
    assert log_path_of(path).stat().st_size <= base_bytes * 0.25 + 200
    assert CatalogFile(path, VERSION).load()["0.md"]["stat"] == [0, 119, 1]  # a fresh reader


def log_path_of(base: Path) -> Path:
    return base.with_suffix(".log")


def test_a_copied_store_writes_one_new_base_and_its_saves_append(tmp_path: Path) -> None:
    """A copied store (`cp -a`, a checkout writing every file anew: new inodes) re-parses every
    file at its first scan. That scan appended the whole catalog to the log as one line, the
    next save found the log over its quarter and wrote a new base, and every save after it
    wrote the base again (the log before). Now the scan writes the base; the saves append."""
    from tests.memory.test_scan_cost import draft, write_memories

    folder, state = tmp_path / "memories", tmp_path / "state"
    write_memories(folder, 60)
    MemoryStore(folder, state, new_id=new_memory_id).scan()
    for path in folder.iterdir():  # the copy: the same bytes, new inodes
        copy = path.with_name(f".{path.name}.copy")
        copy.write_bytes(path.read_bytes())
        os.replace(copy, path)
    store = MemoryStore(folder, state, new_id=new_memory_id)
    assert len(store.scan().memories) == 60
    base = state / "catalog-episodic.json"
    log = log_path_of(base)
    assert not log.exists() or log.stat().st_size < base.stat().st_size * 0.25  # was: all of it
    inodes = set()
    for n in range(5):
        store.create(draft(n))
        inodes.add(base.stat().st_ino)
    assert len(inodes) == 1, inodes  # was 5: a new base per save
    fresh = MemoryStore(folder, tmp_path / "fresh", new_id=new_memory_id).scan()
    assert MemoryStore(folder, state, new_id=new_memory_id).scan().memories == fresh.memories
