"""Embedders turn memory text into unit vectors for the index.

Two providers: MiniLM (all-MiniLM-L6-v2, int8 ONNX, in process, no service, the default;
minilm.py) and Ollama (any embedding model a local Ollama serves, nomic-embed-text by default;
ollama.py). Documents and queries are separate calls because some models (nomic-embed-text)
expect task prefixes (base.py).

numpy, onnxruntime, tokenizers and ollama are imported only when a vector is first needed, so
importing this package costs nothing a hook would notice. See docs/embedders.md for measurements.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from local_recall.errors import ConfigError
from local_recall.ollama_client import DEFAULT_HOST as OLLAMA_DEFAULT_HOST
from local_recall.ollama_client import normalise_host as normalise_ollama_host
from local_recall.ollama_client import resolve_host as resolve_ollama_host
from local_recall.repo.config import Config, EmbedderConfig
from local_recall.search.embedders.base import (
    NO_PREFIXES,
    OLLAMA_DEFAULT_MODEL,
    PROVIDERS,
    TASK_PREFIXES,
    Embedder,
    TaskPrefixes,
    canonical_ollama_model,
    embedder_fingerprint,
    ollama_base_model,
    ollama_has_model,
    plan_batches,
    query_window,
    task_prefixes,
)
from local_recall.search.embedders.minilm import (
    MINILM_DIM,
    MINILM_MAX_TOKENS,
    MINILM_MODEL,
    MINILM_QUERY_MAX_TOKENS,
    MINILM_SHA256,
    MINILM_TOKENIZER_DIR,
    MiniLMEmbedder,
    file_sha256,
    installed_minilm_path,
)
from local_recall.search.embedders.ollama import OllamaEmbedder, ollama_available, ollama_models

__all__ = [
    "MINILM_DIM",
    "MINILM_MAX_TOKENS",
    "MINILM_MODEL",
    "MINILM_QUERY_MAX_TOKENS",
    "MINILM_SHA256",
    "MINILM_TOKENIZER_DIR",
    "NO_PREFIXES",
    "OLLAMA_DEFAULT_HOST",
    "OLLAMA_DEFAULT_MODEL",
    "PROVIDERS",
    "TASK_PREFIXES",
    "Embedder",
    "EmbedderFactory",
    "MiniLMEmbedder",
    "OllamaEmbedder",
    "TaskPrefixes",
    "canonical_ollama_model",
    "embedder_fingerprint",
    "embedder_from_config",
    "file_sha256",
    "installed_minilm_path",
    "make_embedder",
    "normalise_ollama_host",
    "ollama_available",
    "ollama_base_model",
    "ollama_has_model",
    "ollama_models",
    "plan_batches",
    "query_window",
    "resolve_ollama_host",
    "task_prefixes",
]

# Makes the embedder a configuration names (Settings.make_embedder; tests share one instance).
EmbedderFactory = Callable[[Config], Embedder]


def make_embedder(
    provider: str,
    *,
    model: str | None = None,
    ollama_host: str | None = None,
    timeout_seconds: float = 30.0,
    env: Mapping[str, str] | None = None,
) -> Embedder:
    """The embedder the configuration names. Empty strings mean "the default", as in config.
    `env` is where $OLLAMA_HOST is read when `ollama_host` is empty (none: not read)."""
    kind = provider.strip().lower()
    if kind == "minilm":
        if model and model.strip() != MINILM_MODEL:
            raise ConfigError(
                f"the minilm provider has one model, {MINILM_MODEL}; got {model!r} "
                '(other models need [embedder] provider = "ollama")'
            )
        return MiniLMEmbedder()
    if kind == "ollama":
        return OllamaEmbedder(
            model=model or OLLAMA_DEFAULT_MODEL,
            host=ollama_host or None,
            timeout_seconds=timeout_seconds,
            env=env,
        )
    raise ConfigError(f"unknown embedder provider {provider!r}; expected 'minilm' or 'ollama'")


def embedder_from_config(config: EmbedderConfig, environ: Mapping[str, str]) -> Embedder:
    """The embedder `[embedder]` names; `environ` supplies $OLLAMA_HOST (Settings.environ)."""
    return make_embedder(
        config.provider,
        model=config.model or None,
        ollama_host=config.ollama_host or None,
        timeout_seconds=config.timeout_seconds,
        env=environ,
    )
