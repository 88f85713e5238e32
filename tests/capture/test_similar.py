"""The memories a capture pass shows the extractor as existing (`PassInputs.similar`). In the
daemon the index is open and answers, synced first. In a one-shot pass (`sync --ended` with no
daemon) the files and the vector cache answer, as for a hook with no daemon: an offline session
end used to import LanceDB and sync the index (~1.5 s) before its one `claude -p` attempt, for
nothing. Real LanceDB in tmp_path, a real embedder client over HTTP
(tests/fake_ollama.py)."""

from __future__ import annotations

from pathlib import Path

from local_recall.recall import Recall, pass_inputs
from local_recall.settings import Settings
from tests.conftest import clean_env
from tests.fake_ollama import FakeOllama, fake_ollama_fixture  # noqa: F401  (the fixture)


def open_recall(repo: Path, server: FakeOllama) -> Recall:
    from local_recall.search.embedders import OllamaEmbedder

    embedder = OllamaEmbedder(host=server.url)
    settings = Settings(root=repo, environ=clean_env(), embedder_factory=lambda _c: embedder)
    return Recall.open(settings=settings)


def test_a_one_shot_pass_finds_similar_memories_without_opening_the_index(
    repo: Path, fake_ollama: FakeOllama
) -> None:
    daemon = open_recall(repo, fake_ollama)
    lock = daemon.add("Use filelock for dedup", "Two sessions race on the dedup check.")
    daemon.add("Parser drops BOMs", "The YAML parser strips a byte order mark first.")
    daemon.sync_index()  # the index and the vector cache exist, as in a used repository
    assert daemon.searcher.index.connected

    one_shot = open_recall(repo, fake_ollama)
    similar = pass_inputs(one_shot).similar
    assert similar("the dedup check races between sessions", 5)[0] == (lock.id, lock.subject)
    # what the pass itself wrote is seen by its next chunk
    retry = one_shot.add("Retries back off", "The websocket retry backs off exponentially.")
    found = similar("how does the websocket retry back off?", 5)
    assert found[0] == (retry.id, retry.subject)
    assert not one_shot.searcher.index.connected  # no LanceDB opened, nothing synced

    # where the index is open (the daemon), it answers, brought up to date first
    assert pass_inputs(daemon).similar("websocket retry back off", 5)[0][0] == retry.id
    assert retry.id in {key.split("/")[1] for key in daemon.searcher.index.fingerprints()}
