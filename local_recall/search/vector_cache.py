"""The relevance cache in `state/`: every stored vector and the store's term statistics.

    write_vector_cache(state_dir, keys, matrix, embedder="minilm:…")   # the indexer, after a sync
    cache = read_vector_cache(state_dir, embedder="minilm:…")          # None: missing or unusable
    cosines = cache.best_cosines(query_vector)                          # key → best cosine

Relevance needs the same cosine on every path (calibration: relevance.py), and the hook's
no-daemon fallback cannot import LanceDB (~2 s). So the indexer copies every stored vector
(whole texts, then passages; float32, L2-normalised) into one `.npy` that a cold process opens
memory-mapped: an exact dot product per row, a memory's cosine the best of its rows.

Files: `vectors.json` ({"format", "embedder", "dim", "rows", "token"}) names the base it
describes, `vectors-<token>.npy` with its keys in `vectors-<token>.keys` (one key per row, a
passage repeats its memory's key), and the append-only log of what changed since
(`vector_log.py`: a save appends a few rows instead of rewriting them all); the json is replaced
last, so a reader never pairs keys with another write's matrix. A memory's rows are those of
the newest log line that covers it, else the base's. `vectors.follows`, written after each
write, names the index state (`Stamp`: the table's version, meta.json's stat) the vectors are
of: a sync compares it with the index's (search/index/relevance_cache.py). The term
statistics beside it (`terms.json` + `terms.log`) are term_log.py's. The state folder is
gitignored but a hostile repository could plant files there: nothing is trusted — no symlinks
followed, sizes capped, shapes, dtype and keys validated; anything wrong reads as "no cache"
and search answers without it.

numpy only (no lancedb): the cold hook imports this.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from local_recall.repo import base_log
from local_recall.search.vector_log import (
    LOG_TOKEN,
    VECTORS_JSON,
    append_to_log,
    live_rows,
    log_paths,
    read_vector_log,
    start_log,
)

if TYPE_CHECKING:  # row_copy is pure but imports the index plan: the cold hook reads this
    from local_recall.search.index.row_copy import Stamp

CACHE_FORMAT: Final = 2  # 1: no log (still read)
FOLLOWS: Final = "vectors.follows"  # {"token": <the base's>, "index": Stamp as JSON}
MAX_ROWS: Final = 4_000_000  # 100k memories with their passages fit many times over
MAX_DIM: Final = 4096
MAX_JSON_BYTES: Final = 256 * 1024 * 1024
_NPY_NAME: Final = re.compile(r"^vectors-[0-9a-f]{16}\.npy$")
_PART_NAME: Final = re.compile(r"^vectors-[0-9a-f]{16}\.(?:keys|rows|log)$")
_KEY: Final = re.compile(r"^(?:episodic|thinking)/[0-9a-f-]{36}$")

Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class Part:
    """Rows of one file: `keys[i]` is row i's memory; `live` masks out the rows a later log
    line made stale (None: all live)."""

    keys: tuple[str, ...]
    matrix: Matrix
    live: npt.NDArray[np.bool_] | None = None


class VectorCache:
    """The stored vectors, one row per vector; `keys[i]` is live row i's memory. One matrix, or
    `parts` (a base and its log, as read from disk) whose stale rows are masked."""

    __slots__ = ("_kinds", "_parts", "_rows", "embedder", "keys")

    def __init__(
        self,
        keys: Sequence[str],
        matrix: Matrix,
        embedder: str,
        *,
        parts: Sequence[Part] | None = None,
    ) -> None:
        self.embedder = embedder
        self._parts = tuple(parts) if parts is not None else (Part(tuple(keys), matrix),)
        self.keys: tuple[str, ...] = tuple(
            key
            for part in self._parts
            for i, key in enumerate(part.keys)
            if part.live is None or part.live[i]
        )
        self._rows: dict[str, list[tuple[int, int]]] | None = None
        self._kinds: dict[str, npt.NDArray[np.bool_]] | None = None

    def _scores(self, query: Matrix, *, einsum: bool) -> npt.NDArray[np.float32]:
        """Every live row's dot product with `query`, in `keys` order."""
        q = query.astype(np.float32)
        chunks = []
        for part in self._parts:
            if not part.keys:
                continue
            # einsum: numpy's own loop, one thread. BLAS would spread this memory-bound product
            # over threads that, on cores shared with the agent and its builds, wait more than
            # they work (2.5x the wall time measured under load).
            scores = np.einsum("ij,j->i", part.matrix, q) if einsum else part.matrix @ q
            chunks.append(scores if part.live is None else scores[part.live])
        if not chunks:
            return np.zeros(0, dtype=np.float32)
        return chunks[0] if len(chunks) == 1 else np.concatenate(chunks)

    def rows_by_key(self) -> dict[str, bytes]:
        """Each memory's live rows as bytes, in order (tests compare a cache with a rebuild)."""
        found: dict[str, list[bytes]] = {}
        for part in self._parts:
            for i, key in enumerate(part.keys):
                if part.live is None or part.live[i]:
                    found.setdefault(key, []).append(np.asarray(part.matrix[i], "<f4").tobytes())
        return {key: b"".join(rows) for key, rows in found.items()}

    def best_cosines(self, query: Matrix) -> dict[str, float]:
        """Every memory's best cosine with the (L2-normalised) query vector."""
        values = self._scores(query, einsum=False).tolist()
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
        scores = self._scores(query, einsum=True)
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
            rows: dict[str, list[tuple[int, int]]] = {}
            for p, part in enumerate(self._parts):
                for i, key in enumerate(part.keys):
                    if part.live is None or part.live[i]:
                        rows.setdefault(key, []).append((p, i))
            self._rows = rows
        q = query.astype(np.float32)
        best: dict[str, float] = {}
        for p, part in enumerate(self._parts):
            wanted = [
                (key, [i for at, i in self._rows[key] if at == p])
                for key in dict.fromkeys(keys)
                if key in self._rows
            ]
            wanted = [(key, found) for key, found in wanted if found]
            if not wanted:
                continue
            flat = [i for _, found in wanted for i in found]
            values = (part.matrix[flat] @ q).tolist()
            at = 0
            for key, found in wanted:
                value = max(values[at : at + len(found)])
                best[key] = max(value, best.get(key, value))
                at += len(found)
        return best


