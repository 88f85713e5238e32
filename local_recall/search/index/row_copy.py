"""This process's copy of two things the memories table holds, kept in step with its own writes
(so a save need not read them back): every row's fingerprints (what a sync compares) and the
whole-text vectors of one kind (what the paraphrase check ranks). Reading them from LanceDB on
every save was ~50 and ~35 ms of CPU at 5,000 memories, for a save that changes one row.

A copy is valid for one `Stamp` of the table: its version (LanceDB bumps it on every commit,
another process's too) and meta.json's stat (a rebuild rewrites it: a recreated table may count
its versions from 1 again). rows.py reads the stamp before and after each of its own writes and
applies the write to a copy only when the copy was current before it; any other change (another
process, a failed write) leaves a stale stamp, and the copy is read again. No I/O here: what a
write, a metadata update or a removal makes of a copy (pure functions), and `RowCopies`, which
holds the copies with their stamps (the index passes the stamps in).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from local_recall.search.index.plan import Fingerprint

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

# (table version, meta.json's (inode, mtime_ns, size) or None)
Stamp = tuple[int, tuple[int, int, int] | None]


class _Room:
    """The buffer a `WholeVectors` is the head of, with free rows past `used` (doubling): a
    save appends its row instead of copying every vector (~150 MB at 100,000 memories).
    `rows` finds a key's row among the used ones."""

    def __init__(
        self, matrix: npt.NDArray[np.float32], norms: npt.NDArray[np.float32], more: int
    ) -> None:
        import numpy as np

        size = max(64, 2 * (len(matrix) + more))  # room for `more` rows, and as many again
        self.matrix = np.zeros((size, matrix.shape[1]), dtype=np.float32)
        self.matrix[: len(matrix)] = matrix
        self.norms = np.zeros(size, dtype=np.float32)
        self.norms[: len(norms)] = norms
        self.used = len(matrix)
        self.rows: dict[str, int] = {}


@dataclass(frozen=True, slots=True)
class WholeVectors:
    """The whole-text vector of every row of one kind that has one (`has_vector`), with each
    row's L2 norm (what the paraphrase ranking divides by; computed once per row)."""

    keys: tuple[str, ...]
    matrix: npt.NDArray[np.float32]
    norms: npt.NDArray[np.float32] | None = None  # None: computed when asked for
    room: _Room | None = None  # the buffer it heads, when its rows are the buffer's used ones

    def row_norms(self) -> npt.NDArray[np.float32]:
        import numpy as np

        return np.linalg.norm(self.matrix, axis=1) if self.norms is None else self.norms

    def holds(self, keys: set[str]) -> bool:
        room = self.room
        if room is not None and room.used == len(self.keys):
            return any(key in room.rows for key in keys)
        return not keys.isdisjoint(self.keys)

    def appended(self, keys: Sequence[str], vectors: npt.NDArray[np.float32]) -> WholeVectors:
        """These rows after ours (none of `keys` held): into the room's free rows when this
        value owns them, else into a new room (one copy, then amortised)."""
        import numpy as np

        room = self.room
        if room is None or room.used != len(self.keys) or room.used + len(keys) > len(room.norms):
            room = _Room(self.matrix, self.row_norms(), len(keys))
            room.rows = {key: i for i, key in enumerate(self.keys)}
        start, end = room.used, room.used + len(keys)
        room.matrix[start:end] = vectors
        room.norms[start:end] = np.linalg.norm(vectors, axis=1)
        room.rows.update((key, start + i) for i, key in enumerate(keys))
        room.used = end
        return WholeVectors(self.keys + tuple(keys), room.matrix[:end], room.norms[:end], room)


def fingerprints_written(
    fingerprints: dict[str, Fingerprint], rows: Sequence[Mapping[str, Any]]
) -> dict[str, Fingerprint]:
    """After rows were added or replaced whole (`MemoryIndex.write`). These three update the
    copy in place (it is `RowCopies`' own; callers get copies): a save at 100,000 memories
    then costs its rows, not a copy of every row's fingerprints."""
    for row in rows:
        fingerprints[row["key"]] = Fingerprint(text=row["text_fp"], meta=row["meta_fp"])
    return fingerprints


def fingerprints_updated(
    fingerprints: dict[str, Fingerprint], rows: Sequence[Mapping[str, Any]]
) -> dict[str, Fingerprint]:
    """After a metadata update: the text fingerprint (and the vector) stay the row's."""
    for row in rows:
        key = row["key"]
        if key in fingerprints:  # a merge updates matched rows only
            fingerprints[key] = Fingerprint(text=fingerprints[key].text, meta=row["meta_fp"])
    return fingerprints


def fingerprints_removed(
    fingerprints: dict[str, Fingerprint], keys: Sequence[str]
) -> dict[str, Fingerprint]:
    for key in keys:
        fingerprints.pop(key, None)
    return fingerprints


