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
`has_vector = false`; the next sync with a working embedder embeds them. Columns:
index_schema.py; what a sync changes: index_plan.py, carried out by index_sync.py.

Longer than 400 lines: every lancedb call lives here (the one module that imports lancedb),
the local index's and, at the end, the org datasets' (`SharedStore`, `SharedTable`: docs/org.md).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from local_recall.errors import IndexUnavailable
from local_recall.memory.model import Memory
from local_recall.repo.files import read_bytes_nofollow, through_symlink, write_text_atomic
from local_recall.search.index_plan import Fingerprint, IndexMeta, fingerprint
from local_recall.search.index_schema import (
    FTS_OPTIONS,
    metadata_to_arrow,
    passage_schema,
    passages_to_arrow,
    row_filter,
    rows_to_arrow,
    table_schema,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa

log = logging.getLogger(__name__)

TABLE: Final = "memories"
PASSAGES: Final = "passages"  # extra vectors: the sentences of multi-sentence memories
META_FILE: Final = "meta.json"
_OPTIMIZE_AFTER_ROWS: Final = 1_000  # compact + fold new rows into the indices past this
_KEEP_OLD_VERSIONS: Final = timedelta(minutes=10)  # readers of an older version keep working
_KEY = re.compile(
    r"^(?:episodic|thinking)/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
)


@dataclass(frozen=True, slots=True)
class Candidate:
    key: str
    score: float  # vector: cosine similarity; text: BM25


class MemoryIndex:
    """The LanceDB table and its meta file. Every lancedb failure becomes IndexUnavailable."""

    def __init__(self, directory: Path, lock_path: Path, *, ann_threshold: int = 5_000) -> None:
        self.directory = directory
        self.lock_path = lock_path  # one writer at a time across processes: index_sync.py
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
            data = json.loads(read_bytes_nofollow(self.meta_path))
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

                if through_symlink(self.directory) or _holds_symlink(self.directory):
                    # committed by someone who can push: lance would write through it
                    raise OSError(f"{self.directory} is or holds a symbolic link; not followed")
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
        for name, schema in ((TABLE, table_schema(meta.dim)), (PASSAGES, passage_schema(meta.dim))):
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
        dim = self.read_meta_dim()
        data = rows_to_arrow(rows, dim)
        # Passages first, the row last: a crash in between leaves the row's old text
        # fingerprint, so the next sync embeds the memory (and its passages) again.
        if replace:
            self._delete(PASSAGES, [r["key"] for r in rows])
        try:
            if passages:
                self._opened(PASSAGES).add(passages_to_arrow(passages, dim))
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
        data = metadata_to_arrow(rows, self.read_meta_dim())
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

    def vectors(
        self, kind: str | None, *, passages: bool = False
    ) -> tuple[list[str], npt.NDArray[np.float32]]:
        """Every embedded memory's key and whole-text vector (one row each), for the nearest-
        neighbour search of `consolidate`: two columns, no query. `passages`: the passage
        vectors instead (several rows per memory), for the relevance cache."""
        import numpy as np

        where = row_filter(kind, None, None, extra=None if passages else "has_vector = true")
        try:
            table = self._opened(PASSAGES if passages else TABLE)
            query = table.search().select(["key", "vector"])
            if where:
                query = query.where(where)
            data = query.limit(None).to_arrow()
        except IndexUnavailable:
            raise
        except Exception as exc:
            raise IndexUnavailable(f"cannot read the index's vectors: {exc}") from exc
        keys = [str(k) for k in data.column("key").to_pylist()]
        column = data.column("vector").combine_chunks()
        dim = self.read_meta_dim()
        flat = column.flatten().to_numpy(zero_copy_only=False)
        matrix = np.asarray(flat, dtype=np.float32).reshape(len(keys), dim)
        return keys, matrix

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
        tables = [(TABLE, row_filter(kind, since, until, extra=pending))]
        if self.has_passages():
            tables.append((PASSAGES, row_filter(kind, None, None)))
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

        where = row_filter(kind, since, until)
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


def _is_vector_index(config: Any) -> bool:
    return list(config.columns) == ["vector"]


def _unindexed(table: Any, fts: Any) -> int:
    if fts is None:
        return 0
    try:
        return int(table.index_stats(fts.name).num_unindexed_rows)
    except Exception:
        return 0


def _holds_symlink(directory: Path) -> bool:
    """Any symbolic link below `directory` (walked without following one)."""
    for folder, dirs, files in os.walk(directory):
        if any(os.path.islink(os.path.join(folder, name)) for name in (*dirs, *files)):
            return True
    return False


# --- shared tables: the org datasets (local_recall/org/, docs/org.md) --------------------------
# The same engine for a dataset anywhere LanceDB reaches (a folder, s3://, s3+ddb://, gs://,
# az://): the org layer decides what to write and how to score, this only carries it out, so
# lancedb stays imported in this one module. Every failure is IndexUnavailable.


class SharedStore:
    """A LanceDB database at a URI: one table per repository. `consistency`: how stale a table
    handle may be before a read checks for a newer version (None: never; each check costs
    object-store requests, docs/org.md#consistency)."""

    def __init__(
        self,
        uri: str,
        options: Mapping[str, str],
        *,
        consistency: timedelta | None = None,
    ) -> None:
        self.uri = uri
        self._options = dict(options)
        self._consistency = consistency
        self._db: Any = None

    @staticmethod
    def load() -> None:
        """Import lancedb (seconds on a busy machine): before any deadline on the store."""
        import lancedb  # noqa: F401

    def connect(self) -> Any:
        """The database handle (connecting asks the store for its namespace manifest)."""
        if self._db is None:
            os.environ.setdefault("LANCEDB_LOG", "error")  # see MemoryIndex._connect
            try:
                import lancedb

                self._db = lancedb.connect(
                    self.uri,
                    storage_options=self._options or None,
                    read_consistency_interval=self._consistency,
                )
            except Exception as exc:
                raise IndexUnavailable(f"cannot open {self.uri}: {_one_line(exc)}") from exc
        return self._db

    def table_names(self) -> list[str]:
        """Every table under the URI (one listing of the prefix), sorted."""
        names: list[str] = []
        token = None
        try:
            while True:
                page = self.connect().list_tables(page_token=token, limit=1000)
                names.extend(page.tables)
                token = page.page_token
                if not token:
                    return sorted(names)
        except IndexUnavailable:
            raise
        except Exception as exc:
            raise IndexUnavailable(f"cannot list {self.uri}: {_one_line(exc)}") from exc

    def open(self, name: str) -> SharedTable:
        try:
            return SharedTable(self.connect().open_table(name))
        except IndexUnavailable:
            raise
        except Exception as exc:
            raise IndexUnavailable(f"cannot open {name}: {_one_line(exc)}") from exc

    def create(self, name: str, schema: pa.Schema, *, overwrite: bool) -> SharedTable:
        """An empty table; `overwrite` replaces one that exists as a new version (readers of
        the old version keep it until they reopen)."""
        try:
            mode = "overwrite" if overwrite else "create"
            return SharedTable(self.connect().create_table(name, schema=schema, mode=mode))
        except IndexUnavailable:
            raise
        except Exception as exc:
            raise IndexUnavailable(f"cannot create {name}: {_one_line(exc)}") from exc


class SharedTable:
    """One table of a SharedStore: reads, one-commit writes, the two candidate queries."""

    def __init__(self, table: Any) -> None:
        self._table = table

    def _run(self, what: str, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except Exception as exc:
            raise IndexUnavailable(f"{what} failed: {_one_line(exc)}") from exc

    @property
    def version(self) -> int:
        return int(self._run("reading the version", lambda: self._table.version))

    def metadata(self) -> dict[str, str]:
        """The schema's key/value metadata (read with the manifest: no extra request)."""
        raw = self._run("reading the schema", lambda: self._table.schema.metadata) or {}
        return {k.decode("utf-8", "replace"): v.decode("utf-8", "replace") for k, v in raw.items()}

    def count(self) -> int:
        return int(self._run("counting rows", self._table.count_rows))

    def read(self, columns: Sequence[str], where: str | None = None) -> pa.Table:
        """`columns` of every row (or of those `where` selects: a filter made of constants)."""

        def call() -> Any:
            query = self._table.search().select(list(columns))
            if where:
                query = query.where(where)
            return query.limit(None).to_arrow()

        return self._run("reading", call)

    def apply(self, rows: pa.Table | None, *, on: str, delete_where: str | None) -> None:
        """Upsert `rows` by `on` and delete what `delete_where` selects in ONE commit: a reader
        sees the old version or the new one, never half a publish; a process killed before
        the commit leaves only unreferenced files. Concurrent commits are detected by the
        store's conditional writes and retried by lance (docs/org.md#concurrency)."""
        if rows is None and delete_where is None:
            return
        if rows is None:
            self._run("deleting", lambda: self._table.delete(delete_where))
            return
        builder = (
            self._table.merge_insert(on).when_matched_update_all().when_not_matched_insert_all()
        )
        if delete_where is not None:
            builder = builder.when_not_matched_by_source_delete(delete_where)
        self._run("writing", lambda: builder.execute(rows))

    def maintain(self, *, ann_threshold: int, unindexed_limit: int = _OPTIMIZE_AFTER_ROWS) -> None:
        """The full-text index exists; new rows are folded into the indices past
        `unindexed_limit`; an ANN index is built from `ann_threshold` rows (CPU-bound: CI)."""
        from lancedb.index import FTS, HnswSq

        def call() -> None:
            table = self._table
            indices = {cfg.index_type: cfg for cfg in table.list_indices()}
            rows = int(table.count_rows())
            if "FTS" not in indices and rows:
                table.create_index("document", config=FTS(**FTS_OPTIONS), replace=True)
            elif _unindexed(table, indices.get("FTS")) > unindexed_limit:
                table.optimize(cleanup_older_than=_KEEP_OLD_VERSIONS)
            if rows >= ann_threshold and not any(_is_vector_index(c) for c in indices.values()):
                partitions = max(1, rows // 50_000)
                table.create_index(
                    "vector", config=HnswSq(distance_type="cosine", num_partitions=partitions)
                )

        self._run("maintaining the indices", call)

    def nearest(
        self, vector: npt.NDArray[np.float32], *, limit: int, columns: Sequence[str]
    ) -> pa.Table:
        """The `limit` rows nearest `vector` (cosine), with `columns` and `_distance`."""

        def call() -> Any:
            query = self._table.search(vector, vector_column_name="vector").distance_type("cosine")
            return query.limit(limit).select([*columns, "_distance"]).to_arrow()

        return self._run("vector search", call)

    def matching(self, terms: Sequence[str], *, limit: int, columns: Sequence[str]) -> pa.Table:
        """BM25 over `document` for plain words (a match query object, never parsed)."""
        from lancedb.query import FullTextOperator, MatchQuery

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

        def call() -> Any:
            query = self._table.search(match, query_type="fts")
            return query.limit(limit).select([*columns, "_score"]).to_arrow()

        return self._run("full-text search", call)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:297] + "..."
