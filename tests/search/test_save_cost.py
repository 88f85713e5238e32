"""The search side of a save at 100,000 memories: the save's sync once passed over every
memory several times (the keyword index, the fuzzy signature, the kinds, the fingerprints, the
plan, the pending check, the term statistics) and rewrote the term statistics whole (~1.2 MB at
100,000). Each part now follows what changed (search/changes.py: by object identity) and the
statistics are appended to (search/term_log.py). Pinned here by counting, never by the clock:
the Python calls the search package makes for one warm save are the same at two store sizes,
and the bytes the statistics' files take per save; with random adds, edits and deletes (and
another process writing) the index, the keyword index and the persisted statistics equal what
a rebuild from scratch gives."""

from __future__ import annotations

import cProfile
import json
import os
import pstats
import random
from collections import Counter
from dataclasses import replace
from pathlib import Path

from local_recall.memory.model import Memory
from local_recall.recall import Recall
from local_recall.search import relevance as rel
from local_recall.search.embedders import OllamaEmbedder
from local_recall.search.index.plan import plan_index_sync, row_key
from local_recall.search.index.rows import MemoryIndex
from local_recall.search.keyword_index import KeywordIndex
from local_recall.search.relevance_inputs import RelevanceInputs
from local_recall.search.term_log import TERMS_JSON, TERMS_LOG, TermPolicy, read_term_stats
from local_recall.settings import Settings
from tests.conftest import clean_env, git_init
from tests.fake_ollama import FakeOllama, fake_ollama_fixture  # noqa: F401  (the fixture)

WORDS = ("cache", "index", "daemon", "socket", "hook", "lock", "queue", "parser", "retry", "wheel")


def open_recall(repo: Path, server: FakeOllama) -> Recall:
    embedder = OllamaEmbedder(host=server.url)
    settings = Settings(root=repo, environ=clean_env(), embedder_factory=lambda _c: embedder)
    return Recall.open(settings=settings)


def new_repo(tmp_path: Path, name: str) -> Path:
    root = git_init(tmp_path / name)
    Recall.open(settings=Settings(root=root, environ=clean_env())).init()
    return root


def mcp_save(recall: Recall, subject: str, body: str) -> None:
    """As the MCP tool saves: the paraphrase check syncs the index first."""
    found = recall.save(subject, body, source="mcp", reviewed=False, unless_paraphrase=True)
    assert found.created, found


def search_calls_of_a_save(repo: Path, server: FakeOllama, size: int) -> Counter[str]:
    """The calls of each function of the search package during one warm MCP save in a store
    of `size` memories (a long-lived process: the keyword index kept)."""
    recall = open_recall(repo, server)
    for n in range(size):
        recall.add(f"Fact {n} {WORDS[n % 10]}", f"The {WORDS[n % 7]} of {n} needs care, {n}.")
    recall.searcher.keep_keywords()
    recall.sync_index()
    mcp_save(recall, "Warm up", "The first save after a sync: caches settle here.")
    profile = cProfile.Profile()
    profile.enable()
    mcp_save(recall, "Uploads retry", "Uploads retry after 1, 4 and 16 minutes.")
    profile.disable()
    calls: Counter[str] = Counter()
    for (file, _line, name), stat in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        if f"local_recall{os.sep}search{os.sep}" in file:
            calls[f"{Path(file).name}:{name}"] += stat[1]
    return calls


def test_a_warm_save_makes_the_same_search_calls_at_any_store_size(
    tmp_path: Path, fake_ollama: FakeOllama
) -> None:
    """At 10 and at 40 memories the save's search side calls each of its functions as often
    (within the few that vary with the data): nothing in it visits every memory, not even the
    load's keying (a save's store lists its memories in date order, the new one last: the
    held mapping is copied, changes.load_kind). Before, the term statistics and the keyword
    index asked every memory's terms (22 -> 82 calls of `RelevanceInputs.terms`), and the
    load's `row_key`, the pending check, the fuzzy signature and the kinds each iterated every
    memory."""
    small = search_calls_of_a_save(new_repo(tmp_path, "small"), fake_ollama, 10)
    large = search_calls_of_a_save(new_repo(tmp_path, "large"), fake_ollama, 40)
    # a function called once per memory would make 30 more calls; a few calls come and go
    # with the data (cached stems, the paraphrase ranking's ties)
    grew = {name: (small[name], large[name]) for name in large if large[name] - small[name] >= 5}
    assert not grew, grew
    assert small["relevance_inputs.py:terms"] <= 4  # the saved memory's, not every memory's


