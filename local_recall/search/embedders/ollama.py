"""Ollama: embeddings from any embedding model a local Ollama serves (nomic-embed-text by
default), through local_recall/ollama_client.py (the only importer of the `ollama` package).

The host is the configured one, else $OLLAMA_HOST of the environment passed in (Settings'),
never the process environment."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from local_recall.errors import ConfigError, EmbedderUnavailable
from local_recall.ollama_client import classify_failure, make_client, resolve_host
from local_recall.search.embedders.base import (
    OLLAMA_DEFAULT_MODEL,
    TaskPrefixes,
    task_prefixes,
    unit_rows,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


def _embedder_error(error: Exception, host: str, model: str | None, timeout: float) -> Exception:
    """One clear line for a failed call; anything that is not an Ollama failure is re-raised."""
    failure = classify_failure(error)
    if failure is None:
        return error
    where = f"Ollama at {host}"
    if failure.kind == "model_missing" and model is not None:
        return EmbedderUnavailable(f"{where}: model '{model}' not found; run `ollama pull {model}`")
    if failure.kind in ("model_missing", "http"):
        return EmbedderUnavailable(f"{where}: HTTP {failure.status}: {failure.detail}")
    if failure.kind == "timeout":
        return EmbedderUnavailable(f"{where} did not answer within {timeout:g} s")
    if failure.kind == "unreachable":
        return EmbedderUnavailable(f"{where} is not reachable; is `ollama serve` running?")
    return EmbedderUnavailable(f"{where}: {failure.detail}")


class OllamaEmbedder:
    """Embeddings from a local Ollama via its official client (POST /api/embed).

    The dimension is learnt from the first response; reading `dim` before any embed sends one
    short probe request. Every failure raises EmbedderUnavailable with a one-line message."""

    def __init__(
        self,
        *,
        model: str = OLLAMA_DEFAULT_MODEL,
        host: str | None = None,
        timeout_seconds: float = 30.0,
        batch_size: int = 64,
        env: Mapping[str, str] | None = None,
    ) -> None:
        if not model.strip():
            raise ConfigError("the Ollama embedding model name is empty")
        if timeout_seconds <= 0:
            raise ConfigError(f"timeout_seconds must be positive, got {timeout_seconds}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self._model = model.strip()
        self._host = resolve_host(host, {} if env is None else env)
        self._timeout = timeout_seconds
        self._batch_size = batch_size
        self._prefixes = task_prefixes(self._model)
        self._dim: int | None = None
        self._client: Any = None  # ollama.Client, made on first use
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return "ollama"

    @property
    def model(self) -> str:
        return self._model

    @property
    def host(self) -> str:
        return self._host

    @property
    def prefixes(self) -> TaskPrefixes:
        return self._prefixes

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.embed_query("dimension probe")
        assert self._dim is not None  # set by the embed above or it raised
        return self._dim

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._embed([self._prefixes.document + text for text in texts])

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        vector: npt.NDArray[np.float32] = self._embed([self._prefixes.query + text])[0]
        return vector

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                client: Any = self._client  # ollama's close() carries no annotations
                client.close()
                self._client = None

    def _embed(self, inputs: list[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        rows: list[Sequence[float]] = []
        for start in range(0, len(inputs), self._batch_size):
            rows.extend(self._request(inputs[start : start + self._batch_size]))
        widths = {len(row) for row in rows}
        if len(widths) != 1 or 0 in widths:
            raise EmbedderUnavailable(
                f"Ollama at {self._host}: model '{self._model}' returned vectors of sizes "
                f"{sorted(widths)}; is it an embedding model?"
            )
        (width,) = widths
        if self._dim is not None and width != self._dim:
            raise EmbedderUnavailable(
                f"Ollama at {self._host}: model '{self._model}' changed dimension "
                f"from {self._dim} to {width}"
            )
        self._dim = width
        return unit_rows(np.asarray(rows, dtype=np.float32))

    def _request(self, batch: list[str]) -> Sequence[Sequence[float]]:
        client = self._connected()
        try:
            response = client.embed(model=self._model, input=batch)
        except Exception as error:
            raise _embedder_error(error, self._host, self._model, self._timeout) from None
        embeddings: Sequence[Sequence[float]] = response.embeddings
        if len(embeddings) != len(batch):
            raise EmbedderUnavailable(
                f"Ollama at {self._host}: sent {len(batch)} texts, "
                f"got {len(embeddings)} embeddings back"
            )
        return embeddings

    def _connected(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = make_client(
                    self._host, self._timeout, unavailable=EmbedderUnavailable
                )
            return self._client


def ollama_models(
    host: str | None = None, *, timeout: float = 2.0, env: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """Names of the models the Ollama at `host` (else $OLLAMA_HOST in `env`) has pulled
    (GET /api/tags), e.g. 'nomic-embed-text:latest'. Raises EmbedderUnavailable when it cannot
    be asked."""
    base = resolve_host(host, {} if env is None else env)
    with make_client(base, timeout, unavailable=EmbedderUnavailable) as client:
        try:
            listing = client.list()
        except Exception as error:
            raise _embedder_error(error, base, None, timeout) from None
    return tuple(entry.model for entry in listing.models if entry.model)


def ollama_available(
    host: str | None = None, timeout: float = 0.5, *, env: Mapping[str, str] | None = None
) -> bool:
    """Whether an Ollama answers at `host` within `timeout` seconds."""
    try:
        ollama_models(host, timeout=timeout, env=env)
    except EmbedderUnavailable:
        return False
    return True
