"""The memory rows of the search index (`MemoryIndex`): what is indexed (fingerprints), and
writing, updating and removing rows. The database they live in — connection, tables, meta file,
maintenance — is tables.py's; the queries are queries.py's; what a sync changes is decided in
plan.py and carried out by sync.py. When the embedder cannot be reached, rows are still written
with their text (so full-text search finds them) and an all-zero vector marked
`has_vector = false`; the next sync with a working embedder embeds them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from local_recall.errors import IndexUnavailable
from local_recall.memory.model import Memory
from local_recall.repo.files import stat_key
from local_recall.search.changes import Changes
from local_recall.search.index.file_prints import FilePrints
from local_recall.search.index.plan import PENDING, Fingerprint
from local_recall.search.index.row_copy import (
    RowCopies,
    Stamp,
    WholeVectors,
    Written,
    fingerprints_removed,
    fingerprints_updated,
    fingerprints_written,
    vectors_removed,
    vectors_written,
    written_of,
)
from local_recall.search.index.schema import (
    metadata_to_arrow,
    passages_to_arrow,
    row_filter,
    rows_to_arrow,
)
from local_recall.search.index.tables import PASSAGES, TABLE, IndexTables
from local_recall.search.scoring import ANN_FROM_ROWS

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_KEY: Final = re.compile(
    r"^(?:episodic|thinking)/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
)


class MemoryIndex(IndexTables):
    """The memory rows: one per memory of either kind, plus its passage vectors."""

    def __init__(
        self, directory: Path, lock_path: Path, *, ann_threshold: int = ANN_FROM_ROWS
    ) -> None:
        super().__init__(directory, lock_path, ann_threshold=ann_threshold)
        self.prints = FilePrints()  # the memory files' fingerprints, kept by difference
        # (stamp, embedder, memories) of the last sync that left the table in line with them
        self._synced: tuple[Stamp, str, Mapping[str, Memory]] | None = None
        self._copies = RowCopies()  # what the table held, kept in step with our writes

    def forget(self) -> None:
        super().forget()
        self._copies.clear()
        self._synced = None

    def stamp(self) -> Stamp:
        """The memories table's version and meta.json's stat: what a copy is valid for."""
        try:
            version = int(self.opened().version)
        except IndexUnavailable:
            raise
        except Exception as exc:
            raise IndexUnavailable(f"cannot read the index's version: {exc}") from exc
        return version, stat_key(self.meta_path)

    def _changed(
        self,
        before: Stamp,
        fingerprints: Callable[[dict[str, Fingerprint]], dict[str, Fingerprint]],
        vectors: Callable[[WholeVectors, str | None], WholeVectors],
        written: Written | None = None,
    ) -> None:
        """After this process's own write: row_copy.RowCopies.changed."""
        self._copies.changed(before, self.stamp(), fingerprints, vectors, written)

    def count(self) -> int:
        try:
            return int(self.opened().count_rows())
        except IndexUnavailable:
            raise
        except Exception as exc:
            raise IndexUnavailable(f"cannot count index rows: {exc}") from exc

    def fingerprints(self) -> dict[str, Fingerprint]:
        """key → fingerprint of every row: the copy while the table is at its stamp, else two
        short columns read (~50 ms of CPU at 5,000 rows)."""
        stamp = self.stamp()  # before the read: a write in between only makes the copy stale
        held = self._copies.fingerprints(stamp)
        if held is not None:
            return held
        try:
            table = self.opened()
            data = table.search().select(["key", "text_fp", "meta_fp"]).limit(None).to_arrow()
        except IndexUnavailable:
            raise
        except Exception as exc:
            raise IndexUnavailable(f"cannot read the index: {exc}") from exc
        keys = data.column("key").to_pylist()
        texts = data.column("text_fp").to_pylist()
        metas = data.column("meta_fp").to_pylist()
        found = {k: Fingerprint(text=t, meta=m) for k, t, m in zip(keys, texts, metas, strict=True)}
        self._copies.keep_fingerprints(stamp, found)
        return found

    def has_pending(self, *, refresh: bool = False) -> bool:
        """Rows written without a vector are those whose text fingerprint is marked pending
        (sync.build_row): the fingerprint copy answers without a count over the table."""
        pending = self._copies.pending(self.stamp(), PENDING) if refresh else None
        if pending is None:
            return super().has_pending(refresh=refresh)
        self._has_pending = pending
        return pending

    def fingerprints_of(
        self, memories: Mapping[str, Memory], changes: Changes | None = None
    ) -> Mapping[str, Fingerprint]:
        """The fingerprints of these memories, kept by difference (file_prints.py); the
        mapping is ours until the next call, `prints.step` says what changed."""
        return self.prints.of(memories, changes)

    def in_line(self, embedder: str | None, memories: Mapping[str, Memory]) -> bool:
        """Whether the table holds exactly the fingerprints of `memories`, every row with its
        vector of `embedder`: this process's last sync left it so, nobody wrote since."""
        synced = self._synced
        if synced is None or synced[1] != embedder or synced[2] is not memories:
            return False
        return synced[0] == self.stamp() and self._copies.fingerprints_held(synced[0]) is not None

    def mark_in_line(self, embedder: str | None, memories: Mapping[str, Memory]) -> None:
        """After a sync: it left the table in line with `memories` (embedder None: it did not,
        the embedder failed); no row is then pending."""
        self._synced = None if embedder is None else (self.stamp(), embedder, memories)
        self._has_pending = False if embedder is not None else self._has_pending

    def indexed_of(self, keys: Sequence[str]) -> dict[str, Fingerprint]:
        """The held fingerprints of these keys (those with a row); only while `in_line`."""
        held = self._copies.fingerprints_held(self.stamp())
        if held is None:
            raise IndexUnavailable("the index changed during the sync")
        return {key: held[key] for key in keys if key in held}

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
        before = self.stamp()
        # Passages first, the row last: a crash in between leaves the row's old text
        # fingerprint, so the next sync embeds the memory (and its passages) again.
        if replace:
            self._delete(PASSAGES, [r["key"] for r in rows])
        try:
            if passages:
                self.opened(PASSAGES).add(passages_to_arrow(passages, dim))
            table = self.opened()
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
        self._changed(
            before,
            lambda fps: fingerprints_written(fps, rows),
            lambda whole, kind: vectors_written(whole, rows, kind),
            written_of(rows, passages),
        )

    def update_metadata(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Rewrite everything but the vector of existing rows (a partial merge)."""
        if not rows:
            return
        data = metadata_to_arrow(rows, self.read_meta_dim())
        before = self.stamp()
        try:
            self.opened().merge_insert("key").when_matched_update_all().execute(data)
        except Exception as exc:
            raise IndexUnavailable(f"cannot update the index: {exc}") from exc
        self._changed(before, lambda fps: fingerprints_updated(fps, rows), lambda w, _k: w)

    def remove(self, keys: Sequence[str]) -> None:
        if not keys:
            return
        before = self.stamp()
        self._delete(TABLE, keys)
        self._changed(
            before,
            lambda fps: fingerprints_removed(fps, keys),
            lambda whole, _kind: vectors_removed(whole, keys),
            {key: (None, []) for key in keys},
        )
        self._delete(PASSAGES, keys)

    def maintain(self, *, written: int) -> None:
        """As IndexTables', keeping the copies: compaction and indices change no row."""
        before = self.stamp()
        super().maintain(written=written)
        self._changed(before, lambda fps: fps, lambda whole, _kind: whole)

    def written_vectors(
        self, keys: Sequence[str]
    ) -> tuple[list[str], npt.NDArray[np.float32]] | None:
        """What `vectors(None, keys=keys)` and then the same with `passages=True` return, from
        this process's last writes of those rows (a save's sync: the relevance cache appends
        them); None when the table changed since, or one of them was not written here."""
        return self._copies.written(self.stamp(), keys, self.read_meta_dim())

    def whole_vectors(self, kind: str | None) -> tuple[list[str], npt.NDArray[np.float32]]:
        """`vectors(kind)` from the copy while the table is at its stamp (the paraphrase check
        ranks them on every save). Rows may come in another order than LanceDB's."""
        whole = self.whole(kind)
        return list(whole.keys), whole.matrix

    def whole(self, kind: str | None) -> WholeVectors:
        """`whole_vectors` with each row's norm, as held (read-only: shared by every caller)."""
        stamp = self.stamp()
        whole = self._copies.whole(kind, stamp)
        if whole is None:
            import numpy as np

            keys, matrix = self.vectors(kind)
            whole = WholeVectors(tuple(keys), matrix, np.linalg.norm(matrix, axis=1))
            self._copies.keep_whole(kind, stamp, whole)
        matrix, norms = whole.matrix.view(), whole.row_norms().view()
        matrix.flags.writeable = norms.flags.writeable = False  # shared by every caller
        return WholeVectors(whole.keys, matrix, norms)

    def _delete(self, name: str, keys: Sequence[str]) -> None:
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            for key in chunk:  # the filter is SQL: only well-formed keys ever reach it
                if not _KEY.match(key):
                    raise IndexUnavailable(f"refusing a malformed index key {key!r}")
            where = "key IN (" + ", ".join(f"'{key}'" for key in chunk) + ")"
            try:
                self.opened(name).delete(where)
            except Exception as exc:
                raise IndexUnavailable(f"removing rows failed: {exc}") from exc

    def vectors(
        self, kind: str | None, *, passages: bool = False, keys: Sequence[str] | None = None
    ) -> tuple[list[str], npt.NDArray[np.float32]]:
        """Every embedded memory's key and whole-text vector (one row each), for the nearest-
        neighbour search of `consolidate`: two columns, no query. `passages`: the passage
        vectors instead (several rows per memory), for the relevance cache; `keys`: only
        these memories' (what a sync changed)."""
        import numpy as np

        extra = None if passages else "has_vector = true"
        if keys is not None:
            for key in keys:  # the filter is SQL: only well-formed keys ever reach it
                if not _KEY.match(key):
                    raise IndexUnavailable(f"refusing a malformed index key {key!r}")
            among = "key IN (" + ", ".join(f"'{key}'" for key in keys) + ")"
            extra = among if extra is None else f"{extra} AND {among}"
        where = row_filter(kind, None, None, extra=extra)
        try:
            table = self.opened(PASSAGES if passages else TABLE)
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
