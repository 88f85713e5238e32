"""The LanceDB database of the search index: its connection, its two tables and their meta
file, what makes and deletes them, and what keeps them fast (`IndexTables`). The memory rows in
them are rows.py's (`MemoryIndex`), the queries queries.py's.

The index is a cache — gitignored, rebuildable at any time from the files — so anything wrong
with it (missing, corrupt, built by another embedder, written by an older version) leads to a
rebuild, never to an error the user sees. Layout and rules: docs/search.md.

One table, `memories`, one row per memory of either kind, keyed `<kind>/<id>`, holding its text,
metadata, full-text document and whole-text vector; a second, `passages`, one vector per
sentence of multi-sentence memories (a memory scores by its best vector). Next to them,
`meta.json` records which embedder made the vectors; a different embedder means a full rebuild,
so vectors of two models are never mixed. Columns: schema.py.

lancedb is imported here and in queries.py only, lazily (the import costs ~2 s).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any, Final

from local_recall.errors import IndexUnavailable
from local_recall.repo.files import read_bytes_nofollow, through_symlink, write_text_atomic
from local_recall.search.index.lance_import import import_lancedb
from local_recall.search.index.plan import IndexMeta
from local_recall.search.index.schema import FTS_OPTIONS, passage_schema, table_schema
from local_recall.search.scoring import ANN_FROM_ROWS

log = logging.getLogger(__name__)

TABLE: Final = "memories"
PASSAGES: Final = "passages"  # extra vectors: the sentences of multi-sentence memories
META_FILE: Final = "meta.json"
OPTIMIZE_AFTER_ROWS: Final = 1_000  # compact + fold new rows into the indices past this
KEEP_OLD_VERSIONS: Final = timedelta(minutes=10)  # readers of an older version keep working


class IndexTables:
    """The LanceDB connection, its tables and the meta file. Every lancedb failure becomes
    IndexUnavailable."""

    def __init__(
        self, directory: Path, lock_path: Path, *, ann_threshold: int = ANN_FROM_ROWS
    ) -> None:
        self.directory = directory
        self.lock_path = lock_path  # one writer at a time across processes: sync.py
        self._ann_threshold = ann_threshold
        self._db: Any = None
        self._tables: dict[str, Any] = {}
        # Whether the passages table has rows, as of this process's last sync: an empty one
        # is not queried (a query costs ~1-2 ms even on no rows).
        self._has_passages: bool | None = None
        # Whether text-only rows (no vector yet) exist, as of the last sync: only then does a
        # vector query need the `has_vector` filter (a filter scans the column: slow at 100k).
        self._has_pending: bool | None = None

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
                lancedb = import_lancedb()

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

    @property
    def connected(self) -> bool:
        """Whether this process has opened the index (a daemon has; a one-shot CLI may not)."""
        return self._db is not None

    def opened(self, name: str = TABLE) -> Any:
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
                table = self.opened(name)
                indices = {cfg.index_type: cfg for cfg in table.list_indices()}
                rows = int(table.count_rows())
                if name == TABLE and "FTS" not in indices and rows:
                    table.create_index("document", config=FTS(**FTS_OPTIONS), replace=True)
                elif (
                    written >= OPTIMIZE_AFTER_ROWS
                    or unindexed_rows(table, indices.get("FTS")) > OPTIMIZE_AFTER_ROWS
                ):
                    table.optimize(cleanup_older_than=KEEP_OLD_VERSIONS)
                has_ann = any(is_vector_index(cfg) for cfg in indices.values())
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
                self._has_pending = int(self.opened().count_rows("has_vector = false")) > 0
            except Exception as exc:
                raise IndexUnavailable(f"cannot count rows: {exc}") from exc
        return self._has_pending

    def has_passages(self, *, refresh: bool = False) -> bool:
        if self._has_passages is None or refresh:
            try:
                self._has_passages = int(self.opened(PASSAGES).count_rows()) > 0
            except Exception as exc:
                raise IndexUnavailable(f"cannot count passages: {exc}") from exc
        return self._has_passages

    def has_ann(self) -> bool:
        try:
            return any(is_vector_index(cfg) for cfg in self.opened().list_indices())
        except Exception as exc:
            raise IndexUnavailable(f"cannot list the index's indices: {exc}") from exc


def is_vector_index(config: Any) -> bool:
    return list(config.columns) == ["vector"]


def unindexed_rows(table: Any, fts: Any) -> int:
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
