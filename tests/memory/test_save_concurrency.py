"""Saves under load: 20 agents saving at once used to get "timed out waiting for the store
lock" because each save held the lock across its paraphrase check, which syncs the index and
may load the embedding model. The check is now decided outside the lock; the lock covers the
hash check, a re-check only if memories were written meanwhile, and the write. A save that
still waits too long answers with the memory that now holds its fact."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from local_recall.memory.model import Draft
from local_recall.memory.store import MemoryStore
from local_recall.recall import Recall
from local_recall.repo.locks import LockBusy, held_lock
from local_recall.settings import Settings
from tests.conftest import clean_env

SAVE = """
import sys, time
from pathlib import Path
from local_recall.recall import Recall
from local_recall.search import paraphrases
from local_recall.settings import Settings

gate = Path(sys.argv[2])
real = paraphrases.paraphrase_in


def held(*args, **kwargs):  # the real check, held until the test has tried the lock
    (gate / "checking").touch()
    while not (gate / "go").exists():
        time.sleep(0.01)
    return real(*args, **kwargs)


paraphrases.paraphrase_in = held
recall = Recall.open(settings=Settings(root=Path(sys.argv[1])))
saved = recall.save(
    "Uploads retry with the quince table",
    "Failed uploads are retried after 1, 4 and 16 minutes, then the on-call is paged.",
    unless_paraphrase=True,
)
print(saved.created, saved.memory.id, flush=True)
"""


@pytest.mark.slow
def test_a_save_holds_the_store_lock_to_write_not_for_its_paraphrase_check(
    repo: Path, tmp_path: Path
) -> None:
    """While a save's paraphrase check runs (held here until the test has tried the lock; in
    real life it syncs the index and loads the model: seconds), another writer takes the
    store's lock at once. The old save held the lock across the check: this one would wait."""
    recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
    for n in range(12):  # not indexed: the check, once let go, embeds them (the model loads)
        recall.add(f"Earlier fact {n}", f"Earlier fact number {n} about subsystem {n * 7}.")
    gate = tmp_path / "gate"
    gate.mkdir()
    saver = subprocess.Popen(
        [sys.executable, "-c", SAVE, str(repo), str(gate)],
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(12_000):  # 120 s at most, for a slow start under load
            if (gate / "checking").exists() or saver.poll() is not None:
                break
            time.sleep(0.01)
        assert (gate / "checking").exists(), saver.communicate()
        try:
            with held_lock(recall.memories.lock_path, timeout=10.0, what="the store lock"):
                taken = True
        except LockBusy:
            taken = False
    finally:
        (gate / "go").touch()
        out, err = saver.communicate(timeout=300)
    assert taken, "the save held the store lock across its paraphrase check"
    assert saver.returncode == 0, err
    assert out.startswith("True "), out
    assert (repo / "local-recall" / "index").is_dir()  # the check did run, for real


def test_a_save_that_waited_too_long_answers_with_the_memory_now_holding_its_fact(
    tmp_path: Path,
) -> None:
    """Another writer holds the lock past this save's patience and writes the same fact
    meanwhile: the save answers with that memory instead of "timed out"."""
    ids = iter([f"0b7a4f7e-1c55-4b8a-9d7e-3f1f2c9a8e0{n}" for n in range(1, 4)])
    folder, state = tmp_path / "episodic", tmp_path / "state"
    draft = Draft(
        subject="Uploads retry with the quince table",
        body="Failed uploads are retried after 1, 4 and 16 minutes.",
        keywords=("uploads",),
        applies_to="global",
        occurred_at=datetime(2026, 11, 28, 8, 0, tzinfo=UTC),
    )
    elsewhere = MemoryStore(tmp_path / "other", state / "other", new_id=lambda: next(ids))
    theirs = elsewhere.create(draft).memory  # the other writer's file, rendered as it would be
    assert theirs.path is not None
    folder.mkdir()
    patient = MemoryStore(folder, state, new_id=lambda: next(ids), lock_timeout=0.5)
    holding = threading.Event()

    def hold_and_write() -> None:  # a slow writer (another process, in real life)
        with held_lock(patient.lock_path, timeout=5.0):
            holding.set()
            time.sleep(0.2)  # the patient save has scanned and waits for the lock
            shutil.copy(theirs.path, folder / theirs.path.name)
            time.sleep(1.0)  # well past the patient save's 0.5 s

    thread = threading.Thread(target=hold_and_write)
    thread.start()
    holding.wait(5)
    try:
        created = patient.create(draft)
    finally:
        thread.join()
    assert (created.memory.id, created.created) == (theirs.id, False)
    assert sorted(p.name for p in folder.glob("*.md")) == [theirs.path.name]
    # nothing holds a fact this save did not find: the wait is reported, as before
    with pytest.raises(LockBusy), held_lock(patient.lock_path, timeout=5.0):
        patient.create(replace(draft, body="Another fact altogether."))