# --- reading (hostile files tolerated) -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Header:
    """`vectors.json`: which base (`vectors-<token>.npy`, its keys in `vectors-<token>.keys`)
    and log (`vector_log.py`, the same token) make the cache, for which embedder."""

    embedder: str
    dim: int
    rows: int  # the base's
    token: str


def read_header(state_dir: Path) -> Header | None:
    meta = base_log.read_json(state_dir / VECTORS_JSON, 1 << 16)
    if not isinstance(meta, dict) or meta.get("format") != CACHE_FORMAT:
        return None
    embedder, dim, rows, token = (meta.get(k) for k in ("embedder", "dim", "rows", "token"))
    if not isinstance(embedder, str) or not isinstance(token, str) or not LOG_TOKEN.match(token):
        return None
    if not isinstance(dim, int) or not isinstance(rows, int):
        return None
    if not (0 < dim <= MAX_DIM and 0 <= rows <= MAX_ROWS):
        return None
    return Header(embedder, dim, rows, token)


def _read_base(state_dir: Path, header: Header) -> tuple[tuple[str, ...], Matrix] | None:
    keys = base_log.read_json(state_dir / f"vectors-{header.token}.keys", MAX_JSON_BYTES)
    if not isinstance(keys, list) or len(keys) != header.rows:
        return None
    if not all(isinstance(k, str) and _KEY.match(k) for k in keys):
        return None
    matrix = _read_matrix(state_dir / f"vectors-{header.token}.npy", header.rows, header.dim)
    return None if matrix is None else (tuple(keys), matrix)


def read_vector_cache(state_dir: Path, *, embedder: str) -> VectorCache | None:
    """The cache written for `embedder` (its fingerprint), or None if missing, written by
    another embedder, or not of the expected shape."""
    header = read_header(state_dir)
    if header is None or header.embedder != embedder:
        return None
    base = _read_base(state_dir, header)
    log = read_vector_log(state_dir, header.token, header.dim, MAX_ROWS - header.rows)
    if base is None or log is None:
        return None
    keys, matrix = base
    if not log.entries:
        return VectorCache(keys, matrix, embedder)
    base_live, log_keys, log_live = live_rows(keys, log)
    parts = [Part(keys, matrix, base_live), Part(log_keys, log.matrix, log_live)]
    return VectorCache((), matrix, embedder, parts=parts)


def _read_matrix(path: Path, rows: int, dim: int) -> Matrix | None:  # noqa: PLR0911
    handle = base_log.open_regular(path, 256 + rows * dim * 4)
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


