"""This process's copy of two things the memories table holds, kept in step with its own writes
(issue 36, the save at 5,000 memories): every row's fingerprints (what a sync compares) and the
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


@dataclass(frozen=True, slots=True)
class WholeVectors:
    """The whole-text vector of every row of one kind that has one (`has_vector`)."""

    keys: tuple[str, ...]
    matrix: npt.NDArray[np.float32]


def fingerprints_written(
    fingerprints: Mapping[str, Fingerprint], rows: Sequence[Mapping[str, Any]]
) -> dict[str, Fingerprint]:
    """After rows were added or replaced whole (`MemoryIndex.write`)."""
    after = dict(fingerprints)
    for row in rows:
        after[row["key"]] = Fingerprint(text=row["text_fp"], meta=row["meta_fp"])
    return after


def fingerprints_updated(
    fingerprints: Mapping[str, Fingerprint], rows: Sequence[Mapping[str, Any]]
) -> dict[str, Fingerprint]:
    """After a metadata update: the text fingerprint (and the vector) stay the row's."""
    after = dict(fingerprints)
    for row in rows:
        key = row["key"]
        if key in after:  # a merge updates matched rows only
            after[key] = Fingerprint(text=after[key].text, meta=row["meta_fp"])
    return after


def fingerprints_removed(
    fingerprints: Mapping[str, Fingerprint], keys: Sequence[str]
) -> dict[str, Fingerprint]:
    gone = set(keys)
    return {key: fp for key, fp in fingerprints.items() if key not in gone}


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
    return WholeVectors(
        keys=kept.keys + tuple(row["key"] for row in added),
        matrix=np.concatenate([kept.matrix, new.reshape(len(added), kept.matrix.shape[1])]),
    )


def vectors_removed(whole: WholeVectors, keys: Sequence[str]) -> WholeVectors:
    return _without(whole, set(keys))


def _without(whole: WholeVectors, gone: set[str]) -> WholeVectors:
    if not gone.intersection(whole.keys):
        return whole
    keep = [i for i, key in enumerate(whole.keys) if key not in gone]
    return WholeVectors(tuple(whole.keys[i] for i in keep), whole.matrix[keep])


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
