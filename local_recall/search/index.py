"""The search index: a LanceDB table in `local-recall/index/`, derived from the memory files.

This is the only module that imports lancedb (lazily: the import costs ~2 s). The index is a
cache — gitignored, rebuildable at any time from the files — so anything wrong with it (missing,
corrupt, built by another embedder, written by an older version) leads to a rebuild, never to
an error the user sees. Layout and rules: docs/search.md.

One table, `memories`, one row per memory of either kind, keyed `<kind>/<id>`, holding its text,
metadata, full-text document and whole-text vector; a second, `passages`, one vector per
sentence of multi-sentence memories (a memory scores by its best vector). Next to them,
`meta.json` records which embedder made the vectors; a different embedder means a full rebuild,
so vectors of two models are never mixed. When the embedder cannot be reached, rows are still
written with their text (so full-text search finds them) and an all-zero vector marked
`has_vector = false`; the next sync with a working embedder embeds them.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from filelock import FileLock
from filelock import Timeout as LockTimeout

from local_recall.errors import EmbedderUnavailable, IndexUnavailable, StorageError
from local_recall.memory.keywords import extract_keywords
from local_recall.memory.model import Memory
from local_recall.repo.files import write_text_atomic
from local_recall.search.embedders import Embedder, canonical_ollama_model, embedder_fingerprint
from local_recall.search.index_plan import (
    Fingerprint,
    IndexPlan,
    embedded_text,
    fingerprint,
    fts_document,
    passages,
    plan_index_sync,
    row_key,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa

log = logging.getLogger(__name__)

INDEX_FORMAT: Final = 2  # bump when the tables' columns change: every index is rebuilt
TABLE: Final = "memories"
PASSAGES: Final = "passages"  # extra vectors: the sentences of multi-sentence memories
META_FILE: Final = "meta.json"
EMBED_BATCH: Final = 256  # rows embedded and written per step: progress and crash-safety
_OPTIMIZE_AFTER_ROWS: Final = 1_000  # compact + fold new rows into the indices past this
_KEEP_OLD_VERSIONS: Final = timedelta(minutes=10)  # readers of an older version keep working
_LOCK_TIMEOUT_SECONDS: Final = 300.0
_KEY = re.compile(
    r"^(?:episodic|thinking)/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
)
PENDING: Final = "pending:"  # text_fp prefix of a row written without a vector
_KIND_FILTER: Final = {"episodic": "kind = 'episodic'", "thinking": "kind = 'thinking'"}

ProgressCallback = Callable[[int, int], None]  # (done, total)


@dataclass(frozen=True, slots=True)
class IndexMeta:
    """What meta.json records. `embedder` is None for an index of text-only rows."""

    format: int
    embedder: str | None  # embedder_fingerprint(), e.g. "minilm:all-MiniLM-L6-v2-int8:384"
    identity: str  # provider:model, comparable without asking the embedder anything
    dim: int

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "embedder": self.embedder,
            "identity": self.identity,
            "dim": self.dim,
        }


@dataclass(frozen=True, slots=True)
class IndexReport:
    """What one sync did. `fallback` says why vectors could not be made (None: all fine)."""

    embedded: int
    updated: int
    removed: int
    total: int
    rebuilt: bool
    seconds: float
    fallback: str | None = None
    rebuild_reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "embedded": self.embedded,
            "updated": self.updated,
            "removed": self.removed,
            "total": self.total,
            "rebuilt": self.rebuilt,
            "seconds": round(self.seconds, 3),
            "fallback": self.fallback,
            "rebuild_reason": self.rebuild_reason,
        }


@dataclass(frozen=True, slots=True)
class Candidate:
    key: str
    score: float  # vector: cosine similarity; text: BM25


def embedder_identity(embedder: Embedder) -> str:
    """provider:model without the dimension: known without loading or calling the model."""
    model = canonical_ollama_model(embedder.model) if embedder.name == "ollama" else embedder.model
    return f"{embedder.name}:{model}"


def decide_rebuild(meta: IndexMeta | None, *, fingerprint: str | None, identity: str) -> str | None:
    """Why the whole index must be rebuilt, or None. `fingerprint` is None when the embedder
    cannot be asked right now: then an index of the configured model is kept as it is."""
    if meta is None:
        return "no index yet"
    if meta.format != INDEX_FORMAT:
        return f"index format {meta.format} → {INDEX_FORMAT}"
    if fingerprint is not None:
        if meta.embedder != fingerprint:
            return f"embedder {meta.embedder or 'none'} → {fingerprint}"
        return None
    if meta.identity != identity:
        return f"embedder {meta.identity} → {identity} (not reachable: text-only rows)"
    return None


class MemoryIndex:
    """The LanceDB table and its meta file. Every lancedb failure becomes IndexUnavailable."""

    def __init__(self, directory: Path, lock_path: Path, *, ann_threshold: int = 5_000) -> None:
        self.directory = directory
        self._lock_path = lock_path
        self._ann_threshold = ann_threshold
        self._db: Any = None
        self._tables: dict[str, Any] = {}
        # Whether the passages table has rows, as of this process's last sync: an empty one
        # is not queried (a query costs ~1-2 ms even on no rows).
        self._has_passages: bool | None = None
        # Whether text-only rows (no vector yet) exist, as of the last sync: only then does a
        # vector query need the `has_vector` filter (a filter scans the column: slow at 100k).
        self._has_pending: bool | None = None
        # key → (what the fingerprint was computed from, fingerprint): a no-op sync of 10k
        # memories then compares tuples instead of hashing 10k texts.
        self._fp_cache: dict[str, tuple[tuple[Any, ...], Fingerprint]] = {}

    # --- meta ---------------------------------------------------------------------------------

    @property
    def meta_path(self) -> Path:
        return self.directory / META_FILE

    def read_meta(self) -> IndexMeta | None:
        try:
            data = json.loads(self.meta_path.read_text(encoding="utf-8"))
            return IndexMeta(
                format=int(data["format"]),
                embedder=data["embedder"],
                identity=str(data["identity"]),
                dim=int(data["dim"]),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _write_meta(self, meta: IndexMeta) -> None:
        write_text_atomic(self.meta_path, json.dumps(meta.to_json(), indent=2) + "\n")

    # --- lancedb ------------------------------------------------------------------------------

    def _connect(self) -> Any:
        if self._db is None:
            try:
                # lance logs warnings (e.g. deprecations) straight to stderr, which is a
                # protocol channel for hooks; keep only errors unless the user asks for more.
                os.environ.setdefault("LANCEDB_LOG", "error")
                import lancedb

                self.directory.mkdir(parents=True, exist_ok=True)
                # 0 = check for a newer version on every read: another process (the daemon,
                # `local-recall index`) may have written since this handle was opened.
                self._db = lancedb.connect(self.directory, read_consistency_interval=timedelta(0))
            except Exception as exc:
                raise IndexUnavailable(f"cannot open the index at {self.directory}: {exc}") from exc
        return self._db

    def _opened(self, name: str = TABLE) -> Any:
        if name not in self._tables:
            db = self._connect()
            try:
                self._tables[name] = db.open_table(name)
            except Exception as exc:
                raise IndexUnavailable(f"cannot open the index table {name}: {exc}") from exc
        return self._tables[name]

    def forget(self) -> None:
        """Drop open handles (after an error, or before a rebuild)."""
        self._tables = {}
        self._db = None
        self._has_passages = None
        self._has_pending = None

    def exists(self) -> bool:
        return self.meta_path.is_file() and all(
            (self.directory / f"{name}.lance").is_dir() for name in (TABLE, PASSAGES)
        )

    def count(self) -> int:
        try:
            return int(self._opened().count_rows())
        except IndexUnavailable:
            raise
        except Exception as exc:
            raise IndexUnavailable(f"cannot count index rows: {exc}") from exc

    def fingerprints(self) -> dict[str, Fingerprint]:
        """key → fingerprint of every row: two short columns, ~15 ms for 10k rows."""
        try:
            table = self._opened()
            data = table.search().select(["key", "text_fp", "meta_fp"]).limit(None).to_arrow()
        except IndexUnavailable:
            raise
        except Exception as exc:
            raise IndexUnavailable(f"cannot read the index: {exc}") from exc
        keys = data.column("key").to_pylist()
        texts = data.column("text_fp").to_pylist()
        metas = data.column("meta_fp").to_pylist()
        return {k: Fingerprint(text=t, meta=m) for k, t, m in zip(keys, texts, metas, strict=True)}

    def fingerprints_of(self, memories: Mapping[str, Memory]) -> dict[str, Fingerprint]:
        """The fingerprints of these memories (cached per memory while its fields stay put)."""
        fresh: dict[str, tuple[tuple[Any, ...], Fingerprint]] = {}
        for key, memory in memories.items():
            basis = (
                memory.subject,
                memory.content_hash,
                memory.keywords,
                memory.applies_to,
                memory.occurred_at,
                memory.kind,
            )
            cached = self._fp_cache.get(key)
            if cached is not None and cached[0] == basis:
                fresh[key] = cached
            else:
                fresh[key] = (basis, fingerprint(memory, memory.keywords))
        self._fp_cache = fresh
        return {key: fp for key, (_, fp) in fresh.items()}

    def create(self, meta: IndexMeta) -> None:
        """New, empty tables (replacing any old ones) and their meta file. Overwriting makes a
        new version, so a process still reading the old one is not disturbed."""
        self.forget()
        with contextlib.suppress(OSError):
            self.meta_path.unlink()
        for name, schema in ((TABLE, _schema(meta.dim)), (PASSAGES, _passage_schema(meta.dim))):
            folder = self.directory / f"{name}.lance"
            try:
                mode = "overwrite" if folder.is_dir() else "create"
                self._tables[name] = self._connect().create_table(name, schema=schema, mode=mode)
            except Exception as exc:
                log.warning("index table %s cannot be overwritten (%s); deleting it", name, exc)
                shutil.rmtree(folder, ignore_errors=True)
                try:
                    self._tables[name] = self._connect().create_table(name, schema=schema)
                except Exception as exc2:
                    raise IndexUnavailable(f"cannot create the index: {exc2}") from exc2
        self._write_meta(meta)

    def destroy(self) -> None:
        """Delete everything under the index folder (a corrupt index)."""
        self.forget()
        shutil.rmtree(self.directory, ignore_errors=True)

    def write(
        self,
        rows: Sequence[Mapping[str, Any]],
        passages: Sequence[Mapping[str, Any]],
        *,
        replace: bool,
    ) -> None:
        """Add memory rows and their passage vectors; `replace`: some keys may exist already
        (re-embedded memories): their rows are overwritten and their old passages dropped."""
        if not rows:
            return
        import numpy as np
        import pyarrow as pa

        dim = self.read_meta_dim()
        data = _to_arrow(rows, dim)
        # Passages first, the row last: a crash in between leaves the row's old text
        # fingerprint, so the next sync embeds the memory (and its passages) again.
        if replace:
            self._delete(PASSAGES, [r["key"] for r in rows])
        try:
            if passages:
                matrix = np.stack([np.asarray(p["vector"], dtype=np.float32) for p in passages])
                self._opened(PASSAGES).add(
                    pa.Table.from_pydict(
                        {
                            "key": pa.array([p["key"] for p in passages], pa.string()),
                            "kind": pa.array([p["kind"] for p in passages], pa.string()),
                            "vector": pa.FixedSizeListArray.from_arrays(
                                pa.array(matrix.ravel()), dim
                            ),
                        },
                        schema=_passage_schema(dim),
                    )
                )
            table = self._opened()
            if replace:
                (
                    table.merge_insert("key")
                    .when_matched_update_all()
                    .when_not_matched_insert_all()
                    .execute(data)
                )
            else:
                table.add(data)
        except Exception as exc:
            raise IndexUnavailable(f"cannot write to the index: {exc}") from exc

    def update_metadata(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Rewrite everything but the vector of existing rows (a partial merge)."""
        if not rows:
            return
        import pyarrow as pa

        schema = _schema(self.read_meta_dim())
        fields = [
            f for f in schema if f.name not in ("vector", "has_vector", "embedded", "text_fp")
        ]
        partial = pa.schema(fields)
        data = pa.Table.from_pylist(
            [{f.name: r[f.name] for f in fields} for r in rows], schema=partial
        )
        try:
            self._opened().merge_insert("key").when_matched_update_all().execute(data)
        except Exception as exc:
            raise IndexUnavailable(f"cannot update the index: {exc}") from exc

    def remove(self, keys: Sequence[str]) -> None:
        self._delete(TABLE, keys)
        self._delete(PASSAGES, keys)

    def _delete(self, name: str, keys: Sequence[str]) -> None:
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            for key in chunk:  # the filter is SQL: only well-formed keys ever reach it
                if not _KEY.match(key):
                    raise IndexUnavailable(f"refusing a malformed index key {key!r}")
            where = "key IN (" + ", ".join(f"'{key}'" for key in chunk) + ")"
            try:
                self._opened(name).delete(where)
            except Exception as exc:
                raise IndexUnavailable(f"removing rows failed: {exc}") from exc

    def read_meta_dim(self) -> int:
        meta = self.read_meta()
        if meta is None:
            raise IndexUnavailable("the index has no meta.json")
        return meta.dim

    def maintain(self, *, written: int) -> None:
        """Keep queries fast: the full-text index exists, new rows are folded into the indices
        after larger writes, and an ANN index is built once the table is big enough."""
        from lancedb.index import FTS, HnswSq

        try:
            for name in (TABLE, PASSAGES):
                table = self._opened(name)
                indices = {cfg.index_type: cfg for cfg in table.list_indices()}
                rows = int(table.count_rows())
                if name == TABLE and "FTS" not in indices and rows:
                    table.create_index("document", config=FTS(**FTS_OPTIONS), replace=True)
                elif (
                    written >= _OPTIMIZE_AFTER_ROWS
                    or _unindexed(table, indices.get("FTS")) > _OPTIMIZE_AFTER_ROWS
                ):
                    table.optimize(cleanup_older_than=_KEEP_OLD_VERSIONS)
                has_ann = any(_is_vector_index(cfg) for cfg in indices.values())
                if rows >= self._ann_threshold and not has_ann:
                    log.info("building the ANN vector index of %s over %d rows", name, rows)
                    partitions = max(1, rows // 50_000)  # one HNSW graph per ~50k vectors
                    table.create_index(
                        "vector", config=HnswSq(distance_type="cosine", num_partitions=partitions)
                    )
        except Exception as exc:
            raise IndexUnavailable(f"cannot maintain the index: {exc}") from exc

    def has_pending(self, *, refresh: bool = False) -> bool:
        if self._has_pending is None or refresh:
            try:
                self._has_pending = int(self._opened().count_rows("has_vector = false")) > 0
            except Exception as exc:
                raise IndexUnavailable(f"cannot count rows: {exc}") from exc
        return self._has_pending

    def has_passages(self, *, refresh: bool = False) -> bool:
        if self._has_passages is None or refresh:
            try:
                self._has_passages = int(self._opened(PASSAGES).count_rows()) > 0
            except Exception as exc:
                raise IndexUnavailable(f"cannot count passages: {exc}") from exc
        return self._has_passages

    def has_ann(self) -> bool:
        try:
            return any(_is_vector_index(cfg) for cfg in self._opened().list_indices())
        except Exception as exc:
            raise IndexUnavailable(f"cannot list the index's indices: {exc}") from exc

    # --- queries --------------------------------------------------------------------------------

    def vector_search(
        self,
        vector: npt.NDArray[np.float32],
        *,
        limit: int,
        kind: str | None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[Candidate]:
        """Cosine similarity of each memory's best vector (whole text or one of its passages).
        Dates filter whole-text rows only: passages carry no date, and `since`/`until` are
        applied again to the memories themselves by the caller."""
        best: dict[str, float] = {}
        pending = "has_vector = true" if self.has_pending() else None
        tables = [(TABLE, _where(kind, since, until, extra=pending))]
        if self.has_passages():
            tables.append((PASSAGES, _where(kind, None, None)))
        for name, where in tables:
            try:
                query = (
                    self._opened(name)
                    .search(vector, vector_column_name="vector")
                    .distance_type("cosine")
                )
                if where:
                    query = query.where(where, prefilter=True)
                data = (
                    query.limit(limit * (2 if name == PASSAGES else 1))
                    .select(["key", "_distance"])
                    .to_arrow()
                )
            except Exception as exc:
                raise IndexUnavailable(f"vector search failed: {exc}") from exc
            for key, distance in zip(
                data.column("key").to_pylist(), data.column("_distance").to_pylist(), strict=True
            ):
                best[key] = max(best.get(key, -1.0), 1.0 - float(distance))
        ranked = sorted(best.items(), key=lambda item: -item[1])[:limit]
        return [Candidate(key, score) for key, score in ranked]

    def text_search(
        self,
        terms: Sequence[str],
        *,
        limit: int,
        kind: str | None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[Candidate]:
        """BM25 over the full-text documents. `terms` are plain words: the query is a match
        query object, never parsed as syntax and never put in a filter."""
        if not terms:
            return []
        from lancedb.query import FullTextOperator, MatchQuery

        where = _where(kind, since, until)
        match = MatchQuery(
            " ".join(terms),
            "document",
            boost=1.0,
            fuzziness=0,
            max_expansions=50,
            operator=FullTextOperator.OR,
            prefix_length=0,
            document_granularity=None,
        )
        try:
            query = self._opened().search(match, query_type="fts")
            if where:
                query = query.where(where, prefilter=True)
            data = query.limit(limit).select(["key", "_score"]).to_arrow()
        except Exception as exc:
            raise IndexUnavailable(f"full-text search failed: {exc}") from exc
        keys = data.column("key").to_pylist()
        scores = data.column("_score").to_pylist()
        return [Candidate(k, float(s)) for k, s in zip(keys, scores, strict=True)]

    # --- locking --------------------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One writer at a time across processes (CLI, daemon, MCP server)."""
        try:
            self._lock_path.parent.mkdir(parents=True, exist_ok=True)
            lock = FileLock(str(self._lock_path), timeout=_LOCK_TIMEOUT_SECONDS)
            lock.acquire()
        except LockTimeout:
            raise StorageError(f"timed out waiting for the index lock {self._lock_path}") from None
        except OSError as exc:
            raise StorageError(f"cannot lock {self._lock_path}: {exc.strerror or exc}") from None
        try:
            yield
        finally:
            lock.release()


# Tokenizer of the full-text index. Stemming lets "deduplicating" find "deduplicate"; stop
# words are dropped on both sides; ascii folding makes "café" match "cafe".
FTS_OPTIONS: Final[Mapping[str, Any]] = {
    "with_position": False,
    "base_tokenizer": "simple",
    "language": "English",
    "lower_case": True,
    "stem": True,
    "remove_stop_words": True,
    "ascii_folding": True,
    "max_token_length": 40,
}


def _is_vector_index(config: Any) -> bool:
    return list(config.columns) == ["vector"]


def _unindexed(table: Any, fts: Any) -> int:
    if fts is None:
        return 0
    try:
        return int(table.index_stats(fts.name).num_unindexed_rows)
    except Exception:
        return 0


def _where(
    kind: str | None, since: datetime | None, until: datetime | None, extra: str | None = None
) -> str | None:
    """A filter built only from constants and numbers — never from user text."""
    parts = [] if extra is None else [extra]
    if kind is not None:
        parts.append(_KIND_FILTER[kind])
    if since is not None:
        parts.append(f"occurred_at >= {float(since.timestamp())!r}")
    if until is not None:
        parts.append(f"occurred_at <= {float(until.timestamp())!r}")
    return " AND ".join(parts) if parts else None


def _schema(dim: int) -> pa.Schema:
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("key", pa.string(), nullable=False),
            pa.field("id", pa.string(), nullable=False),
            pa.field("kind", pa.string(), nullable=False),
            pa.field("subject", pa.string()),
            pa.field("body", pa.string()),
            pa.field("keywords", pa.list_(pa.string())),
            pa.field("keywords_text", pa.string()),
            pa.field("applies_to", pa.string()),
            pa.field("occurred_at", pa.float64()),  # epoch seconds, UTC
            pa.field("content_hash", pa.string()),
            pa.field("meta_fp", pa.string()),
            pa.field("document", pa.string()),  # what the full-text index reads
            pa.field("text_fp", pa.string()),
            pa.field("embedded", pa.string()),  # what was embedded
            pa.field("has_vector", pa.bool_()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
        ]
    )


def _passage_schema(dim: int) -> pa.Schema:
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("key", pa.string(), nullable=False),
            pa.field("kind", pa.string(), nullable=False),
            pa.field("vector", pa.list_(pa.float32(), dim)),
        ]
    )


