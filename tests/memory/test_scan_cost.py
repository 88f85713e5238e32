"""What a first scan does per memory file, counted (issue 36.2): no wall clock, no mocks.

At 100,000 memories a first scan (no catalog yet) cost ~49 s under load. Per file it resolved
the folder's path again (`realpath`: an lstat per folder on the way) and handed the header to
PyYAML (libyaml's parser, then its pure-Python constructor). Now the folder is checked once per
scan and a header in the written shape is read without PyYAML. Counted here with cProfile on a
real store in tmp_path: 10x the files must not bring more lstat calls, and no PyYAML call."""

from __future__ import annotations

import cProfile
import os
import pstats
from datetime import UTC, datetime, timedelta
from pathlib import Path

from local_recall.memory.format import render_memory
from local_recall.memory.model import Memory, content_hash, new_memory_id
from local_recall.memory.store import MemoryStore


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


def first_scan_calls(root: Path, count: int) -> tuple[int, int, int]:
    """(memories listed, lstat calls, PyYAML calls) of one scan without a catalog."""
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
    return len(scan.memories), lstats, yaml_calls


def test_a_first_scan_stats_the_folder_once_and_never_calls_pyyaml(tmp_path: Path) -> None:
    small = first_scan_calls(tmp_path / "small", 20)
    large = first_scan_calls(tmp_path / "large", 200)
    assert (small[0], large[0]) == (20, 200)
    assert large[1] == small[1], (small, large)  # was ~7 lstats more per file (realpath)
    assert large[2] == small[2] == 0, (small, large)  # was thousands of calls per file


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