def test_a_save_appends_to_the_term_statistics(tmp_path: Path, fake_ollama: FakeOllama) -> None:
    """The statistics' base (`terms.json`) is left alone by a save: what its sync found new
    (the save before it) is one appended line; a cold reader (base + log) gets the counts of
    every memory from scratch."""
    repo = new_repo(tmp_path, "repo")
    recall = open_recall(repo, fake_ollama)
    for n in range(30):
        recall.add(f"Fact {n} {WORDS[n % 10]}", f"The {WORDS[n % 7]} of {n} needs care, {n}.")
    recall.sync_index()
    mcp_save(recall, "Warm up", "The first save after a sync: caches settle here.")
    state = recall.layout.state_dir
    base = os.lstat(state / TERMS_JSON)
    log = state / TERMS_LOG
    log_before = log.stat().st_size if log.exists() else 0
    mcp_save(recall, "Uploads retry", "Uploads retry after 1, 4 and 16 minutes, then give up.")
    after = os.lstat(state / TERMS_JSON)
    assert (after.st_ino, after.st_mtime_ns) == (base.st_ino, base.st_mtime_ns)  # not rewritten
    appended = log.stat().st_size - log_before
    assert 0 < appended < 400, appended  # the new memory's stems, not the store's (~2 KB here)
    assert base.st_size > 4 * appended
    recall.searcher.sync(background=False)  # as the next save's: this save's memory counted
    memories = recall.scan().memories
    expected = rel.term_stats(rel.memory_terms(m.subject, m.keywords, m.body) for m in memories)
    found = read_term_stats(state)
    assert found is not None and (found.documents, found.df) == (len(memories), expected.df)


def memory(rng: random.Random, memory_id: str) -> Memory:
    from datetime import UTC, datetime

    def text(n: int) -> str:
        return " ".join(rng.sample(WORDS, n))

    return Memory(
        id=memory_id,
        subject=text(3),
        body=text(rng.randrange(1, 8)),
        keywords=tuple(rng.sample(WORDS, rng.randrange(3))),
        applies_to="global",
        occurred_at=datetime(2026, 1, 1, tzinfo=UTC),
        content_hash=str(rng.random()),
    )


def test_persisted_statistics_equal_a_count_from_scratch(tmp_path: Path) -> None:
    """Two processes (two RelevanceInputs) persist by turns, after random adds, edits, re-reads
    and deletes, sometimes folding the log (a tiny policy: often); a torn append is ignored
    and cut. Whatever happened, a cold reader's statistics equal `term_stats` of all."""
    rng = random.Random(7)
    processes = [RelevanceInputs(tmp_path), RelevanceInputs(tmp_path)]
    policy = TermPolicy(share=0.5, hard_share=2.0, min_bytes=64)
    memories = {f"episodic/{i}": memory(rng, str(i)) for i in range(20)}
    folded = appended = 0
    for step in range(60):
        memories = dict(memories)  # each load is a new mapping (a snapshot)
        for key in rng.sample(sorted(memories), rng.randrange(3)):
            del memories[key]
        for _ in range(rng.randrange(4)):
            n = rng.randrange(40)
            memories[f"episodic/{n}"] = memory(rng, str(n))  # new, or an edit
        if rng.random() < 0.2:  # read again: equal memories, other objects
            memories = {k: replace(m) for k, m in memories.items()}
        before = (tmp_path / TERMS_JSON).stat().st_ino if step else None
        processes[rng.randrange(2)].persist_stats(
            memories, compact=rng.random() < 0.5, policy=policy
        )
        if before is not None:
            changed = (tmp_path / TERMS_JSON).stat().st_ino != before
            folded, appended = folded + changed, appended + (not changed)
        if rng.random() < 0.15:  # a crash mid-append: half a line
            with (tmp_path / TERMS_LOG).open("ab") as handle:
                handle.write(b'{"documents": 1, "df": {"cach')
        expected = rel.term_stats(
            rel.memory_terms(m.subject, m.keywords, m.body) for m in memories.values()
        )
        found = read_term_stats(tmp_path)
        assert found is not None, step
        assert (found.documents, found.df) == (expected.documents, expected.df), step
    assert folded and appended > folded  # both paths ran, appends the most


