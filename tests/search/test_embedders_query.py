"""A MiniLM query is embedded from at most MINILM_QUERY_MAX_TOKENS tokens, its head and its tail;
documents keep the model's 256. Pure window with literals, then the real model."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import tokenizers

from local_recall.search.embedders import (
    MINILM_QUERY_MAX_TOKENS,
    MINILM_TOKENIZER_DIR,
    MiniLMEmbedder,
    query_window,
)


def test_query_window_keeps_short_queries_whole() -> None:
    assert query_window([101, 7, 8, 102], 5) == (101, 7, 8, 102)
    assert query_window([101, 7, 8, 9, 102], 5) == (101, 7, 8, 9, 102)
    assert query_window([], 5) == ()


def test_query_window_keeps_head_and_tail_of_long_queries() -> None:
    assert query_window(list(range(10)), 5) == (0, 1, 7, 8, 9)
    assert query_window(list(range(10)), 4) == (0, 7, 8, 9)
    assert query_window(list(range(10)), 2) == (0, 9)
    with pytest.raises(ValueError, match="limit"):
        query_window([1, 2, 3], 1)


@pytest.fixture(scope="module")
def minilm() -> Iterator[MiniLMEmbedder]:
    embedder = MiniLMEmbedder()
    embedder.load()
    yield embedder


PREAMBLE = (
    "sorry if this is a silly question, i have been busy all week and my memory of the "
    "details is a bit fuzzy. i was going through my notes from earlier and something came up "
    "that i want to check with you, so before we move on to anything else please help me: "
)


def test_a_long_query_is_its_head_and_tail_and_a_document_is_not_cut(
    minilm: MiniLMEmbedder,
) -> None:
    tokenizer = tokenizers.Tokenizer.from_file(str(MINILM_TOKENIZER_DIR / "tokenizer.json"))
    tokenizer.no_padding()
    long = PREAMBLE + "how is the app deployed to production?"
    ids = tokenizer.encode(long).ids
    assert len(ids) > MINILM_QUERY_MAX_TOKENS + 8
    window = query_window(ids, MINILM_QUERY_MAX_TOKENS)
    shorter = tokenizer.decode(list(window), skip_special_tokens=True)
    assert tokenizer.encode(shorter).ids == list(window)  # plain words: decoding is exact

    query = minilm.embed_query(long)
    assert float(query @ minilm.embed_documents([shorter])[0]) > 0.9999
    # The same text as a document is embedded whole, so its vector is another one.
    assert float(query @ minilm.embed_documents([long])[0]) < 0.99


def test_the_question_after_a_long_preamble_still_decides(minilm: MiniLMEmbedder) -> None:
    docs = minilm.embed_documents(
        [
            "Releases are deployed to production by the GitHub Actions workflow on tag push.",
            "The test suite uses a temporary SQLite database created by a pytest fixture.",
        ]
    )
    deploy = docs @ minilm.embed_query(PREAMBLE + "how is the app deployed to production?")
    tests = docs @ minilm.embed_query(PREAMBLE + "which database do the tests use?")
    assert int(np.argmax(deploy)) == 0
    assert int(np.argmax(tests)) == 1