def vectors_written(
    whole: WholeVectors, rows: Sequence[Mapping[str, Any]], kind: str | None
) -> WholeVectors:
    """After rows were added or replaced whole: theirs replace the old vectors; a row written
    without one (the embedder failed) leaves the copy, as `has_vector = true` leaves it out."""
    import numpy as np

    mine = [row for row in rows if kind is None or row["kind"] == kind]
    kept = _without(whole, {row["key"] for row in mine})
    added = [row for row in mine if row["has_vector"]]
    if not added:
        return kept
    new = np.stack([np.asarray(row["vector"], dtype=np.float32) for row in added])
    width = kept.matrix.shape[1]
    return kept.appended([row["key"] for row in added], new.reshape(len(added), width))


def vectors_removed(whole: WholeVectors, keys: Sequence[str]) -> WholeVectors:
    return _without(whole, set(keys))


def _without(whole: WholeVectors, gone: set[str]) -> WholeVectors:
    if not whole.holds(gone):
        return whole
    keep = [i for i, key in enumerate(whole.keys) if key not in gone]
    norms = whole.row_norms()[keep]
    return WholeVectors(tuple(whole.keys[i] for i in keep), whole.matrix[keep], norms)


# key -> (whole-text vector or None, passage vectors) of rows written (or removed: None, [])
Written = dict[str, tuple[Any, list[Any]]]
WRITTEN_MAX = 1_000  # rows whose vectors are kept after writing them (a save's: 1)


def written_of(rows: Sequence[Mapping[str, Any]], passages: Sequence[Mapping[str, Any]]) -> Written:
    """The vectors `MemoryIndex.write` wrote, by key: a row without one has None."""
    written: Written = {r["key"]: (r["vector"] if r["has_vector"] else None, []) for r in rows}
    for passage in passages:
        written[passage["key"]][1].append(passage["vector"])
    return written


class RowCopies:
    """What one `MemoryIndex` holds of its table, each part at the stamp it was true for: every
    row's fingerprints, the whole-text vectors by kind, and the vectors of the rows it wrote
    lately. No I/O: the index passes the stamps in."""

    def __init__(self) -> None:
        self._indexed: tuple[Stamp, dict[str, Fingerprint]] | None = None
        self._whole: dict[str | None, tuple[Stamp, WholeVectors]] = {}
        self._written: tuple[Stamp, Written] | None = None

    def clear(self) -> None:
        self._indexed, self._whole, self._written = None, {}, None

    def fingerprints(self, stamp: Stamp) -> dict[str, Fingerprint] | None:
        held = self._indexed
        return dict(held[1]) if held is not None and held[0] == stamp else None

    def fingerprints_held(self, stamp: Stamp) -> Mapping[str, Fingerprint] | None:
        """The copy itself (not to be changed), if current: a sync's look-up of a few keys."""
        held = self._indexed
        return held[1] if held is not None and held[0] == stamp else None

    def keep_fingerprints(self, stamp: Stamp, found: dict[str, Fingerprint]) -> None:
        self._indexed = (stamp, dict(found))

    def pending(self, stamp: Stamp, prefix: str) -> bool | None:
        """Whether a row is pending (its text fingerprint marked), if the copy is current."""
        held = self._indexed
        if held is None or held[0] != stamp:
            return None
        return any(fp.text.startswith(prefix) for fp in held[1].values())

    def whole(self, kind: str | None, stamp: Stamp) -> WholeVectors | None:
        held = self._whole.get(kind)
        return held[1] if held is not None and held[0] == stamp else None

    def keep_whole(self, kind: str | None, stamp: Stamp, whole: WholeVectors) -> None:
        self._whole[kind] = (stamp, whole)

    def written(
        self, stamp: Stamp, keys: Sequence[str], dim: int
    ) -> tuple[list[str], npt.NDArray[np.float32]] | None:
        """The whole-text rows of `keys` (those with a vector), then their passage rows, as
        written; None unless every key was written (or removed) at this stamp's table."""
        import numpy as np

        held = self._written
        if held is None or held[0] != stamp or not all(k in held[1] for k in keys):
            return None
        rows = [(k, held[1][k][0]) for k in keys if held[1][k][0] is not None]
        rows += [(k, vector) for k in keys for vector in held[1][k][1]]
        vectors = [np.asarray(vector, dtype=np.float32).reshape(dim) for _, vector in rows]
        matrix = np.stack(vectors) if vectors else np.zeros((0, dim), dtype=np.float32)
        return [key for key, _ in rows], matrix

    def changed(
        self,
        before: Stamp,
        after: Stamp,
        fingerprints: Callable[[dict[str, Fingerprint]], dict[str, Fingerprint]],
        vectors: Callable[[WholeVectors, str | None], WholeVectors],
        written: Written | None = None,
    ) -> None:
        """After the index's own write took the table from `before` to `after` (under the index
        lock): the parts that were current at `before` take the write; the others are dropped."""
        written = written or {}
        held, self._written = self._written, None
        if held is not None and held[0] == before and len(held[1]) + len(written) <= WRITTEN_MAX:
            self._written = (after, {**held[1], **written})
        elif written:
            self._written = (after, dict(written))
        indexed = self._indexed
        self._indexed = (
            (after, fingerprints(indexed[1])) if indexed and indexed[0] == before else None
        )
        self._whole = {
            kind: (after, vectors(whole, kind))
            for kind, (at, whole) in self._whole.items()
            if at == before
        }
