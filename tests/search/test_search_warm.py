"""A long-lived process's search (the daemon, the MCP server): full-text candidates from the
in-process keyword index, and only the candidates that can matter scored in full. Both must
answer exactly what the plain path answers. Real components: LanceDB in tmp_path, the real
MiniLM model, 118 real memories (the coding benchmark's hand-written ones, committed in
benchmarks/coding/) and their prompts."""

from __future__ import annotations

import tomllib
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from local_recall.context.why import explain_prompt
from local_recall.memory.drafts import make_draft
from local_recall.memory.format import render_memory
from local_recall.memory.model import Memory, content_hash
from local_recall.recall import Recall
from local_recall.repo.files import write_text_atomic
from local_recall.search import gather, relevance, relevance_inputs
from local_recall.search.embedders import MiniLMEmbedder
from local_recall.search.query import SearchQuery
from local_recall.settings import Settings
from tests.conftest import clean_env, git_init

CODING = Path(__file__).parents[2] / "benchmarks" / "coding"
PROJECTS = ("pip", "celery", "pydantic", "scrapy", "sqlalchemy")


def coding_data() -> tuple[list[dict[str, Any]], list[str]]:
    memories, prompts = [], []
    for project in PROJECTS:
        raw = tomllib.loads((CODING / f"{project}.toml").read_text(encoding="utf-8"))
        memories += raw["memory"]
        prompts += [p["text"] for p in raw.get("prompt", [])]
        prompts += [p["text"] for p in raw.get("negative", [])]
    return memories, prompts


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The memory files written as the store writes them (one `add` each would cost a minute
    of the suite), then indexed once."""
    root = git_init(tmp_path_factory.mktemp("warm") / "repo")
    recall = open_recall(root)
    recall.init()
    memories, _ = coding_data()
    folder = recall.layout.episodic_dir
    folder.mkdir(parents=True, exist_ok=True)
    for n, item in enumerate(memories):
        draft = make_draft(
            subject=item["subject"],
            body=item["body"],
            keywords=item.get("keywords") or None,
            applies_to=item.get("scope", "global"),
            occurred_at=datetime.fromisoformat(item["date"].replace("Z", "+00:00")),
            source="test",
        )
        memory_id = str(uuid.UUID(int=n + 1, version=4))
        path = recall.memories.path_of(memory_id)
        memory = Memory(
            id=memory_id,
            subject=draft.subject,
            body=draft.body,
            keywords=draft.keywords,
            applies_to=draft.applies_to,
            occurred_at=draft.occurred_at,
            content_hash=content_hash(draft.body),
            source=draft.source,
            path=path,
        )
        write_text_atomic(path, render_memory(memory))
    recall.sync_index()
    return root


_MINILM = MiniLMEmbedder()


def open_recall(root: Path) -> Recall:
    settings = Settings(root=root, environ=clean_env(), embedder_factory=lambda _c: _MINILM)
    return Recall.open(settings=settings)


def answers(recall: Recall, prompts: list[str], **fields: Any) -> list[list[tuple[str, float]]]:
    found = []
    for text in prompts:
        result = recall.query(SearchQuery(text, **fields), sync=False)
        found.append([(hit.memory.id, round(hit.score, 9)) for hit in result.hits])
    return found


def unpruned(recall: Recall) -> Recall:
    """Every candidate scored in full, as before pruning."""
    score_ready = recall.searcher.relevance.score_ready
    recall.searcher.relevance.score_ready = (  # type: ignore[method-assign]
        lambda *args, keep=None, slack=1.0, needed=None, at_least=0: score_ready(*args)
    )
    return recall


def test_pruned_scoring_answers_exactly_what_scoring_every_candidate_does(store: Path) -> None:
    _, prompts = coding_data()
    assert len(prompts) > 100
    every, pruned = unpruned(open_recall(store)), open_recall(store)
    # the hook's ask (its full-text threshold, and its pointers' best whatever their score),
    # a search with no floor, and one hit (the decision still needs two)
    for fields, asked in (
        ({"limit": 10, "min_score": 0.5, "at_least": 3}, prompts),
        ({"limit": 10, "min_score": 0.3}, prompts[::2]),
        ({"limit": 5, "min_score": 0.0}, prompts[::4]),
        ({"limit": 1}, prompts[1::3]),
    ):
        want, got = answers(every, asked, **fields), answers(pruned, asked, **fields)
        assert sum(bool(hits) for hits in want) > 20  # the prompts do find things
        assert got == want


def test_keyword_candidates_agree_with_lancedb_full_text(store: Path) -> None:
    """Not identical (two tokenisers), but what the hook shows barely moves."""
    _, prompts = coding_data()
    lance, warm = open_recall(store), open_recall(store)
    warm.searcher.keep_keywords()
    warm.sync_index()
    assert warm.searcher.gather.keywords is not None
    assert len(warm.searcher.gather.keywords) == len(coding_data()[0])
    # the hook's ask, and `search`'s (hybrid, no floor): LanceDB's candidates in a fresh
    # process, the keyword index's in the daemon and the MCP server
    for fields in ({"min_score": 0.3, "prompt": True}, {}):
        want = answers(lance, prompts, limit=10, **fields)
        got = answers(warm, prompts, limit=10, **fields)
        pairs = list(zip(want, got, strict=True))
        same = sum([i for i, _ in a] == [i for i, _ in b] for a, b in pairs)
        top = sum([i for i, _ in a[:1]] == [i for i, _ in b[:1]] for a, b in pairs)
        # measured: 227 of 227 alike for the hook's ask (2026-11-28)
        assert same >= 0.95 * len(prompts), fields
        assert top >= 0.97 * len(prompts), fields


def test_pruning_skips_most_fuzzy_matches(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = relevance.fuzzy_share

    def counted(words: Any, head: Any, choices: Any = None) -> float:
        calls.append(str(words))
        return real(words, head, choices)

    monkeypatch.setattr(relevance_inputs, "fuzzy_share", counted)
    recall = open_recall(store)
    recall.sync_index()
    result = recall.query(
        SearchQuery("how do I add a news fragment for a bugfix?", limit=10, min_score=0.3),
        sync=False,
    )
    assert result.hits and result.hits[0].memory.subject.startswith("Every non-trivial change")
    candidates = len(result.hits)
    assert 0 < len(calls) < 40 and len(calls) >= candidates


def test_the_keyword_index_answers_without_lancedb_full_text_and_follows_changes(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recall = open_recall(store)
    recall.searcher.keep_keywords()
    recall.sync_index()

    def no_full_text(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("LanceDB's full-text query was asked")

    monkeypatch.setattr(gather, "text_search", no_full_text)
    monkeypatch.setattr("local_recall.search.index.candidates.text_search", no_full_text)
    query = SearchQuery("zanzibarquux", mode="text", limit=5, prompt=True)
    hybrid = SearchQuery("zanzibarquux flag", limit=5)  # `search`'s, the MCP tool's
    assert recall.query(query, sync=False).hits == ()
    added = recall.add("The zanzibarquux flag", "Set zanzibarquux before the release build.")
    recall.sync_index()
    assert [h.memory.id for h in recall.query(query, sync=False).hits] == [added.id]
    assert recall.query(hybrid, sync=False).hits[0].memory.id == added.id
    recall.forget(added.id)
    recall.sync_index()
    assert recall.query(query, sync=False).hits == ()
    # `--mode text` is LanceDB's BM25 over the whole document, in every process; `why` asks
    # for LanceDB's too, so that its printed signals are the same with and without the daemon
    for asked in (
        SearchQuery("zanzibarquux", mode="text", limit=5),
        SearchQuery("zanzibarquux flag", limit=5, lancedb_text=True),
    ):
        with pytest.raises(AssertionError, match="full-text query was asked"):
            recall.query(asked, sync=False)
    with pytest.raises(AssertionError, match="full-text query was asked"):
        explain_prompt(recall, "where is the zanzibarquux flag set?")
    # a date filter is the LanceDB query's: the keyword index holds no dates
    dated = SearchQuery(
        "zanzibarquux", mode="text", since=datetime(2020, 1, 1).astimezone(), prompt=True
    )
    with pytest.raises(AssertionError, match="full-text query was asked"):
        recall.query(dated, sync=False)
