"""The relevance cache in `state/`: every stored vector and the store's term statistics.

    write_vector_cache(state_dir, keys, matrix, embedder="minilm:…")   # the indexer, after a sync
    cache = read_vector_cache(state_dir, embedder="minilm:…")          # None: missing or unusable
    cosines = cache.best_cosines(query_vector)                          # key → best cosine

Relevance needs the same cosine on every path (calibration: relevance.py), and the hook's
no-daemon fallback cannot import LanceDB (~2 s). So the indexer copies every stored vector
(whole texts, then passages; float32, L2-normalised) into one `.npy` that a cold process opens
memory-mapped: an exact dot product per row, a memory's cosine the best of its rows.

Files: `vectors.json` ({"format", "embedder", "dim", "rows", "file", "keys"}: one key per row,
a passage repeats its memory's key) names the `.npy` it describes (`vectors-<token>.npy`); the
json is replaced last, so a reader never pairs keys with another write's matrix. `terms.json`
holds `TermStats.to_json()`. The state folder is gitignored but a hostile repository could
plant files there: nothing is trusted — no symlinks followed, sizes capped, shapes, dtype and
keys validated; anything wrong reads as "no cache" and search answers without it.

numpy only (no lancedb): the cold hook imports this.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from local_recall.search.relevance import TermStats, term_stats_from_json

VECTORS_JSON: Final = "vectors.json"
TERMS_JSON: Final = "terms.json"
CACHE_FORMAT: Final = 1
MAX_ROWS: Final = 4_000_000  # 100k memories with their passages fit many times over
MAX_DIM: Final = 4096
MAX_JSON_BYTES: Final = 256 * 1024 * 1024
_NPY_NAME: Final = re.compile(r"^vectors-[0-9a-f]{16}\.npy$")
_KEY: Final = re.compile(r"^(?:episodic|thinking)/[0-9a-f-]{36}$")

Matrix = npt.NDArray[np.float32]


@dataclass(slots=True)
class VectorCache:
    """The stored vectors, one row per vector; `keys[i]` is row i's memory."""

    keys: tuple[str, ...]
    matrix: Matrix  # (rows, dim), memory-mapped read-only
    embedder: str
    _rows: dict[str, list[int]] | None = field(default=None, repr=False)
    _kinds: dict[str, npt.NDArray[np.bool_]] | None = field(default=None, repr=False)

    def best_cosines(self, query: Matrix) -> dict[str, float]:
        """Every memory's best cosine with the (L2-normalised) query vector."""
        values = (self.matrix @ query.astype(np.float32)).tolist()
        best: dict[str, float] = {}
        for key, value in zip(self.keys, values, strict=True):
            if value > best.get(key, -2.0):
                best[key] = value
        return best

    def nearest(self, query: Matrix, limit: int, *, kind: str | None = None) -> dict[str, float]:
        """The `limit` memories (of `kind`, if given) with the best cosine, exact: one matrix
        product and a partial sort (~3 ms of CPU for 20k rows), where an ANN query costs several
        ms of LanceDB per table. The rows of the best memories are among the best rows: enough
        of those are taken to hold `limit` distinct memories."""
        # einsum: numpy's own loop, one thread. BLAS would spread this memory-bound product
        # over threads that, on cores shared with the agent and its builds, wait more than they
        # work (2.5x the wall time measured under load).
        scores = np.einsum("ij,j->i", self.matrix, query.astype(np.float32))
        if kind is not None:
            scores = np.where(self._of_kind(kind), scores, -np.inf)
        rows = len(scores)
        take = min(rows, max(1, limit) * 4)
        while True:
            picked = np.argpartition(-scores, take - 1)[:take] if take < rows else np.arange(rows)
            best: dict[str, float] = {}
            for i, value in zip(picked.tolist(), scores[picked].tolist(), strict=True):
                key = self.keys[i]
                if value != -np.inf and value > best.get(key, -2.0):
                    best[key] = value
            if len(best) >= limit or take >= rows:
                break
            take = min(rows, take * 2)
        return dict(sorted(best.items(), key=lambda item: -item[1])[:limit])

    def _of_kind(self, kind: str) -> npt.NDArray[np.bool_]:
        masks = self._kinds
        if masks is None:
            masks = self._kinds = {}
        mask = masks.get(kind)
        if mask is None:
            prefix = f"{kind}/"
            mask = masks[kind] = np.fromiter(
                (key.startswith(prefix) for key in self.keys), dtype=bool, count=len(self.keys)
            )
        return mask

    def cosines_of(self, query: Matrix, keys: Sequence[str]) -> dict[str, float]:
        """The best cosine of the given memories only (a search's candidates): cheap at 100k."""
        if self._rows is None:
            rows: dict[str, list[int]] = {}
            for i, key in enumerate(self.keys):
                rows.setdefault(key, []).append(i)
            self._rows = rows
        wanted = [(key, self._rows[key]) for key in dict.fromkeys(keys) if key in self._rows]
        if not wanted:
            return {}
        flat = [i for _, found in wanted for i in found]
        values = (self.matrix[flat] @ query.astype(np.float32)).tolist()
        best: dict[str, float] = {}
        at = 0
        for key, found in wanted:
            best[key] = max(values[at : at + len(found)])
            at += len(found)
        return best


