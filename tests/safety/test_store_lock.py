"""The store lock is what makes create idempotent across processes: many processes saving the
same fact at the same instant leave one file, and every one of them gets its id.

The processes are forked from this (already importing) process and released together by a
barrier, so their saves overlap in time; without the lock each one's check finds nothing yet
and writes its own file (checked by removing the lock: 11 runs of 11 left 2 to 12 files)."""

from __future__ import annotations

import multiprocessing
from multiprocessing.synchronize import Barrier
from pathlib import Path

from local_recall.recall import Recall
from local_recall.settings import Settings
from tests.conftest import clean_env

WRITERS = 12
SUBJECT = "Retries back off exponentially"
BODY = "HTTP retries use exponential backoff capped at thirty seconds (ticket 1037)."


def _save_once(root: str, barrier: Barrier, results: multiprocessing.Queue[str]) -> None:
    try:
        recall = Recall.open(settings=Settings(root=Path(root), environ=clean_env()))
        recall.list()  # warm: the collision is between saves, not between first scans
        barrier.wait(timeout=60)
        results.put(recall.add(SUBJECT, BODY, keywords=["retries"]).id)
    except Exception as exc:  # reported by the test, not lost in the child
        results.put(f"error: {exc!r}")


def test_processes_saving_one_fact_at_once_leave_one_file(repo: Path) -> None:
    recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
    for n in range(40):  # a store with history: each save's scan takes a moment, as in use
        recall.add(f"Earlier fact {n}", f"Earlier fact number {n}.")
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(WRITERS)
    results: multiprocessing.Queue[str] = context.Queue()
    workers = [
        context.Process(target=_save_once, args=(str(repo), barrier, results))
        for _ in range(WRITERS)
    ]
    for worker in workers:
        worker.start()
    ids = [results.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
    assert [i for i in ids if i.startswith("error")] == []
    files = [
        p for p in recall.layout.episodic_dir.glob("*.md") if BODY in p.read_text(encoding="utf-8")
    ]
    assert len(files) == 1, f"{len(files)} files for one fact"
    assert set(ids) == {files[0].stem}  # every caller got the one memory's id
    assert [m.id for m in recall.list() if m.body == BODY] == [files[0].stem]
