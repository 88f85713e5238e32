"""What every embedder is (the `Embedder` protocol) and the decisions over plain values that the
providers share: task prefixes, Ollama model names, batching, fingerprints."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

PROVIDERS: Final = ("minilm", "ollama")
OLLAMA_DEFAULT_MODEL: Final = "nomic-embed-text"


class Embedder(Protocol):
    """What the index needs from an embedder. Vectors are float32 and L2-normalised."""

    @property
    def name(self) -> str:
        """The provider: "minilm" or "ollama"."""
        ...

    @property
    def model(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Shape (len(texts), dim)."""
        ...

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """Shape (dim,)."""
        ...


# --- decisions over plain values ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TaskPrefixes:
    document: str
    query: str


NO_PREFIXES: Final = TaskPrefixes(document="", query="")

# Models trained with task instructions, keyed by base name (no namespace, no tag). Only models
# whose card asks for prefixes are listed; every other model gets the text unchanged.
TASK_PREFIXES: Final[Mapping[str, TaskPrefixes]] = {
    "nomic-embed-text": TaskPrefixes(document="search_document: ", query="search_query: "),
    "nomic-embed-text-v2-moe": TaskPrefixes(document="search_document: ", query="search_query: "),
}


def ollama_base_model(model: str) -> str:
    """'library/nomic-embed-text:v1.5' -> 'nomic-embed-text'."""
    return model.strip().rsplit("/", 1)[-1].split(":", 1)[0].lower()


def task_prefixes(model: str) -> TaskPrefixes:
    return TASK_PREFIXES.get(ollama_base_model(model), NO_PREFIXES)


def canonical_ollama_model(model: str) -> str:
    """Ollama treats a missing tag as ':latest' and compares names case-insensitively."""
    return model.strip().lower().removesuffix(":latest")


def ollama_has_model(listed: Sequence[str], model: str) -> bool:
    """Whether `model` is among the names /api/tags listed (which always carry a tag)."""
    wanted = canonical_ollama_model(model)
    return any(canonical_ollama_model(name) == wanted for name in listed)


def plan_batches(lengths: Sequence[int], batch_size: int) -> tuple[tuple[int, ...], ...]:
    """Indices grouped shortest first, so each batch pads to a similar length."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    order = sorted(range(len(lengths)), key=lambda index: lengths[index])
    return tuple(
        tuple(order[start : start + batch_size]) for start in range(0, len(order), batch_size)
    )


def query_window(ids: Sequence[int], limit: int) -> tuple[int, ...]:
    """The token ids a query is embedded from: all of them when they fit in `limit`, else the
    head and the tail (about half each), so the first id ([CLS]) and the last ([SEP]) stay.
    A prompt's question often comes after its preamble, so a plain cut would
    drop it; a query's cost grows with its length while a document's is paid once."""
    if limit < 2:
        raise ValueError(f"limit must be at least 2, got {limit}")
    if len(ids) <= limit:
        return tuple(ids)
    head = max(1, (limit - 1) // 2)
    return (*ids[:head], *ids[len(ids) - (limit - head) :])


def embedder_fingerprint(embedder: Embedder) -> str:
    """'minilm:all-MiniLM-L6-v2-int8:384'. The index rebuilds when this changes.

    Reading `dim` of an Ollama embedder that has not embedded yet costs one probe request."""
    model = embedder.model
    if embedder.name == "ollama":
        model = canonical_ollama_model(model)
    return f"{embedder.name}:{model}:{embedder.dim}"


def unit_rows(matrix: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    # An all-zero row stays zero rather than becoming NaN.
    unit: npt.NDArray[np.float32] = (matrix / np.maximum(norms, 1e-12)).astype(np.float32)
    return unit