# --- reading (hostile files tolerated) -------------------------------------------------------


def _open_regular(path: Path, limit: int) -> Any:
    """A binary handle on `path` if it is a regular file (not a symlink) of at most `limit`
    bytes; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            os.close(fd)
            return None
        return os.fdopen(fd, "rb")
    except OSError:
        os.close(fd)
        return None


def read_json_file(path: Path, limit: int = MAX_JSON_BYTES) -> object:
    """The JSON value of a regular file (no symlink) of at most `limit` bytes; None otherwise."""
    if path.parent.is_symlink():
        return None
    handle = _open_regular(path, limit)
    if handle is None:
        return None
    with handle:
        try:
            return json.loads(handle.read())
        except (ValueError, OSError, RecursionError):
            return None


def read_vector_cache(state_dir: Path, *, embedder: str) -> VectorCache | None:  # noqa: PLR0911
    """The cache written for `embedder` (its fingerprint), or None if missing, written by
    another embedder, or not of the expected shape."""
    meta = read_json_file(state_dir / VECTORS_JSON)
    if not isinstance(meta, dict) or meta.get("format") != CACHE_FORMAT:
        return None
    keys, dim, rows, name = meta.get("keys"), meta.get("dim"), meta.get("rows"), meta.get("file")
    if meta.get("embedder") != embedder or not isinstance(name, str) or not _NPY_NAME.match(name):
        return None
    if not isinstance(dim, int) or not isinstance(rows, int) or not isinstance(keys, list):
        return None
    if not (0 < dim <= MAX_DIM and 0 <= rows <= MAX_ROWS and len(keys) == rows):
        return None
    if not all(isinstance(k, str) and _KEY.match(k) for k in keys):
        return None
    matrix = _read_matrix(state_dir / name, rows, dim)
    if matrix is None:
        return None
    return VectorCache(tuple(keys), matrix, embedder)


def _read_matrix(path: Path, rows: int, dim: int) -> Matrix | None:  # noqa: PLR0911
    handle = _open_regular(path, 256 + rows * dim * 4)
    if handle is None:
        return None
    with handle:
        try:
            version = np.lib.format.read_magic(handle)
            if version != (1, 0):
                return None
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(handle)
            offset = handle.tell()
            size = os.fstat(handle.fileno()).st_size
        except (ValueError, OSError, SyntaxError):
            return None
        if shape != (rows, dim) or fortran or dtype != np.dtype("<f4"):
            return None
        if size != offset + rows * dim * 4:
            return None
        if rows == 0:
            return np.zeros((0, dim), dtype=np.float32)
        try:
            return np.memmap(handle, dtype="<f4", mode="r", offset=offset, shape=(rows, dim))
        except (ValueError, OSError):
            return None


def read_term_stats(state_dir: Path) -> TermStats | None:
    return term_stats_from_json(read_json_file(state_dir / TERMS_JSON))


# --- writing (the indexer) -------------------------------------------------------------------


def replace_file(path: Path, write: Any) -> None:
    """Write `path` atomically (a temporary file beside it, fsync, rename)."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with tmp.open("xb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def write_vector_cache(
    state_dir: Path, keys: Sequence[str], matrix: Matrix, *, embedder: str
) -> None:
    """Replace the cache; older `.npy` files are removed once the new json names the new one."""
    state_dir.mkdir(parents=True, exist_ok=True)
    rows, dim = (len(keys), matrix.shape[1]) if matrix.ndim == 2 else (0, 1)
    data = np.ascontiguousarray(matrix, dtype="<f4").reshape(rows, dim)
    name = f"vectors-{secrets.token_hex(8)}.npy"
    replace_file(state_dir / name, lambda handle: np.save(handle, data, allow_pickle=False))
    meta = {
        "format": CACHE_FORMAT,
        "embedder": embedder,
        "dim": dim,
        "rows": rows,
        "file": name,
        "keys": list(keys),
    }
    replace_file(state_dir / VECTORS_JSON, lambda h: h.write(json.dumps(meta).encode()))
    for old in state_dir.iterdir():
        if old.name != name and _NPY_NAME.match(old.name) and not old.is_symlink():
            with contextlib.suppress(OSError):
                old.unlink()


def write_term_stats(state_dir: Path, stats: TermStats) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    text = json.dumps(stats.to_json())
    replace_file(state_dir / TERMS_JSON, lambda handle: handle.write(text.encode()))


def remove_vector_cache(state_dir: Path) -> None:
    """No vectors (embedder unavailable): a cache of older vectors would be stale."""
    with contextlib.suppress(OSError):
        (state_dir / VECTORS_JSON).unlink()
