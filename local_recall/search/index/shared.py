"""Shared tables: the org datasets (local_recall/org/, docs/org.md).

The same engine for a dataset anywhere LanceDB reaches (a folder, s3://, s3+ddb://, gs://,
az://): the org layer decides what to write and how to score, this only carries it out, so
lancedb stays imported in the index package. Every failure is IndexUnavailable."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from local_recall.errors import CommitConflict, IndexUnavailable
from local_recall.search.index.lance_import import import_lancedb
from local_recall.search.index.s3_listing import s3_table_names
from local_recall.search.index.schema import FTS_OPTIONS
from local_recall.search.index.tables import (
    KEEP_OLD_VERSIONS,
    OPTIMIZE_AFTER_ROWS,
    is_vector_index,
    unindexed_rows,
)
from local_recall.text import one_line

MAINTAIN_ATTEMPTS = 4  # a commit conflict with a concurrent publish is retried

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa


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
        # its log level is read when its runtime starts: a request left in flight by a deadline
        # is otherwise a WARN line on stderr at exit
        os.environ.setdefault("LANCEDB_LOG", "error")
        import_lancedb()

    def connect(self) -> Any:
        """The database handle (connecting asks the store for its namespace manifest)."""
        if self._db is None:
            os.environ.setdefault("LANCEDB_LOG", "error")  # as tables.py connects
            try:
                lancedb = import_lancedb()

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
            listed = s3_table_names(self.uri, self._options)  # one odd object name: see there
            if listed is not None:
                return listed
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

    def drop(self, name: str) -> None:
        """Delete a table and its versions (readers holding it open fail on their next read)."""
        try:
            self.connect().drop_table(name)
        except IndexUnavailable:
            raise
        except Exception as exc:
            raise IndexUnavailable(f"cannot remove {name}: {_one_line(exc)}") from exc


class SharedTable:
    """One table of a SharedStore: reads, one-commit writes, the two candidate queries."""

    def __init__(self, table: Any) -> None:
        self._table = table

    def _run(self, what: str, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except Exception as exc:
            raise IndexUnavailable(f"{what} failed: {_one_line(exc)}") from exc

    def _commit(self, what: str, call: Callable[[], Any]) -> None:
        """A write: a commit that lost to a concurrent one is a CommitConflict (the caller
        re-reads and plans again), any other failure IndexUnavailable."""
        try:
            call()
        except Exception as exc:
            kind = CommitConflict if is_commit_conflict(exc) else IndexUnavailable
            raise kind(f"{what} failed: {_one_line(exc)}") from exc

    @property
    def version(self) -> int:
        return int(self._run("reading the version", lambda: self._table.version))

    def metadata(self) -> dict[str, str]:
        """The schema's key/value metadata (read with the manifest: no extra request)."""
        raw = self._run("reading the schema", lambda: self._table.schema.metadata) or {}
        return {k.decode("utf-8", "replace"): v.decode("utf-8", "replace") for k, v in raw.items()}

    def column_names(self) -> frozenset[str]:
        """The schema's column names (read with the manifest: no extra request)."""
        return frozenset(self._run("reading the schema", lambda: self._table.schema.names))

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

    def apply(
        self,
        rows: pa.Table | None,
        *,
        on: str,
        delete_where: str | None,
        update_where: str | None = None,
    ) -> None:
        """Upsert `rows` by `on` and delete what `delete_where` selects in ONE commit: a reader
        sees the old version or the new one, never half a publish; a process killed before
        the commit leaves only unreferenced files. Concurrent commits are detected by the
        store's conditional writes and retried by lance (docs/org.md#concurrency). With
        `rows`, `delete_where` selects among the rows `rows` does not hold; `update_where`
        (`target.x != source.x`) limits which matched rows are rewritten."""
        if rows is None and delete_where is None:
            return
        if rows is None:
            self._commit("deleting", lambda: self._table.delete(delete_where))
            return
        builder = (
            self._table.merge_insert(on)
            .when_matched_update_all(where=update_where)
            .when_not_matched_insert_all()
        )
        if delete_where is not None:
            builder = builder.when_not_matched_by_source_delete(delete_where)
        self._commit("writing", lambda: builder.execute(rows))

    def maintain(self, *, ann_threshold: int, unindexed_limit: int = OPTIMIZE_AFTER_ROWS) -> None:
        """The full-text index exists; new rows are folded into the indices past
        `unindexed_limit`; an ANN index is built from `ann_threshold` rows (CPU-bound: CI)."""
        from lancedb.index import FTS, HnswSq

        def call() -> None:
            table = self._table
            indices = {cfg.index_type: cfg for cfg in table.list_indices()}
            rows = int(table.count_rows())
            if "FTS" not in indices and rows:
                table.create_index("document", config=FTS(**FTS_OPTIONS), replace=True)
            elif unindexed_rows(table, indices.get("FTS")) > unindexed_limit:
                table.optimize(cleanup_older_than=KEEP_OLD_VERSIONS)
            if rows >= ann_threshold and not any(is_vector_index(c) for c in indices.values()):
                partitions = max(1, rows // 50_000)
                table.create_index(
                    "vector", config=HnswSq(distance_type="cosine", num_partitions=partitions)
                )

        # Two publishes of one repository at once (CI runs) may both create or fold an index:
        # LanceDB refuses the second commit as a conflict. The rows have landed either way;
        # the loser re-reads the table (the index may exist now) and tries again.
        for attempt in range(MAINTAIN_ATTEMPTS):
            try:
                call()
                return
            except Exception as exc:
                if attempt + 1 == MAINTAIN_ATTEMPTS or not is_commit_conflict(exc):
                    raise IndexUnavailable(
                        f"maintaining the indices failed: {_one_line(exc)}"
                    ) from exc
                with contextlib.suppress(Exception):
                    self._table.checkout_latest()
                time.sleep(0.2 * (attempt + 1))

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


def is_commit_conflict(exc: BaseException) -> bool:
    """Whether LanceDB refused a commit because another writer's landed first ("Retryable
    commit conflict", "Incompatible transaction ... concurrent transaction ...")."""
    text = str(exc).lower()
    return "conflict" in text or "concurrent transaction" in text


def _one_line(exc: BaseException) -> str:
    return one_line(str(exc), 300, mark="...")
