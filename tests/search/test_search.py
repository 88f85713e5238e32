"""Index and search on real components: LanceDB in tmp_path, the real MiniLM model, the fake
Ollama HTTP server, the real CLI process."""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from local_recall.memory.drafts import make_draft
from local_recall.recall import Recall
from local_recall.search.embedders import Embedder, MiniLMEmbedder
from local_recall.search.query import SearchQuery
from local_recall.settings import Settings
from tests.conftest import CliRunner, clean_env
from tests.fake_ollama import FakeOllama

MEMORIES = [
    (
        "Deduplicate memories by content hash",
        "Memory files are deduplicated by the sha256 of the normalised body; store.create checks "
        "for an existing hash under a filelock so concurrent writers leave one file.",
        ["dedup", "content hash"],
        "file:local_recall/store.py",
    ),
    (
        "The ProcessedLog table",
        "ProcessedLog records which transcripts the pipeline already handled, so a restart resumes "
        "where it stopped.",
        ["pipeline state"],
        "area:pipeline",
    ),
    (
        "Ruff and mypy settings",
        "Ruff runs with line length 100 and mypy is strict on the package.",
        ["lint"],
        "global",
    ),
    (
        "Hooks must exit 0",
        "A hook that fails logs the error and exits 0 so Claude Code keeps working.",
        ["hooks"],
        "file:local_recall/hooks.py",
    ),
    (
        "Daemon socket path length",
        "Unix socket paths must be shorter than 108 bytes, so the socket lives in XDG_RUNTIME_DIR.",
        ["socket"],
        "file:local_recall/daemon.py",
    ),
    (
        "Rebuild the index when the embedder changes",
        "Changing the embedding model rebuilds the LanceDB index: vectors of two models are never "
        "mixed.",
        ["embedder"],
        "file:local_recall/index.py",
    ),
]
DEDUP_QUERY = "how do we deduplicate memories?"