def _to_arrow(rows: Sequence[Mapping[str, Any]], dim: int) -> pa.Table:
    import numpy as np
    import pyarrow as pa

    schema = _schema(dim)
    columns: dict[str, Any] = {}
    for field in schema:
        if field.name == "vector":
            matrix = np.stack([np.asarray(r["vector"], dtype=np.float32) for r in rows])
            columns["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), dim)
        else:
            columns[field.name] = pa.array([r[field.name] for r in rows], type=field.type)
    return pa.Table.from_pydict(columns, schema=schema)


# --- sync -----------------------------------------------------------------------------------


def build_row(memory: Memory, fp: Fingerprint, vector: Any, *, has_vector: bool) -> dict[str, Any]:
    keywords = memory.keywords or extract_keywords(f"{memory.subject}\n{memory.body}")
    return {
        "key": row_key(memory.kind, memory.id),
        "id": memory.id,
        "kind": memory.kind,
        "subject": memory.subject,
        "body": memory.body,
        "keywords": list(keywords),
        "keywords_text": " ; ".join(keywords),
        "applies_to": memory.applies_to,
        "occurred_at": memory.occurred_at.timestamp(),
        "content_hash": memory.content_hash,
        "meta_fp": fp.meta,
        "document": fts_document(memory, keywords),
        # A row without a real vector is marked pending, so a sync that can embed embeds it.
        "text_fp": fp.text if has_vector else PENDING + fp.text,
        "embedded": embedded_text(memory),
        "has_vector": has_vector,
        "vector": vector,
    }


def sync_memories(
    index: MemoryIndex,
    memories: Sequence[Memory],
    embedder: Embedder,
    *,
    rebuild: bool = False,
    progress: ProgressCallback | None = None,
) -> IndexReport:
    """Bring the index in line with `memories` (every readable memory of every kind).

    Never raises for a broken index (it is rebuilt) or an unreachable embedder (rows are
    written text-only and `fallback` says why); StorageError only if the lock cannot be had."""
    started = time.perf_counter()
    with index.locked():
        try:
            return _sync_locked(index, memories, embedder, rebuild, progress, started)
        except IndexUnavailable as exc:
            log.warning("index unusable (%s): rebuilding it from the memory files", exc)
            index.destroy()
            return _sync_locked(
                index, memories, embedder, True, progress, started, reason=f"index unusable: {exc}"
            )


def _sync_locked(
    index: MemoryIndex,
    memories: Sequence[Memory],
    embedder: Embedder,
    rebuild: bool,
    progress: ProgressCallback | None,
    started: float,
    reason: str | None = None,
) -> IndexReport:
    fallback: str | None = None
    try:
        current: str | None = embedder_fingerprint(embedder)
        dim = embedder.dim
    except EmbedderUnavailable as exc:
        current, fallback = None, str(exc)
        dim = 0
    identity = embedder_identity(embedder)
    meta = index.read_meta()
    if not index.exists():
        meta = None
    why = (
        reason
        or ("asked for" if rebuild else None)
        or decide_rebuild(meta, fingerprint=current, identity=identity)
    )
    if why is not None:
        if current is None:
            # No vectors can be made: keep the known dimension if any, else a 1-wide column.
            dim = meta.dim if meta is not None and meta.identity == identity else 1
        new_meta = IndexMeta(INDEX_FORMAT, current, identity, dim)
        index.create(new_meta)
        indexed: dict[str, Fingerprint] = {}
        log.info("index rebuild: %s", why)
    else:
        assert meta is not None
        dim = meta.dim
        indexed = index.fingerprints()
    by_key = {row_key(m.kind, m.id): m for m in memories}
    on_disk = index.fingerprints_of(by_key)
    if current is None:  # no embedder: a pending row of unchanged text needs nothing
        indexed = {
            k: Fingerprint(fp.text.removeprefix(PENDING), fp.meta) for k, fp in indexed.items()
        }
    plan = plan_index_sync(on_disk, indexed)
    embedded, fallback = _carry_out(
        index,
        plan,
        by_key,
        on_disk,
        indexed,
        embedder,
        current is not None,
        dim,
        fallback,
        progress,
    )
    written = len(plan.to_embed) + len(plan.to_update) + len(plan.to_remove)
    if written or why is not None:
        index.maintain(written=written)
        index.has_passages(refresh=True)
        index.has_pending(refresh=True)
    return IndexReport(
        embedded=embedded,
        updated=len(plan.to_update),
        removed=len(plan.to_remove),
        total=len(by_key),
        rebuilt=why is not None,
        seconds=time.perf_counter() - started,
        fallback=fallback,
        rebuild_reason=why,
    )


def _carry_out(
    index: MemoryIndex,
    plan: IndexPlan,
    by_key: Mapping[str, Memory],
    on_disk: Mapping[str, Fingerprint],
    indexed: Mapping[str, Fingerprint],
    embedder: Embedder,
    can_embed: bool,
    dim: int,
    fallback: str | None,
    progress: ProgressCallback | None,
) -> tuple[int, str | None]:
    import numpy as np

    index.remove(list(plan.to_remove))
    index.update_metadata(
        [build_row(by_key[k], on_disk[k], None, has_vector=True) for k in plan.to_update]
    )
    embedded = 0
    total = len(plan.to_embed)
    if progress is not None and total:
        progress(0, total)
    for start in range(0, total, EMBED_BATCH):
        keys = plan.to_embed[start : start + EMBED_BATCH]
        batch = [by_key[k] for k in keys]
        vectors: Any = None
        passage_rows: list[dict[str, Any]] = []
        if can_embed:
            cut = [passages(m) for m in batch]
            texts = [embedded_text(m) for m in batch] + [p for ps in cut for p in ps]
            try:
                matrix = embedder.embed_documents(texts)
            except EmbedderUnavailable as exc:
                log.warning("embedder failed during sync: %s; writing text-only rows", exc)
                can_embed, fallback = False, str(exc)
            else:
                vectors = matrix[: len(batch)]
                at = len(batch)
                for k, m, ps in zip(keys, batch, cut, strict=True):
                    for row in matrix[at : at + len(ps)]:
                        passage_rows.append({"key": k, "kind": m.kind, "vector": row})
                    at += len(ps)
        if vectors is None:
            vectors = np.zeros((len(batch), dim), dtype=np.float32)
        else:
            embedded += len(batch)
        rows = [
            build_row(m, on_disk[k], vectors[i], has_vector=can_embed)
            for i, (k, m) in enumerate(zip(keys, batch, strict=True))
        ]
        index.write(rows, passage_rows, replace=any(k in indexed for k in keys))
        if progress is not None:
            progress(min(start + EMBED_BATCH, total), total)
    return embedded, fallback


@contextlib.contextmanager
def console_progress(label: str = "indexing memories") -> Iterator[ProgressCallback]:
    """A rich progress bar on stderr (shown only once there is something to embed)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    bar = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task: list[Any] = []

    def update(done: int, total: int) -> None:
        if not task:
            bar.start()
            task.append(bar.add_task(label, total=total))
        bar.update(task[0], completed=done, total=total)

    try:
        yield update
    finally:
        if task:
            bar.stop()