def test_a_hostile_log_reads_as_no_statistics(tmp_path: Path) -> None:
    """A planted log line of another shape, or one that drives a count below zero, makes the
    statistics unusable (computed from the files), never wrong; a log naming another base is
    ignored (the base alone)."""
    inputs = RelevanceInputs(tmp_path)
    memories = {"episodic/a": memory(random.Random(1), "a")}
    inputs.persist_stats(memories, compact=False)
    good = read_term_stats(tmp_path)
    assert good is not None
    log = tmp_path / TERMS_LOG
    head = log.read_bytes().splitlines()[0]
    for line in (b'{"documents": 1, "df": {"zzz": -5}}', b'{"documents": "x", "df": {}}', b"[]"):
        log.write_bytes(head + b"\n" + line + b"\n")
        assert read_term_stats(tmp_path) is None, line
    log.write_bytes(
        json.dumps({"token": "another"}).encode() + b"\n" + b'{"documents": 9, "df": {}}\n'
    )
    found = read_term_stats(tmp_path)
    assert found is not None and (found.documents, found.df) == (good.documents, good.df)


def test_the_index_after_random_saves_equals_a_rebuild(repo: Path, fake_ollama: FakeOllama) -> None:
    """A long-lived searcher (keyword index kept) syncs after random adds, edits, keyword edits,
    deletes, another process's saves and an embedder outage: a sync plans only what changed
    when its last sync left the table in line, yet the table always ends as a full plan would
    leave it, the keyword index answers as one built from scratch, the kinds are right."""
    rng = random.Random(5)
    recall = open_recall(repo, fake_ollama)
    other = open_recall(repo, fake_ollama)
    recall.searcher.keep_keywords()
    ids = [recall.add(f"Memory {n} {WORDS[n]}", f"The {WORDS[n]} needs care.").id for n in range(5)]
    searcher = recall.searcher
    searcher.sync(background=False)
    down = False
    for step in range(24):
        action = rng.choice(("add", "add", "edit", "keywords", "delete", "other", "down"))
        if action == "down":
            down = not down
            if down:
                fake_ollama.fail_with(500, "model crashed")
            else:
                fake_ollama.recover()
        elif action == "add" or not ids:
            ids.append(recall.add(f"Memory {step}", f"The {rng.choice(WORDS)} is {step}.").id)
        elif action == "edit":
            recall.update(rng.choice(ids), body=f"The {rng.choice(WORDS)} was {step}.")
        elif action == "keywords":
            recall.update(rng.choice(ids), keywords=[rng.choice(WORDS), f"step{step}"])
        elif action == "delete":
            recall.forget(ids.pop(rng.randrange(len(ids))))
        else:
            ids.append(other.add(f"Other {step}", f"The {rng.choice(WORDS)} moved {step}.").id)
            other.searcher.sync(background=False)
        searcher.sync(background=False)
        memories = {row_key(m.kind, m.id): m for m in recall.scan().memories}
        fresh = MemoryIndex(searcher.index.directory, searcher.index.lock_path)
        plan = plan_index_sync(fresh.fingerprints_of(memories), fresh.fingerprints())
        assert plan.to_update == plan.to_remove == (), (step, action, plan)
        assert down or plan.to_embed == (), (step, action, plan)  # pending rows: text only
        scratch = KeywordIndex()
        scratch.update(memories, RelevanceInputs(recall.layout.state_dir).terms)
        kept = searcher.gather.keywords
        assert kept is not None
        for word in WORDS:
            stems = rel.query_profile(word).stems
            assert kept.search(stems, 50) == scratch.search(stems, 50), (step, word)
        assert searcher.gather.kinds == {m.kind for m in memories.values()}