class RecordingEmbedder:
    """The real embedder, counting the documents it embeds (optionally under another name, to
    look like a different model)."""

    def __init__(self, inner: Embedder, model: str | None = None) -> None:
        self.inner = inner
        self._model = model
        self.documents: list[str] = []

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:
        return self._model or self.inner.model

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.documents.extend(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self.inner.embed_query(text)


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    embedder = MiniLMEmbedder()
    embedder.load()
    return embedder


@pytest.fixture
def recorder(minilm: MiniLMEmbedder) -> RecordingEmbedder:
    return RecordingEmbedder(minilm)


def open_recall(root: Path, embedder: Embedder | None = None, **env: str) -> Recall:
    settings = Settings(root=root, environ=clean_env(env))
    if embedder is not None:
        settings = Settings(
            root=root, environ=clean_env(env), embedder_factory=lambda _config: embedder
        )
    return Recall.open(settings=settings)


def add_all(recall: Recall) -> dict[str, str]:
    """subject → id."""
    ids = {}
    for i, (subject, body, keywords, scope) in enumerate(MEMORIES):
        when = datetime(2025, 1, 1 + i, tzinfo=UTC)
        ids[subject] = recall.add(
            subject, body, keywords=keywords, scope=scope, occurred_at=when
        ).id
    return ids


@pytest.fixture
def indexed(repo: Path, recorder: RecordingEmbedder) -> tuple[Recall, dict[str, str]]:
    recall = open_recall(repo, recorder)
    ids = add_all(recall)
    report = recall.sync_index()
    assert (report.embedded, report.total, report.rebuilt) == (len(MEMORIES), len(MEMORIES), True)
    return recall, ids


def subjects(hits: Sequence[Any]) -> list[str]:
    return [h.subject for h in hits]


# --- finding things -------------------------------------------------------------------------


def test_dedup_question_finds_the_dedup_memory_in_every_mode(
    indexed: tuple[Recall, dict[str, str]],
) -> None:
    recall, ids = indexed
    for mode in ("hybrid", "semantic", "text"):
        hits = recall.search(SearchQuery(DEDUP_QUERY, mode=mode))
        assert hits[0].id == ids["Deduplicate memories by content hash"], mode
        assert 0.0 <= hits[-1].score <= hits[0].score <= 1.0
    best = recall.search(DEDUP_QUERY)[0]
    assert best.score >= 0.5  # a clear answer clears the hooks' default threshold (0.5)
    assert best.kind == "episodic" and best.tokens > 10 and Path(best.path).is_file()
    assert "deduplicated" in best.snippet
    assert recall.search_status().fallback is None


def test_query_returns_hits_with_their_memories_and_says_what_ran(
    indexed: tuple[Recall, dict[str, str]],
) -> None:
    recall, ids = indexed
    result = recall.query(SearchQuery(DEDUP_QUERY, limit=3))
    assert not result.degraded and result.degraded_reason is None
    assert result.ran == {"vector", "bm25", "fuzzy"}
    best = result.hits[0]
    assert best.id == ids["Deduplicate memories by content hash"]
    stored = recall.get(best.id)
    assert (best.memory.subject, best.memory.body) == (stored.subject, stored.body)
    assert best.signals is not None and best.signals.cosine and best.signals.bm25
    assert [h.id for h in result.hits] == [h.id for h in recall.search(DEDUP_QUERY, limit=3)]
    # the hooks' no-daemon path: the same call, the files and the vector cache (no index), and
    # the result says so; the score is the same calibrated relevance (identical features)
    files = recall.query(SearchQuery(DEDUP_QUERY, limit=3), sync=False, use_index=False)
    assert files.degraded and "files only" in (files.degraded_reason or "")
    assert files.ran == {"vector", "coverage", "fuzzy"}
    assert files.hits[0].id == best.id and 0 < files.hits[0].score <= 1
    assert abs(files.hits[0].score - best.score) < 1e-6
    assert files.hits[0].memory.body == stored.body
    assert recall.search_status().fallback is None  # a chosen files-only search is no failure


def test_typos_and_identifiers_hit_through_fuzzy_matching(
    indexed: tuple[Recall, dict[str, str]],
) -> None:
    recall, ids = indexed
    table = ids["The ProcessedLog table"]
    for query in ("procesed_log", "ProcessedLog", "processed log", "proccessedlog table"):
        assert recall.search(query, limit=1)[0].id == table, query
        assert recall.search(SearchQuery(query, mode="fuzzy", limit=1))[0].id == table, query
    assert (
        recall.search(SearchQuery("deduplcate memmories", mode="fuzzy", limit=1))[0].id
        == (ids["Deduplicate memories by content hash"])
    )


@pytest.mark.parametrize(
    "query",
    [
        'a OR b AND "',
        '"',
        "'; DROP TABLE memories; --",
        "kind = 'thinking' OR 1=1",
        "(",
        "*",
        "title:foo",
        "x" * 10_000,
        "🙂 émoji ünïcødé 日本語",
        "\x00\n\t",
        "NOT",
        "AND OR NOT",
    ],
)
def test_adversarial_queries_never_raise(
    indexed: tuple[Recall, dict[str, str]], query: str
) -> None:
    recall, _ = indexed
    for mode in ("hybrid", "text", "fuzzy"):
        hits = recall.search(SearchQuery(query, mode=mode), sync=False)
        assert all(0.0 <= h.score <= 1.0 for h in hits)


def test_empty_query_returns_nothing(indexed: tuple[Recall, dict[str, str]]) -> None:
    recall, _ = indexed
    assert recall.search("") == [] and recall.search("   \n") == []


def test_scope_kind_and_date_filters(repo: Path, indexed: tuple[Recall, dict[str, str]]) -> None:
    recall, ids = indexed
    hits = recall.search(
        SearchQuery("socket hooks index store", scope="file:local_recall/", limit=20)
    )
    assert {h.applies_to for h in hits} <= {
        "global",
        "file:local_recall/store.py",
        "file:local_recall/hooks.py",
        "file:local_recall/daemon.py",
        "file:local_recall/index.py",
    }
    assert "area:pipeline" not in {h.applies_to for h in hits}
    no_global = recall.search(
        SearchQuery(
            "ruff lint settings", scope="file:local_recall/", limit=20, include_global=False
        )
    )
    assert ids["Ruff and mypy settings"] not in {h.id for h in no_global}
    assert recall.search("ruff lint settings", limit=1)[0].id == ids["Ruff and mypy settings"]
    one_file = recall.search(
        SearchQuery("hook exit", scope="file:local_recall/hooks.py", include_global=False)
    )
    assert [h.id for h in one_file] == [ids["Hooks must exit 0"]]
    dated = recall.search(
        SearchQuery("hook exit socket", since=datetime(2025, 1, 5, tzinfo=UTC), limit=20)
    )
    assert {h.occurred_at for h in dated} <= {
        datetime(2025, 1, 5, tzinfo=UTC),
        datetime(2025, 1, 6, tzinfo=UTC),
    }
    # thinking memories are indexed too, and only found when asked for
    thought = recall.thinking.create(
        make_draft(
            subject="Thinking about sockets",
            body="Maybe the socket path should be hashed.",
            keywords=None,
            applies_to="global",
            occurred_at=datetime(2025, 2, 1, tzinfo=UTC),
            source="test",
        )
    ).memory
    assert thought.id not in {h.id for h in recall.search("socket path hashed", limit=20)}
    thinking = recall.search(SearchQuery("socket path hashed", kind="thinking"))
    assert [h.id for h in thinking] == [thought.id] and thinking[0].kind == "thinking"


# --- keeping the index in step with the files -----------------------------------------------


def test_hand_edit_is_found_and_delete_is_gone(
    indexed: tuple[Recall, dict[str, str]], recorder: RecordingEmbedder
) -> None:
    recall, ids = indexed
    target = ids["Ruff and mypy settings"]
    path = recall.memories.path_of(target)
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace(
            "Ruff runs with line length 100", "Pyright replaced mypy for type checking of zebras"
        ),
        encoding="utf-8",
    )
    before = len(recorder.documents)
    hits = recall.search("zebras type checking", limit=1)
    assert hits[0].id == target and "zebras" in hits[0].snippet
    assert len(recorder.documents) == before + 1  # only the edited memory was embedded
    assert recall.search(SearchQuery("zebras", mode="text", limit=1))[0].id == target

    recall.delete(target)
    assert target not in {h.id for h in recall.search("zebras type checking", limit=20)}
    assert recall.sync_index().total == len(MEMORIES) - 1


