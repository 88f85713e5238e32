"""Embedders: pure decisions with literals, MiniLM on the real model, Ollama via a local server
that speaks Ollama's wire protocol (tests/fake_ollama.py)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from local_recall.errors import ConfigError, EmbedderUnavailable
from local_recall.repo.config import load_config
from local_recall.search.embedders import (
    MINILM_DIM,
    MINILM_SHA256,
    MINILM_TOKENIZER_DIR,
    NO_PREFIXES,
    OLLAMA_DEFAULT_HOST,
    MiniLMEmbedder,
    OllamaEmbedder,
    TaskPrefixes,
    canonical_ollama_model,
    embedder_fingerprint,
    file_sha256,
    installed_minilm_path,
    make_embedder,
    normalise_ollama_host,
    ollama_available,
    ollama_base_model,
    ollama_has_model,
    ollama_models,
    plan_batches,
    resolve_ollama_host,
    task_prefixes,
)
from local_recall.settings import Settings
from tests.fake_ollama import FakeOllama, fake_ollama_fixture  # noqa: F401  (the fixture)

# --- pure decisions -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("127.0.0.1", "http://127.0.0.1:11434"),
        ("0.0.0.0:11434", "http://0.0.0.0:11434"),
        ("http://localhost:8080/", "http://localhost:8080"),
        ("https://ollama.example.com", "https://ollama.example.com:443"),
        ("https://ollama.example.com:9000/proxy", "https://ollama.example.com:9000/proxy"),
        ("  example.com  ", "http://example.com:11434"),
        ("[::1]", "http://[::1]:11434"),
    ],
)
def test_normalise_ollama_host(value: str, expected: str) -> None:
    assert normalise_ollama_host(value) == expected


@pytest.mark.parametrize("value", ["http://", "http://host:notaport"])
def test_normalise_ollama_host_rejects_garbage(value: str) -> None:
    with pytest.raises(ConfigError, match="not an Ollama host URL"):
        normalise_ollama_host(value)


def test_resolve_ollama_host_prefers_argument_then_env_then_default() -> None:
    env = {"OLLAMA_HOST": "10.0.0.5:1234"}
    assert resolve_ollama_host("http://a:1", env) == "http://a:1"
    assert resolve_ollama_host(None, env) == "http://10.0.0.5:1234"
    assert resolve_ollama_host("", env) == "http://10.0.0.5:1234"
    assert resolve_ollama_host(None, {}) == "http://127.0.0.1:11434"
    assert resolve_ollama_host(None, {"OLLAMA_HOST": " "}) == "http://127.0.0.1:11434"


def test_task_prefixes_only_for_nomic_models() -> None:
    nomic = TaskPrefixes(document="search_document: ", query="search_query: ")
    assert task_prefixes("nomic-embed-text") == nomic
    assert task_prefixes("nomic-embed-text:v1.5") == nomic
    assert task_prefixes("library/Nomic-Embed-Text:latest") == nomic
    assert task_prefixes("nomic-embed-text-v2-moe") == nomic
    assert task_prefixes("all-minilm") == NO_PREFIXES
    assert task_prefixes("mxbai-embed-large:335m") == NO_PREFIXES


def test_model_names() -> None:
    assert ollama_base_model("registry.example/ns/nomic-embed-text:v1.5") == "nomic-embed-text"
    assert canonical_ollama_model("nomic-embed-text:latest") == "nomic-embed-text"
    assert canonical_ollama_model("nomic-embed-text:v1.5") == "nomic-embed-text:v1.5"
    listed = ["nomic-embed-text:latest", "llama3.2:3b"]
    assert ollama_has_model(listed, "nomic-embed-text")
    assert ollama_has_model(listed, "llama3.2:3b")
    assert ollama_has_model(listed, "Nomic-Embed-Text:latest")
    assert not ollama_has_model(listed, "llama3.2")
    assert not ollama_has_model(listed, "all-minilm")


def test_plan_batches_sorts_by_length_and_chunks() -> None:
    assert plan_batches([5, 1, 3, 1, 9], 2) == ((1, 3), (2, 0), (4,))
    assert plan_batches([], 4) == ()
    with pytest.raises(ValueError, match="batch_size"):
        plan_batches([1], 0)


def test_make_embedder_validates_provider_and_model() -> None:
    with pytest.raises(ConfigError, match="unknown embedder provider 'openai'"):
        make_embedder("openai")
    with pytest.raises(ConfigError, match="minilm provider has one model"):
        make_embedder("minilm", model="nomic-embed-text")
    with pytest.raises(ConfigError, match="timeout_seconds"):
        make_embedder("ollama", timeout_seconds=0)
    assert isinstance(make_embedder(" MiniLM ", model=""), MiniLMEmbedder)
    ollama = make_embedder("ollama", model="", ollama_host="")
    assert isinstance(ollama, OllamaEmbedder)
    assert ollama.model == "nomic-embed-text"


def test_importing_and_constructing_loads_nothing_heavy() -> None:
    code = (
        "import sys\n"
        "from local_recall.search.embedders import make_embedder, embedder_fingerprint\n"
        "e = make_embedder('minilm')\n"
        "print(embedder_fingerprint(e))\n"
        "make_embedder('ollama')\n"
        "heavy = {'numpy', 'onnxruntime', 'tokenizers', 'ollama', 'httpx'} & set(sys.modules)\n"
        "print(sorted(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split("\n")
    assert out[:2] == ["minilm:all-MiniLM-L6-v2-int8:384", "[]"]


# --- MiniLM, real model ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm() -> Iterator[MiniLMEmbedder]:
    embedder = MiniLMEmbedder()
    embedder.load()
    yield embedder


def test_shipped_tokenizer_is_the_reference_one() -> None:
    expected = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
    assert file_sha256(MINILM_TOKENIZER_DIR / "tokenizer.json") == expected
    for name in ("config.json", "tokenizer_config.json", "special_tokens_map.json"):
        assert (MINILM_TOKENIZER_DIR / name).is_file()
    assert (MINILM_TOKENIZER_DIR / "pooling_config.json").read_text().count(
        '"pooling_mode_mean_tokens": true'
    ) == 1


def test_installed_model_is_the_pinned_file() -> None:
    assert file_sha256(installed_minilm_path()) == MINILM_SHA256


def test_minilm_vectors_are_unit_float32_of_the_right_shape(minilm: MiniLMEmbedder) -> None:
    docs = minilm.embed_documents(["We deploy with GitHub Actions.", "", "ok " * 1000])
    assert docs.dtype == np.float32
    assert docs.shape == (3, MINILM_DIM)
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    query = minilm.embed_query("how do we deploy?")
    assert query.dtype == np.float32
    assert query.shape == (MINILM_DIM,)
    assert minilm.embed_documents([]).shape == (0, MINILM_DIM)


def test_minilm_similar_sentences_are_closer_than_unrelated(minilm: MiniLMEmbedder) -> None:
    docs = minilm.embed_documents(
        [
            "The test suite uses a temporary SQLite database created by a pytest fixture.",
            "Grandma's apple pie needs cinnamon and a buttery crust.",
            "Releases are deployed to production by the GitHub Actions workflow on tag push.",
        ]
    )
    scores = docs @ minilm.embed_query("How is the app deployed to prod?")
    assert int(np.argmax(scores)) == 2
    assert scores[2] > scores[1] + 0.2
    scores = docs @ minilm.embed_query("which database do the tests use")
    assert int(np.argmax(scores)) == 0


def test_minilm_batch_equals_single_and_is_deterministic(minilm: MiniLMEmbedder) -> None:
    texts = [
        "short",
        "a somewhat longer sentence about configuring the linter in pyproject.toml",
        "medium length text about git hooks",
    ]
    batched = minilm.embed_documents(texts)
    singles = np.stack([minilm.embed_query(text) for text in texts])
    np.testing.assert_allclose(batched, singles, atol=1e-5)
    again = MiniLMEmbedder(batch_size=3).embed_documents(texts)
    np.testing.assert_allclose(batched, again, atol=1e-6)


def test_minilm_refuses_a_tampered_model(tmp_path: Path) -> None:
    tampered = tmp_path / "model.onnx"
    shutil.copyfile(installed_minilm_path(), tampered)
    with tampered.open("r+b") as handle:
        handle.seek(1_000_000)
        byte = handle.read(1)
        handle.seek(1_000_000)
        handle.write(bytes([byte[0] ^ 0xFF]))
    embedder = MiniLMEmbedder(model_path=tampered)  # constructing checks nothing yet
    with pytest.raises(EmbedderUnavailable, match=r"sha256 .* refusing to load"):
        embedder.embed_query("hello")


def test_minilm_missing_model_file_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(EmbedderUnavailable, match="cannot read the MiniLM model"):
        MiniLMEmbedder(model_path=tmp_path / "absent.onnx").embed_documents(["x"])


# --- Ollama via the fake server --------------------------------------------------------------


def test_ollama_sends_task_prefixes(fake_ollama: FakeOllama) -> None:
    embedder = OllamaEmbedder(host=fake_ollama.url)
    docs = embedder.embed_documents(["alpha note", "beta note"])
    query = embedder.embed_query("alpha?")
    inputs = [request.body["input"] for request in fake_ollama.embed_requests()]
    assert inputs == [
        ["search_document: alpha note", "search_document: beta note"],
        ["search_query: alpha?"],
    ]
    assert {request.body["model"] for request in fake_ollama.embed_requests()} == {
        "nomic-embed-text"
    }
    assert docs.shape == (2, 768)
    assert query.shape == (768,)
    assert docs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    assert float(docs[0] @ query) > float(docs[1] @ query)


def test_ollama_model_without_prefixes_gets_raw_text() -> None:
    with FakeOllama({"all-minilm:latest": 384}) as server:
        embedder = OllamaEmbedder(model="all-minilm", host=server.url)
        embedder.embed_documents(["plain"])
        embedder.embed_query("plain?")
        assert [r.body["input"] for r in server.embed_requests()] == [["plain"], ["plain?"]]
        assert embedder.dim == 384


def test_ollama_batches_and_keeps_order(fake_ollama: FakeOllama) -> None:
    texts = [f"memory number {i} about topic {i % 7}" for i in range(150)]
    embedder = OllamaEmbedder(host=fake_ollama.url, batch_size=64)
    vectors = embedder.embed_documents(texts)
    assert [len(r.body["input"]) for r in fake_ollama.embed_requests()] == [64, 64, 22]
    assert vectors.shape == (150, 768)
    single = embedder.embed_documents([texts[100]])
    np.testing.assert_allclose(vectors[100], single[0], atol=1e-6)


def test_ollama_dim_is_learnt_with_one_probe(fake_ollama: FakeOllama) -> None:
    embedder = OllamaEmbedder(host=fake_ollama.url)
    assert fake_ollama.requests == []  # constructing sends nothing
    assert embedder.dim == 768
    assert embedder.dim == 768
    assert len(fake_ollama.embed_requests()) == 1
    assert embedder_fingerprint(embedder) == "ollama:nomic-embed-text:768"
    tagged = OllamaEmbedder(model="nomic-embed-text:latest", host=fake_ollama.url)
    assert embedder_fingerprint(tagged) == "ollama:nomic-embed-text:768"


def test_ollama_empty_documents_give_an_empty_matrix(fake_ollama: FakeOllama) -> None:
    assert OllamaEmbedder(host=fake_ollama.url).embed_documents([]).shape == (0, 768)


def test_ollama_host_from_the_environment_given(fake_ollama: FakeOllama) -> None:
    bare = fake_ollama.url.removeprefix("http://")  # OLLAMA_HOST is often host:port only
    env = {"OLLAMA_HOST": bare}
    embedder = make_embedder("ollama", env=env)
    assert isinstance(embedder, OllamaEmbedder)
    assert embedder.host == fake_ollama.url
    assert embedder.embed_query("hi").shape == (768,)
    assert len(fake_ollama.embed_requests()) == 1
    assert ollama_available(env=env)
    # the isolation seam: only the environment given is read, never the process's
    isolated = make_embedder("ollama", env={"OLLAMA_HOST": "10.1.2.3"})
    assert isinstance(isolated, OllamaEmbedder)
    assert isolated.host == "http://10.1.2.3:11434"
    none_given = make_embedder("ollama")
    assert isinstance(none_given, OllamaEmbedder) and none_given.host == OLLAMA_DEFAULT_HOST
    assert not ollama_available(env={"OLLAMA_HOST": _closed_port_url()})


def test_settings_make_the_embedder_with_their_environment(
    fake_ollama: FakeOllama, tmp_path: Path
) -> None:
    config = load_config(None, {"LOCAL_RECALL_EMBEDDER_PROVIDER": "ollama"})
    settings = Settings(root=tmp_path, environ={"OLLAMA_HOST": fake_ollama.url})
    embedder = settings.make_embedder(config)
    assert isinstance(embedder, OllamaEmbedder) and embedder.host == fake_ollama.url


def _closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_ollama_down_is_unavailable_quickly() -> None:
    url = _closed_port_url()
    # an hour's timeout: a refused connection is known at once, waiting out any of it would show
    embedder = OllamaEmbedder(host=url, timeout_seconds=3600)
    with pytest.raises(EmbedderUnavailable, match=r"is not reachable; is `ollama serve` running"):
        embedder.embed_query("hello")
    assert not ollama_available(url)
    with pytest.raises(EmbedderUnavailable, match=f"Ollama at {url} is not reachable"):
        ollama_models(url)


def test_ollama_missing_model_says_how_to_pull(fake_ollama: FakeOllama) -> None:
    embedder = OllamaEmbedder(model="mxbai-embed-large", host=fake_ollama.url)
    expected = (
        f"Ollama at {fake_ollama.url}: model 'mxbai-embed-large' not found; "
        "run `ollama pull mxbai-embed-large`"
    )
    with pytest.raises(EmbedderUnavailable) as caught:
        embedder.embed_documents(["x"])
    assert str(caught.value) == expected


def test_ollama_server_error_is_one_line(fake_ollama: FakeOllama) -> None:
    fake_ollama.fail_with(500, "llama runner process has terminated:\nexit status 2")
    with pytest.raises(EmbedderUnavailable) as caught:
        OllamaEmbedder(host=fake_ollama.url).embed_query("x")
    assert str(caught.value) == (
        f"Ollama at {fake_ollama.url}: HTTP 500: llama runner process has terminated: exit status 2"
    )


def test_ollama_hang_times_out(fake_ollama: FakeOllama) -> None:
    fake_ollama.hang()
    embedder = OllamaEmbedder(host=fake_ollama.url, timeout_seconds=0.3)
    # the server never answers: only the timeout ends the call (else pytest's timeout fails it)
    with pytest.raises(EmbedderUnavailable, match=r"did not answer within 0\.3 s"):
        embedder.embed_query("hello")
    assert not ollama_available(fake_ollama.url, timeout=0.3)


def test_ollama_models_lists_tags(fake_ollama: FakeOllama) -> None:
    fake_ollama.models["llama3.2:3b"] = 3072
    assert ollama_models(fake_ollama.url) == ("nomic-embed-text:latest", "llama3.2:3b")
    assert ollama_available(fake_ollama.url)
    assert [r.path for r in fake_ollama.requests] == ["/api/tags", "/api/tags"]


def test_minilm_fingerprint_needs_no_model_load() -> None:
    embedder = MiniLMEmbedder(model_path=Path("/nonexistent/model.onnx"))
    assert embedder_fingerprint(embedder) == "minilm:all-MiniLM-L6-v2-int8:384"
