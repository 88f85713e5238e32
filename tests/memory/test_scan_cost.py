"""What a first scan does per memory file, counted: no wall clock, no mocks.

At 100,000 memories a first scan (no catalog yet) cost ~49 s under load. Per file it resolved
the folder's path again (`realpath`: an lstat per folder on the way) and handed the header to
PyYAML (libyaml's parser, then its pure-Python constructor). Now the folder is checked once per
scan and a header in the written shape is read without PyYAML. Counted here with cProfile on a
real store in tmp_path: 10x the files must not bring more lstat calls, and no PyYAML call."""

from __future__ import annotations

import cProfile
import gc
import os
import pstats
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from local_recall.memory.drafts import make_draft
from local_recall.memory.format import render_memory
from local_recall.memory.model import Draft, Memory, content_hash, new_memory_id
from local_recall.memory.store import MemoryStore
from local_recall.memory.store_files import RACY_NS, settled_stamp

BAD = "22222222-0000-4000-8000-000000000000"


def write_memories(folder: Path, count: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        memory_id = f"00000000-0000-4000-8000-{i:012d}"
        body = f"We batch the queue writes because concurrent writers race ({i})."
        memory = Memory(
            id=memory_id,
            subject=f"Batch queue writes: case {i} (it's #{i})",
            body=body,
            keywords=("queue", "batch", f"case_{i}"),
            applies_to=("global", "area:queue", "file:src/queue/")[i % 3],
            occurred_at=datetime(2024, 1, 1, tzinfo=UTC) + timedelta(minutes=i),
            content_hash=content_hash(body),
            source="bench",
        )
        (folder / f"{memory_id}.md").write_text(render_memory(memory), encoding="utf-8")


def first_scan_calls(root: Path, count: int) -> tuple[int, int, int, int, int, int, int]:
    """(memories listed, lstat calls, PyYAML calls, uuid.UUID parses, bodies normalised, read
    calls, listed files stated) of one scan without a catalog."""
    folder = root / "local-recall" / "episodic-memory"
    write_memories(folder, count)
    store = MemoryStore(folder, root / "local-recall" / "state", new_id=new_memory_id)
    profile = cProfile.Profile()
    profile.enable()
    scan = store.scan()
    profile.disable()
    assert not scan.problems
    calls = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    lstats = sum(c[1] for (_f, _l, name), c in calls.items() if name.endswith("posix.lstat>"))
    yaml_calls = sum(c[1] for (f, _l, _n), c in calls.items() if f"{os.sep}yaml{os.sep}" in f)
    uuids = sum(
        c[1] for (f, _l, n), c in calls.items() if f.endswith("uuid.py") and n == "__init__"
    )
    bodies = sum(c[1] for (_f, _l, name), c in calls.items() if name == "normalise_body")
    reads = sum(c[1] for (_f, _l, name), c in calls.items() if name.endswith("posix.read>"))
    stated = sum(
        c[1]
        for (_f, _l, name), c in calls.items()
        if "posix.DirEntry' objects>" in name and "stat" in name
    )
    return len(scan.memories), lstats, yaml_calls, uuids, bodies, reads, stated


def test_a_first_scan_stats_the_folder_once_and_never_calls_pyyaml(tmp_path: Path) -> None:
    small = first_scan_calls(tmp_path / "small", 20)
    large = first_scan_calls(tmp_path / "large", 200)
    assert (small[0], large[0]) == (20, 200)
    assert large[1] == small[1], (small, large)  # was ~7 lstats more per file (realpath)
    assert large[2] == small[2] == 0, (small, large)  # was thousands of calls per file
    # a canonical id is its own parse (was a uuid.UUID per file), a body normalised once (twice)
    assert large[3] == small[3] == 0, (small, large)
    assert (small[4], large[4]) == (20, 200), (small, large)
    # one read a file: the size fstat gave is all there is (a second read to see the end was
    # a syscall per file)
    assert (small[5], large[5]) == (20, 200), (small, large)
    # each file keyed on the stat its read took (was a stat of each in the listing)
    assert small[6] == large[6] == 0, (small, large)


def test_a_first_scan_keys_files_as_a_listing_does(tmp_path: Path) -> None:
    """A first scan keys each file on the stat its read took, not the listing's: the keys are
    the listing's, so the next scan in the process finds the folder as listed (the same scan)
    and a scan in another process parses nothing; a bad file and a symlink are reported by
    both."""
    folder = tmp_path / "local-recall" / "episodic-memory"
    write_memories(folder, 20)
    (folder / f"{BAD}.md").write_text("no frontmatter\n")
    (folder / "11111111-0000-4000-8000-000000000000.md").symlink_to(folder / f"{BAD}.md")
    state = tmp_path / "local-recall" / "state"
    store = MemoryStore(folder, state, new_id=new_memory_id)
    first = store.scan()
    assert len(first.memories) == 20 and len(first.problems) == 2
    assert store.scan() is first  # the listing matched the keys the reads took
    profile = cProfile.Profile()
    profile.enable()
    again = MemoryStore(folder, state, new_id=new_memory_id).scan()
    profile.disable()
    calls = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    assert not sum(c[1] for (_f, _l, name), c in calls.items() if name == "parse_memory_text")
    assert again.memories == first.memories
    assert [str(p) for p in again.problems] == [str(p) for p in first.problems]


@pytest.mark.parametrize("enabled", [True, False])
def test_what_a_scan_built_is_not_left_to_the_young_collections(
    tmp_path: Path, enabled: bool
) -> None:
    """The memories a scan built are long-lived: handed to the oldest generation, so the
    collector's next young pass does not walk them all (~0.6 s after a first scan of 100,000
    files); the collector is left as it was found."""
    folder = tmp_path / "local-recall" / "episodic-memory"
    write_memories(folder, 50)
    store = MemoryStore(folder, tmp_path / "local-recall" / "state", new_id=new_memory_id)
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        scan = store.scan()
        assert gc.isenabled() is enabled
        young = {id(o) for generation in (0, 1) for o in gc.get_objects(generation)}
    finally:
        gc.enable() if was else gc.disable()
    assert len(scan.memories) == 50
    assert not [m for m in scan.memories if id(m) in young]


def test_a_scan_that_rebuilds_nothing_leaves_the_collector_s_generations_alone(
    tmp_path: Path,
) -> None:
    """Only a rebuild hands objects to the oldest generation: a daemon or a server scans on
    every request, and the young garbage of the moment must not wait for a full pass."""
    folder = tmp_path / "local-recall" / "episodic-memory"
    write_memories(folder, 5)
    store = MemoryStore(folder, tmp_path / "local-recall" / "state", new_id=new_memory_id)
    was = gc.isenabled()
    gc.disable()  # no collection of its own moves the probe meanwhile
    try:
        first = store.scan()
        probe: list[object] = [object()]  # young: made after the rebuild
        assert store.scan() is first  # nothing moved: the kept scan, no rebuild
        young = {id(o) for o in gc.get_objects(0)}
    finally:
        gc.enable() if was else gc.disable()
    assert id(probe) in young


def test_a_rescan_of_an_unchanged_folder_builds_nothing(tmp_path: Path) -> None:
    """A save scans the store twice (outside its lock, then under it): the second finds every
    file as the first listed it and hands back the same scan, building no memory and no list
    (two full rebuilds were most of a save's CPU at 5,000 memories)."""
    folder = tmp_path / "local-recall" / "episodic-memory"
    write_memories(folder, 30)
    store = MemoryStore(folder, tmp_path / "local-recall" / "state", new_id=new_memory_id)
    first = store.scan()
    assert store.scan() is first
    write_memories(folder, 31)  # rewrites the 30 in place (new mtimes) and adds one
    again = store.scan()
    assert again is not first and len(again.memories) == 31
    (folder / f"{again.memories[0].id}.md").unlink()
    assert [m.id for m in store.scan().memories] == [m.id for m in again.memories[1:]]


def draft(n: int) -> Draft:
    return make_draft(
        subject=f"Retry uploads, case {n}",
        body=f"Uploads are retried after {n} minutes, then the on-call is paged.",
        keywords=None,
        applies_to="global",
        occurred_at=datetime(2025, 1, 1, tzinfo=UTC) + timedelta(minutes=n),
        source="test",
    )


def no_paraphrase(_memories: Sequence[Memory]) -> Memory | None:
    return None  # the paraphrase check's answer when nothing says the same


def save_calls(root: Path, count: int) -> tuple[int, int, int, MemoryStore]:
    """(stats of memory files, scans rebuilt, per-entry look-ups) of a warm store's save, and
    the store."""
    folder = root / "local-recall" / "episodic-memory"
    write_memories(folder, count)
    store = MemoryStore(folder, root / "local-recall" / "state", new_id=new_memory_id)
    store.create(
        draft(1), paraphrase_of=no_paraphrase
    )  # warm: the catalog written, a save behind it
    past = os.stat(folder).st_mtime_ns - 10**9  # that save a second ago (the folder is trusted
    os.utime(folder, ns=(past, past))  # only once its mtime is older than a file-system tick)
    profile = cProfile.Profile()
    profile.enable()
    created = store.create(draft(2), paraphrase_of=no_paraphrase)
    store.scan()  # the next save's first scan
    profile.disable()
    assert created.created
    calls = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    stats = sum(c[1] for (_f, _l, name), c in calls.items() if "posix.DirEntry" in name)
    rebuilt = sum(c[1] for (_f, _l, name), c in calls.items() if name == "file_entries")
    # a catalog entry looked up, a memory's path named: once per memory in the store if any
    lookups = sum(
        c[1]
        for (file, _l, name), c in calls.items()
        if name == "<method 'get' of 'dict' objects>"
        or (file.endswith("pathlib.py") and name == "name")
    )
    return stats, rebuilt, lookups, store


def test_a_save_lists_the_folder_once_and_the_next_scan_rebuilds_nothing(tmp_path: Path) -> None:
    """A save at 5,000 memories once listed the folder twice (its scan, then
    the same scan under the store lock: ~30 ms each at 5,000 files), and the next scan rebuilt
    the list of memories because the save had dropped it. Now the scan under the lock is the
    first while neither the folder nor the catalog moved, and the save's file is added to the
    kept scan."""
    small_stats, small_rebuilt, small_lookups, _ = save_calls(tmp_path / "small", 20)
    large_stats, large_rebuilt, large_lookups, store = save_calls(tmp_path / "large", 200)
    # one listing of the 180 more files (each: stat, is_symlink, is_file), and the next scan's
    assert large_stats - small_stats == 2 * 3 * 180, (small_stats, large_stats)  # was 3 listings
    assert small_rebuilt == large_rebuilt == 0  # was 1: the next scan rebuilt the list
    # the catalog appends the new entry without comparing the others (was one look-up each),
    # and the kept scan takes the new memory without naming every path (was one each)
    assert large_lookups == small_lookups, (small_lookups, large_lookups)
    kept = store.scan()
    scratch = MemoryStore(store.directory, tmp_path / "scratch-state", new_id=new_memory_id).scan()
    assert kept.memories == scratch.memories and kept.problems == scratch.problems


def test_a_folder_changed_within_a_tick_of_its_listing_is_not_trusted() -> None:
    listed_at = 5_000_000_000
    assert settled_stamp((7, 4_900_000_000, 4096), listed_at) == (7, 4_900_000_000, 4096)
    assert settled_stamp((7, listed_at - RACY_NS - 1, 4096), listed_at) is not None
    assert settled_stamp((7, listed_at - RACY_NS, 4096), listed_at) is None
    assert settled_stamp((7, listed_at + 1, 4096), listed_at) is None  # a clock behind the disk's


def test_the_scan_under_the_lock_sees_a_file_added_meanwhile(tmp_path: Path) -> None:
    """What another process (or `git pull`) adds between a save's scan and its lock moves the
    folder: the save's check under the lock lists it. A rewrite in place moves neither folder
    nor catalog; the next scan sees it."""
    folder = tmp_path / "local-recall" / "episodic-memory"
    write_memories(folder, 5)
    store = MemoryStore(folder, tmp_path / "local-recall" / "state", new_id=new_memory_id)
    first = store.scan()
    other = MemoryStore(folder, tmp_path / "other-state", new_id=new_memory_id)
    added = other.create(draft(3)).memory  # its own catalog: only the folder says so
    assert added.id in {m.id for m in store._rescan().memories}
    assert store._rescan() is store.scan()  # nothing moved since: the same scan
    path = folder / f"{first.memories[0].id}.md"
    path.write_text(path.read_text().replace("concurrent writers race", "two writers race"))
    assert "two writers race" in store.scan().memories[0].body


def test_a_first_scan_builds_each_memory_once_and_as_the_catalog_does(tmp_path: Path) -> None:
    """A first scan once parsed each file into a memory, made its catalog entry, then
    built the memory again from the entry (~10 % of a file's CPU). Now the parsed memory is
    kept when the entry holds it exactly; a person's key that JSON changes (a date) still goes
    through the entry. Either way the memories equal a scan through the catalog."""
    folder = tmp_path / "local-recall" / "episodic-memory"
    write_memories(folder, 30)
    for i, extra in enumerate(({"reviewed_on": date(2025, 1, 2)}, {"tags": ["a", {"b": 1}]})):
        path = folder / f"00000000-0000-4000-8000-{i:012d}.md"
        head, sep, body = path.read_text().partition("\n---\n")
        lines = [f"{key}: {value}" for key, value in extra.items()]
        path.write_text(head + "\n" + "\n".join(lines) + sep + body)
    state = tmp_path / "local-recall" / "state"
    profile = cProfile.Profile()
    profile.enable()
    first = MemoryStore(folder, state, new_id=new_memory_id).scan()
    profile.disable()
    calls = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    rebuilt = sum(c[1] for (_f, _l, name), c in calls.items() if name == "memory_from_entry")
    assert rebuilt == 1  # the file with a date (was 30: every file)
    through_catalog = MemoryStore(folder, state, new_id=new_memory_id).scan()
    assert len(first.memories) == 30 and not first.problems
    assert first.memories == through_catalog.memories
    assert [repr(m) for m in first.memories] == [repr(m) for m in through_catalog.memories]
    dated = next(m for m in first.memories if "reviewed_on" in m.extra)
    assert dated.extra["reviewed_on"] == "2025-01-02"  # as the catalog holds it