def test_metadata_only_change_does_not_reembed(
    indexed: tuple[Recall, dict[str, str]], recorder: RecordingEmbedder
) -> None:
    recall, ids = indexed
    target = ids["Hooks must exit 0"]
    before = len(recorder.documents)
    recall.update(target, scope="area:hooks", keywords=["claude code", "exit status"])
    report = recall.sync_index()
    assert (report.embedded, report.updated, report.removed) == (0, 1, 0)
    assert len(recorder.documents) == before
    hit = recall.search(SearchQuery("exit status", scope="area:hooks", include_global=False))[0]
    assert hit.id == target and hit.applies_to == "area:hooks"
    assert hit.keywords == ("claude code", "exit status")
    # the new keyword is searchable through full text
    assert recall.search(SearchQuery("status", mode="text", limit=1))[0].id == target
    noop = recall.sync_index()
    assert (noop.embedded, noop.updated, noop.removed, noop.rebuilt) == (0, 0, 0, False)


def test_rows_added_after_the_fulltext_index_are_found(
    indexed: tuple[Recall, dict[str, str]],
) -> None:
    recall, _ = indexed
    new = recall.add("Quokka deployment notes", "Deploy the quokka service with blue-green.")
    assert recall.search(SearchQuery("quokka", mode="text", limit=1))[0].id == new.id
    assert recall.search("quokka deployment", limit=1)[0].id == new.id


def test_unparsable_file_drops_out_until_fixed(indexed: tuple[Recall, dict[str, str]]) -> None:
    recall, ids = indexed
    target = ids["Daemon socket path length"]
    path = recall.memories.path_of(target)
    good = path.read_text(encoding="utf-8")
    path.write_text("no frontmatter at all", encoding="utf-8")
    assert target not in {h.id for h in recall.search("unix socket path bytes", limit=20)}
    path.write_text(good, encoding="utf-8")
    assert recall.search("unix socket path bytes", limit=1)[0].id == target
    assert path.read_text(encoding="utf-8") == good  # never rewritten by the index