# --- writing (the indexer) -------------------------------------------------------------------


def write_vector_cache(
    state_dir: Path,
    keys: Sequence[str],
    matrix: Matrix,
    *,
    embedder: str,
    follows: Stamp | None = None,
) -> None:
    """Replace the cache with a new base and an empty log; the older files are removed once
    the new json names the new ones. `follows`: the index state the vectors were read at
    (read before them: a write in between only makes the cache look older than it is)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    rows, dim = (len(keys), matrix.shape[1]) if matrix.ndim == 2 else (0, 1)
    data = np.ascontiguousarray(matrix, dtype="<f4").reshape(rows, dim)
    token = secrets.token_hex(8)
    ours = {f"vectors-{token}.npy", f"vectors-{token}.keys"}
    base_log.write_base(
        state_dir / f"vectors-{token}.npy", lambda h: np.save(h, data, allow_pickle=False)
    )
    base_log.write_base(
        state_dir / f"vectors-{token}.keys", lambda h: h.write(json.dumps(list(keys)).encode())
    )
    start_log(state_dir, token)
    ours |= {path.name for path in log_paths(state_dir, token)}
    meta = {"format": CACHE_FORMAT, "embedder": embedder, "dim": dim, "rows": rows, "token": token}
    base_log.write_base(state_dir / VECTORS_JSON, lambda h: h.write(json.dumps(meta).encode()))
    record_follows(state_dir, token, follows)
    for old in state_dir.iterdir():
        if old.name in ours or old.is_symlink():
            continue
        if _NPY_NAME.match(old.name) or _PART_NAME.match(old.name):
            with contextlib.suppress(OSError):
                old.unlink()


def append_vector_cache(
    state_dir: Path,
    keys: Sequence[str],
    matrix: Matrix,
    *,
    covers: Sequence[str],
    embedder: str,
    follows: Stamp | None = None,
) -> tuple[int, int] | None:
    """Append the vectors of the memories `covers` names (`keys`: one per row; a covered
    memory without rows has none any more) to the cache's log: the log's rows after it and
    the base's. `follows`: the index state the cache holds after it. None when there is no
    usable cache of this embedder and dimension (write one)."""
    header = read_header(state_dir)
    if header is None or header.embedder != embedder:
        return None
    log = read_vector_log(state_dir, header.token, header.dim, MAX_ROWS - header.rows)
    rows = len(keys)
    if log is None or (rows and (matrix.ndim != 2 or matrix.shape != (rows, header.dim))):
        return None
    if log.rows + rows > MAX_ROWS - header.rows:
        return None
    data = np.asarray(matrix, dtype=np.float32).reshape(rows, header.dim)
    if rows or covers:
        append_to_log(state_dir, header.token, log, keys, data, covers)
    record_follows(state_dir, header.token, follows)  # after the rows and line are on disk
    return log.rows + rows, header.rows


def cache_follows(state_dir: Path, header: Header) -> Stamp | None:
    """The index state the cache of `header` holds the vectors of; None: unknown (no file, one
    of another base, or not of the expected shape: the cache is then written whole)."""
    found = base_log.read_json(state_dir / FOLLOWS, 1 << 12)
    if not isinstance(found, dict) or found.get("token") != header.token:
        return None
    return _stamp_of(found.get("index"))


def _stamp_of(value: object) -> Stamp | None:
    if not isinstance(value, list) or len(value) != 2:
        return None
    version, meta = value
    if not isinstance(version, int) or isinstance(version, bool):
        return None
    if meta is None:
        return version, None
    if not isinstance(meta, list) or len(meta) != 3:
        return None
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in meta):
        return None
    return version, (meta[0], meta[1], meta[2])


def record_follows(state_dir: Path, token: str, follows: Stamp | None) -> None:
    """Say which index state the cache now holds (None: unknown, so the next sync writes it
    whole). Written last: a crash before it leaves the older state named, never a newer one."""
    if follows is None:
        with contextlib.suppress(FileNotFoundError):
            (state_dir / FOLLOWS).unlink()
        return
    text = json.dumps({"token": token, "index": follows})
    base_log.write_base(state_dir / FOLLOWS, lambda h: h.write(text.encode()))


def remove_vector_cache(state_dir: Path) -> None:
    """No vectors (embedder unavailable): a cache of older vectors would be stale."""
    with contextlib.suppress(OSError):
        (state_dir / VECTORS_JSON).unlink()