def test_appended_vectors_equal_a_concatenation_with_their_norms() -> None:
    """The paraphrase check's copy of the whole-text vectors takes a save's row into spare room
    (no copy of every vector) with its norm; any batch, large or small, reads back as the
    concatenation would, norms bit for bit as computed over the whole matrix."""
    import numpy as np

    from local_recall.search.index.row_copy import WholeVectors, vectors_removed

    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((3, 8)).astype(np.float32)
    whole = WholeVectors(("episodic/a", "episodic/b", "episodic/c"), matrix)
    expected_keys, expected = list(whole.keys), matrix
    for step, size in enumerate((1, 200, 1, 70, 1)):
        rows = rng.standard_normal((size, 8)).astype(np.float32)
        keys = [f"episodic/{step}-{i}" for i in range(size)]
        old = whole
        whole = whole.appended(keys, rows)
        expected_keys, expected = expected_keys + keys, np.concatenate([expected, rows])
        assert list(whole.keys) == expected_keys and whole.matrix.tobytes() == expected.tobytes()
        assert whole.row_norms().tobytes() == np.linalg.norm(expected, axis=1).tobytes()
        assert len(old.matrix) == len(expected) - size  # an older copy is left as it was
    gone = vectors_removed(whole, ["episodic/b", "episodic/1-5"])
    assert "episodic/b" not in gone.keys and len(gone.keys) == len(expected_keys) - 2
    keep = [i for i, key in enumerate(expected_keys) if key not in ("episodic/b", "episodic/1-5")]
    assert gone.row_norms().tobytes() == np.linalg.norm(expected[keep], axis=1).tobytes()


def test_a_load_finds_what_changed_whatever_the_list_did() -> None:
    """`load_kind` (the searcher's load of one store): whether the store's list grew at or
    near its end (the held mapping copied), lost or replaced memories anywhere, or came back re-read
    (equal memories, other objects), the mapping equals one built from scratch and the keys
    reported changed are exactly those whose memory is another object, or not equal."""
    from local_recall.search.changes import load_kind

    rng = random.Random(11)
    listed = [memory(rng, str(n)) for n in range(12)]
    held = None
    for _ in range(80):
        before = None if held is None else dict(held[1])
        actions = ("append", "append", "insert", "remove", "replace", "reread", "same")
        action = rng.choice(actions)
        if action == "append":
            listed = [*listed, memory(rng, f"new{rng.random()}")]
        elif action == "insert":  # a save whose date sorts before the last memories'
            at = len(listed) - rng.randrange(min(3, len(listed)) + 1)
            listed = [*listed[:at], memory(rng, f"new{rng.random()}"), *listed[at:]]
        elif action == "remove" and listed:
            drop = rng.randrange(len(listed))
            listed = [m for i, m in enumerate(listed) if i != drop]
        elif action == "replace" and listed:
            at = rng.randrange(len(listed))
            listed = [*listed[:at], memory(rng, listed[at].id), *listed[at + 1 :]]
        elif action == "reread":
            listed = [replace(m) for m in listed]
        held, changed = load_kind(listed, held, lambda m: f"episodic/{m.id}")
        assert held[1] == {f"episodic/{m.id}": m for m in listed}, action
        if before is not None:
            moved = {k for k, m in held[1].items() if k not in before or before[k] != m}
            assert moved <= set(changed), action
            assert all(held[1][k] is not before.get(k) for k in changed), action


def test_a_fifo_or_an_oversized_log_never_stalls_a_save(tmp_path: Path) -> None:
    """A FIFO in the log's place (opening one waits for a writer: a save stalled for good) or
    a log past the size cap is no log: reading does not wait, and persisting writes a new base
    and log, after which the statistics are a count from scratch again."""
    import threading

    inputs = RelevanceInputs(tmp_path)
    memories = {"episodic/a": memory(random.Random(1), "a")}
    inputs.persist_stats(memories, compact=False)
    grown = {**memories, "episodic/b": memory(random.Random(2), "b")}
    expected = rel.term_stats(
        rel.memory_terms(m.subject, m.keywords, m.body) for m in grown.values()
    )
    log = tmp_path / TERMS_LOG
    for plant in ("fifo", "oversized"):
        log.unlink()
        if plant == "fifo":
            os.mkfifo(log)
        else:
            log.write_bytes(json.dumps({"token": "x"}).encode() + b"\n" + b" " * (257 << 20))
        done: list[object] = []

        def read_then_persist() -> None:
            done.append(read_term_stats(tmp_path))
            inputs.persist_stats(dict(grown), compact=False)
            done.append(read_term_stats(tmp_path))

        worker = threading.Thread(target=read_then_persist, daemon=True)
        worker.start()
        worker.join(120)  # a hang guard: a few syscalls and one small write
        assert len(done) == 2, plant
        first, after = done
        assert first is None or isinstance(first, rel.TermStats), plant  # read, not stalled
        assert isinstance(after, rel.TermStats), plant
        assert (after.documents, after.df) == (expected.documents, expected.df), plant