def test_embedder_change_rebuilds(
    repo: Path, indexed: tuple[Recall, dict[str, str]], minilm: MiniLMEmbedder
) -> None:
    other = RecordingEmbedder(minilm, model="another-model")
    recall = open_recall(repo, other)
    report = recall.sync_index()
    assert report.rebuilt and report.embedded == len(MEMORIES)
    assert report.rebuild_reason is not None and "another-model" in report.rebuild_reason
    assert len(other.documents) == len(MEMORIES)
    meta = json.loads((recall.layout.index_dir / "meta.json").read_text())
    assert meta["embedder"].startswith("minilm:another-model:")


def test_deleted_index_rebuilds_to_the_same_results(indexed: tuple[Recall, dict[str, str]]) -> None:
    recall, _ = indexed
    queries = [DEDUP_QUERY, "socket", "what happens when a hook fails", "lint config"]
    before = [[(h.id, round(h.score, 3)) for h in recall.search(q)] for q in queries]
    shutil.rmtree(recall.layout.index_dir)
    report = recall.sync_index()
    assert report.rebuilt and report.embedded == len(MEMORIES)
    after = [[(h.id, round(h.score, 3)) for h in recall.search(q)] for q in queries]
    assert after == before


def test_rebuild_flag_embeds_everything_again(
    indexed: tuple[Recall, dict[str, str]], recorder: RecordingEmbedder
) -> None:
    recall, _ = indexed
    before = len(recorder.documents)
    report = recall.sync_index(rebuild=True)
    assert report.rebuilt and report.rebuild_reason == "asked for"
    assert len(recorder.documents) == before + len(MEMORIES)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(8))
def test_corrupt_index_is_rebuilt_never_fatal(
    indexed: tuple[Recall, dict[str, str]], seed: int
) -> None:
    recall, ids = indexed
    recall.add("Later memory", "Added after the first build so the table has versions.")
    recall.sync_index()
    files = sorted(p for p in recall.layout.index_dir.rglob("*") if p.is_file())
    rng = random.Random(seed)
    for victim in rng.sample(files, k=min(len(files), 1 + seed % 4)):
        if rng.random() < 0.5:
            victim.unlink()
        else:
            victim.write_bytes(b"\x00garbage" * rng.randint(0, 3))
    fresh = open_recall(recall.root, recall.searcher.embedder)
    # a process that does not sync still answers (from the index or, failing that, the files)
    assert fresh.search(DEDUP_QUERY, sync=False)
    hits = fresh.search(DEDUP_QUERY)
    assert hits[0].id == ids["Deduplicate memories by content hash"]
    assert fresh.sync_index().total == len(MEMORIES) + 1


# --- Ollama ---------------------------------------------------------------------------------


