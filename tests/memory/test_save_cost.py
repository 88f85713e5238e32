"""A save costs what it changes (the store side at 100,000 memories), counted.

A save listed the folder twice (its scan, then the same under the store lock: a stat of every
file, ~1 s of CPU at 100,000) and once more for a killed writer's temp files, and it wrote the
catalog's base whole (79 MB) when its one entry belonged in the log. Now a save takes the scan
the store kept while neither the folder's stat nor the catalog's moved since it listed the
folder or wrote into it: counted here with cProfile on real stores in tmp_path (no wall clock).
And what the kept scan must not hide: a file added or deleted by another program, a file
edited in place (docs/pipeline.md, *the paraphrase check*)."""

from __future__ import annotations

import cProfile
import os
import pstats
import time
from dataclasses import replace
from pathlib import Path

from local_recall.memory.model import new_memory_id
from local_recall.memory.store import MemoryStore
from local_recall.memory.store_files import RACY_NS
from tests.memory.test_scan_cost import draft, no_paraphrase, write_memories


def opened(root: Path, count: int) -> MemoryStore:
    """A store of `count` memories, scanned once by a process that opened it a while after
    its last change (the folder's mtime a second old: trusted)."""
    folder = root / "local-recall" / "episodic-memory"
    write_memories(folder, count)
    past = os.stat(folder).st_mtime_ns - 10**9
    os.utime(folder, ns=(past, past))
    store = MemoryStore(folder, root / "local-recall" / "state", new_id=new_memory_id)
    store.scan()
    return store


def saves_counted(store: MemoryStore, first: int, saves: int) -> dict[str, int]:
    """Calls of what costs per file in the store, over `saves` saves in a row."""
    profile = cProfile.Profile()
    profile.enable()
    for n in range(first, first + saves):
        assert store.create(draft(n), paraphrase_of=no_paraphrase).created
    profile.disable()
    calls = pstats.Stats(profile).stats  # type: ignore[attr-defined]

    def count(suffix: str) -> int:  # a built-in's name ends so; a function's is its name
        return sum(c[1] for (_f, _l, name), c in calls.items() if name.endswith(suffix))

    return {
        "scandir": count("posix.scandir>"),
        "file stats": count("of 'posix.DirEntry' objects>"),
        "scans": sum(
            c[1] for (f, _l, name), c in calls.items() if (f[-8:], name) == ("store.py", "scan")
        ),
        "base writes": count("_write_base"),
        "hash checks": count("_holder"),  # a pass over every memory each
    }


def test_saves_in_a_row_list_nothing_and_write_only_their_entry(tmp_path: Path) -> None:
    """Was, per save: 2 listings (a scandir and 3 calls per file each), 1 scandir for temp
    files, 2 passes over the memories for the content hash; counted at 20 and 200 memories,
    the same."""
    nothing = {"scandir": 0, "file stats": 0, "scans": 0, "base writes": 0, "hash checks": 3}
    for count in (20, 200):
        store = opened(tmp_path / str(count), count)
        state = store.lock_path.parent
        base, log = state / "catalog-episodic.json", state / "catalog-episodic.log"
        base_before = base.stat()
        log_before = log.stat().st_size if log.exists() else 0
        assert saves_counted(store, 1, 3) == nothing, count
        assert (base.stat().st_ino, base.stat().st_size) == (
            base_before.st_ino,
            base_before.st_size,
        )
        assert log.stat().st_size - log_before < 3 * 2_000  # three entries, not the catalog
        scratch = MemoryStore(store.directory, tmp_path / f"scratch-{count}", new_id=new_memory_id)
        kept, listed = store.scan(), scratch.scan()  # the kept scan is what a listing finds
        assert kept.memories == listed.memories and len(kept.memories) == count + 3


def past_a_tick(folder: Path) -> None:
    """Wait until a change to `folder` gets a later mtime than its last (a file-system tick),
    as between a save and the next program's write."""
    while time.time_ns() <= os.stat(folder).st_mtime_ns + RACY_NS:
        time.sleep(RACY_NS / 1e9)


def test_a_save_sees_a_file_another_program_added_or_deleted(tmp_path: Path) -> None:
    """`git pull` or a person adds and deletes files without the store's lock or catalog; the
    folder's mtime moves, and the next save lists it."""
    store = opened(tmp_path, 5)
    store.create(draft(1))
    past_a_tick(store.directory)
    other = MemoryStore(store.directory, tmp_path / "other-state", new_id=new_memory_id)
    pulled = other.create(draft(2)).memory  # its own catalog: only the folder says so
    again = store.create(draft(2))
    assert (again.created, again.memory.id) == (False, pulled.id)
    past_a_tick(store.directory)
    assert pulled.path is not None
    pulled.path.unlink()  # deleted by hand
    recreated = store.create(draft(2))
    assert recreated.created and recreated.memory.id != pulled.id
    assert pulled.id not in {m.id for m in store.scan().memories}


NEW_BODY = "Uploads are never retried: they fail at once."


def test_a_file_edited_in_place_is_never_the_answer_for_what_it_no_longer_says(
    tmp_path: Path,
) -> None:
    """An editor writing in place moves neither the folder's stat nor the catalog's. A save
    whose fact such a file held before the edit checks that file (one lstat), sees it changed
    and lists the folder: the fact is written, not answered with the edited memory (nothing
    lost). A save of what the file says after the edit is written too, a second copy until a
    full scan (a list, a search, the daemon's) sees the edit: saved twice, never lost."""
    store = opened(tmp_path, 5)
    edited = store.create(draft(1)).memory
    assert edited.path is not None
    with edited.path.open("r+", encoding="utf-8") as handle:  # the same inode
        text = handle.read()
        handle.seek(0)
        handle.write(text.replace(edited.body, NEW_BODY))
        handle.truncate()
    new_fact = store.create(replace(draft(1), body=NEW_BODY))
    assert new_fact.created  # the edit not listed yet: a second copy, as documented
    old_fact = store.create(draft(1))
    assert old_fact.created  # was (a save taking the kept scan unchecked): answered `edited`
    bodies = sorted(
        m.body
        for m in store.scan().memories
        if m.id in {edited.id, new_fact.memory.id, old_fact.memory.id}
    )
    assert bodies == sorted([NEW_BODY, NEW_BODY, draft(1).body])


def test_a_killed_writers_temp_file_is_removed_by_a_save_after_a_listing_saw_it(
    tmp_path: Path,
) -> None:
    store = opened(tmp_path, 3)
    stale = store.directory / ".0000.md.abcd.tmp"
    stale.write_text("half a memory")
    old = time.time() - 2 * 3600
    os.utime(stale, (old, old))
    store.scan()  # the listing sees a temp name
    store.create(draft(1))
    assert not stale.exists()
    assert store.create(draft(2)).created and not store._temp_files  # none left: not looked for