def test_ollama_provider_up_and_down(repo: Path) -> None:
    env = {"LOCAL_RECALL_EMBEDDER_PROVIDER": "ollama", "LOCAL_RECALL_EMBEDDER_TIMEOUT_SECONDS": "2"}
    with FakeOllama() as server:
        recall = open_recall(repo, LOCAL_RECALL_EMBEDDER_OLLAMA_HOST=server.url, **env)
        ids = add_all(recall)
        report = recall.sync_index()
        assert report.fallback is None and report.embedded == len(MEMORIES)
        assert server.embed_requests()
        meta = json.loads((recall.layout.index_dir / "meta.json").read_text())
        assert meta["embedder"] == "ollama:nomic-embed-text:768"
        hits = recall.search(SearchQuery("unix socket path bytes", mode="semantic"))
        assert hits[0].id == ids["Daemon socket path length"]
        url = server.url
    # Ollama stops: search falls back to text + fuzzy and says so; nothing raises
    down = open_recall(repo, LOCAL_RECALL_EMBEDDER_OLLAMA_HOST=url, **env)
    new = down.add("Zeppelin mooring", "The zeppelin is moored at the north mast.")
    report = down.sync_index()
    assert report.fallback is not None and not report.rebuilt
    for mode in ("hybrid", "semantic"):
        hits = down.search(SearchQuery(DEDUP_QUERY, mode=mode))
        assert hits[0].id == ids["Deduplicate memories by content hash"]
    assert down.search("zeppelin mooring", limit=1)[0].id == new.id  # a text-only row
    assert "embedder unavailable" in (down.search_status().fallback or "")
    degraded = down.query(SearchQuery(DEDUP_QUERY))
    assert "embedder unavailable" in (degraded.degraded_reason or "")
    assert degraded.ran == {"bm25", "fuzzy"}
    # back up: the text-only row gets its vector, the rest are left alone
    with FakeOllama() as server:
        up = open_recall(repo, LOCAL_RECALL_EMBEDDER_OLLAMA_HOST=server.url, **env)
        report = up.sync_index()
        assert (report.embedded, report.rebuilt, report.fallback) == (1, False, None)
        assert up.search(SearchQuery("zeppelin", mode="semantic", limit=1))[0].id == new.id
        assert up.search_status().fallback is None
        assert not up.query(SearchQuery("zeppelin mooring")).degraded


def test_no_embedder_and_no_index_still_answers(repo: Path) -> None:
    env = {
        "LOCAL_RECALL_EMBEDDER_PROVIDER": "ollama",
        "LOCAL_RECALL_EMBEDDER_OLLAMA_HOST": "http://127.0.0.1:9",  # nothing listens
        "LOCAL_RECALL_EMBEDDER_TIMEOUT_SECONDS": "1",
    }
    recall = open_recall(repo, **env)
    ids = add_all(recall)
    hits = recall.search(DEDUP_QUERY)
    assert hits[0].id == ids["Deduplicate memories by content hash"]
    # the word-match fallback still clears the hooks' threshold for a plain paraphrase
    assert (
        recall.search(SearchQuery("deduplicating memory files", min_score=0.35))[0].id == hits[0].id
    )
    assert recall.search_status().fallback
    assert recall.query(SearchQuery(DEDUP_QUERY)).degraded


def test_files_only_search_loads_neither_lancedb_nor_a_model(repo: Path) -> None:
    """`use_index=False` is what a prompt hook does with no daemon: ~0.5 s, not ~3 s."""
    import subprocess
    import sys

    add_all(open_recall(repo))
    script = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from local_recall.recall import Recall, Settings\n"
        "recall = Recall.open(settings=Settings(root=Path(sys.argv[1]), environ={}))\n"
        "from local_recall.search.query import SearchQuery\n"
        "wanted = SearchQuery(sys.argv[2], min_score=0.35)\n"
        "hits = recall.search(wanted, sync=False, use_index=False)\n"
        "heavy = [m for m in ('lancedb', 'onnxruntime', 'pyarrow') if m in sys.modules]\n"
        "print(json.dumps({'hits': [h.subject for h in hits], 'heavy': heavy}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(repo), "deduplicating memory files"],
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_env(),
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["heavy"] == []
    assert result["hits"][0] == "Deduplicate memories by content hash"
    assert not (repo / "local-recall" / "index").exists()  # nothing built or opened


# --- scale paths ----------------------------------------------------------------------------


@pytest.mark.slow
def test_no_ann_index_within_the_exact_products_reach_and_rows_added_after_are_found(
    repo: Path, minilm: MiniLMEmbedder
) -> None:
    # the retired `search.ann_threshold` still loads and is ignored: below EXACT_NEAREST_MAX_ROWS
    # the exact product over the vector cache answers, and no ANN index is built
    recall = open_recall(repo, minilm, LOCAL_RECALL_SEARCH_ANN_THRESHOLD="256")
    for i in range(260):
        recall.memories.create(
            make_draft(
                subject=f"Filler memory {i}",
                body=f"Note {i} about module m{i} and its settings.",
                keywords=[f"m{i}"],
                applies_to="global",
                occurred_at=datetime(2025, 1, 1, tzinfo=UTC),
                source="test",
            )
        )
    recall.sync_index()
    assert not recall.searcher.index.has_ann()
    late = recall.add("Avalanche beacon battery", "Replace the avalanche beacon battery yearly.")
    assert recall.search(SearchQuery("avalanche beacon", mode="semantic", limit=3))[0].id == late.id
    assert recall.search("avalanche beacon", limit=1)[0].id == late.id


# --- the command line -----------------------------------------------------------------------


@pytest.mark.slow
def test_cli_index_search_json_and_doctor(cli: CliRunner, repo: Path) -> None:
    for subject, body, keywords, scope in MEMORIES[:3]:
        args = ["add", "--subject", subject, "--body", body, "--scope", scope]
        for keyword in keywords:
            args += ["--keyword", keyword]
        assert cli(*args).returncode == 0
    indexed = cli("index", "--json")
    assert indexed.returncode == 0, indexed.stderr
    assert json.loads(indexed.stdout)["embedded"] == 3
    found = cli("search", DEDUP_QUERY, "--json", "--limit", "2")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    assert hits[0]["subject"] == MEMORIES[0][0] and len(hits) <= 2
    assert set(hits[0]) == {
        "id",
        "subject",
        "score",
        "applies_to",
        "occurred_at",
        "keywords",
        "snippet",
        "tokens",
        "kind",
        "path",
        "stale",  # lifecycle flags: null when fresh / merged here (docs/team.md)
        "branch",
        "unreviewed",
        "superseded_by",
        "disputed",  # why a session found it wrong: null when nobody did (docs/team.md)
    }
    assert hits[0]["occurred_at"].endswith("Z") and 0 <= hits[0]["score"] <= 1
    assert found.stderr == ""
    plain = cli("search", "procesed_log", "--mode", "fuzzy")
    assert plain.returncode == 0 and "ProcessedLog" in plain.stdout
    bad = cli("search", "x", "--mode", "magic")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    doctor = cli("doctor", "--json")
    checks = {c["name"]: c for c in json.loads(doctor.stdout)}
    assert checks["embedder"]["status"] == "ok" and checks["index"]["status"] == "ok"


def test_a_save_judges_paraphrases_on_its_scan_and_rescans_only_under_its_lock(
    indexed: tuple[Recall, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`save(unless_paraphrase=True)` checks the content hash and the paraphrase on one scan,
    outside the store's lock, and the index sync behind the paraphrase check takes that scan
    instead of making its own; under the lock one more scan sees whether anything was written
    meanwhile (the check no longer holds the lock). Each scan stats every file;
    the one under the lock only when the folder or the catalog moved since the first
    (a folder changed within a file-system tick of its listing is not trusted, hence `settled`)."""
    from local_recall.memory.store import MemoryStore

    recall, _ = indexed
    scans: list[str] = []
    real_scan = MemoryStore.scan
    folder = recall.layout.episodic_dir

    def counted(store: MemoryStore) -> Any:
        scans.append(store.kind)
        return real_scan(store)

    def settled() -> None:  # the last write a second ago, as between an agent's saves
        past = os.stat(folder).st_mtime_ns - 10**9
        os.utime(folder, ns=(past, past))

    monkeypatch.setattr(MemoryStore, "scan", counted)
    settled()
    created = recall.save(
        "Dedup memories by their content hash",
        "Memory files are deduplicated by the sha256 of the normalised body, so two writers "
        "leave one file.",
        unless_paraphrase=True,
    )
    assert created.paraphrase and not created.created  # the dedup memory, in other words
    assert scans.count("episodic") == 1, scans  # found on the first scan: no lock taken
    scans.clear()
    settled()
    fresh = recall.save("Tokens are counted with tiktoken", "cl100k_base, cached per process.")
    assert fresh.created and scans.count("episodic") == 1, scans  # nothing moved meanwhile
    scans.clear()
    settled()
    new = recall.save(
        "Hooks exit 0 on any error", "A hook never breaks a session.", unless_paraphrase=True
    )
    assert new.created and not new.paraphrase
    assert scans.count("episodic") == 1, scans
