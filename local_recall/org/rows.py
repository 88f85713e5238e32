"""The columns of an org dataset and the conversion of memories to rows and back.

One row per published memory, keyed `<kind>/<id>` like the local index, holding what a search
needs to show and score it without reading anything else: text, metadata, the full-text
document, the whole-text vector and the passage vectors (the best of them is the memory's
cosine, as in the local index). One more row, key META_KEY, holds the repository's identity
and term statistics (relevance.py scores with the store's own idf); it is written in the same
commit as the memories it describes. pyarrow and numpy are imported inside the functions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from local_recall.errors import InvalidInput
from local_recall.memory.model import Memory
from local_recall.org.plan import META_KEY, RepoIdentity
from local_recall.org.row_checks import checked_row, meta_row_problem
from local_recall.search.index.plan import fts_document
from local_recall.search.relevance import TermStats, term_stats_from_json

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa

# What a search reads of each candidate (everything but the fingerprint and the document).
HIT_COLUMNS: Final = (
    "key",
    "id",
    "kind",
    "subject",
    "body",
    "keywords",
    "applies_to",
    "occurred_at",
    "content_hash",
    "unreviewed",
    "superseded_by",
    "disputed",
    "commit",
    "vector",
    "passages",
)


# Columns a dataset published by an earlier format may lack (each read as null there): a reader
# of a newer format still searches and copies a teammate's older dataset.
OPTIONAL_COLUMNS: Final = frozenset({"disputed"})


def readable(columns: Sequence[str], present: frozenset[str]) -> tuple[str, ...]:
    """`columns` less the optional ones a dataset does not have."""
    return tuple(c for c in columns if c in present or c not in OPTIONAL_COLUMNS)


def with_optional(data: pa.Table) -> pa.Table:
    """`data` with a null column for each optional column it lacks."""
    import pyarrow as pa

    for name in sorted(OPTIONAL_COLUMNS - set(data.column_names)):
        data = data.append_column(name, pa.nulls(data.num_rows, pa.string()))
    return data


def dataset_schema(dim: int, metadata: Mapping[str, str]) -> pa.Schema:
    import pyarrow as pa

    vector = pa.list_(pa.float32(), dim)
    return pa.schema(
        [
            pa.field("key", pa.string(), nullable=False),
            pa.field("id", pa.string()),
            pa.field("kind", pa.string()),
            pa.field("subject", pa.string()),
            pa.field("body", pa.string()),
            pa.field("keywords", pa.list_(pa.string())),
            pa.field("applies_to", pa.string()),
            pa.field("occurred_at", pa.float64()),  # epoch seconds, UTC
            pa.field("content_hash", pa.string()),
            pa.field("unreviewed", pa.bool_()),
            pa.field("superseded_by", pa.string()),
            pa.field("disputed", pa.string()),  # why a session found it wrong (its reason)
            pa.field("commit", pa.string()),  # HEAD when this row was published
            pa.field("document", pa.string()),  # what the full-text index reads
            pa.field("fp", pa.string()),  # plan.row_fingerprint / plan.meta_fingerprint
            pa.field("vector", vector),
            pa.field("passages", pa.list_(vector)),
        ],
        metadata=dict(metadata),
    )


def memory_record(
    memory: Memory,
    *,
    fp: str,
    commit: str | None,
    vector: npt.NDArray[np.float32],
    passages: npt.NDArray[np.float32],
) -> dict[str, Any]:
    return {
        "key": f"{memory.kind}/{memory.id}",
        "id": memory.id,
        "kind": memory.kind,
        "subject": memory.subject,
        "body": memory.body,
        "keywords": list(memory.keywords),
        "applies_to": memory.applies_to,
        "occurred_at": memory.occurred_at.timestamp(),
        "content_hash": memory.content_hash,
        "unreviewed": memory.unreviewed,
        "superseded_by": memory.superseded_by,
        "disputed": memory.disputed.reason if memory.disputed else None,
        "commit": commit,
        "document": fts_document(memory, memory.keywords),
        "fp": fp,
        "vector": vector,
        "passages": passages,
    }


def meta_record(identity: RepoIdentity, stats: TermStats, *, fp: str, dim: int) -> dict[str, Any]:
    """The meta row: no document (never a full-text hit), a unit vector (a valid point for the
    ANN index; a search drops the row by its key)."""
    import numpy as np

    vector = np.zeros(dim, dtype=np.float32)
    vector[0] = 1.0
    return {
        "key": META_KEY,
        "id": None,
        "kind": "repo",
        "subject": identity.name,
        "body": json.dumps(
            {"identity": identity.to_json(), "stats": stats.to_json()}, ensure_ascii=False
        ),
        "keywords": [],
        "applies_to": None,
        "occurred_at": datetime.now(UTC).timestamp(),
        "content_hash": None,
        "unreviewed": False,
        "superseded_by": None,
        "disputed": None,
        "commit": identity.commit,
        "document": "",
        "fp": fp,
        "vector": vector,
        "passages": np.zeros((0, dim), dtype=np.float32),
    }


def to_arrow(records: Sequence[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
    import numpy as np
    import pyarrow as pa

    dim = schema.field("vector").type.list_size
    columns: dict[str, Any] = {}
    for field in schema:
        if field.name == "vector":
            matrix = np.stack([np.asarray(r["vector"], dtype=np.float32) for r in records])
            columns["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), dim)
        elif field.name == "passages":
            counts = [len(r["passages"]) for r in records]
            flat = [np.asarray(r["passages"], dtype=np.float32).reshape(-1) for r in records]
            values = np.concatenate(flat) if flat else np.zeros(0, dtype=np.float32)
            inner = pa.FixedSizeListArray.from_arrays(pa.array(values, pa.float32()), dim)
            offsets = pa.array(np.concatenate([[0], np.cumsum(counts)]).astype(np.int32))
            columns["passages"] = pa.ListArray.from_arrays(offsets, inner, type=field.type)
        else:
            columns[field.name] = pa.array([r[field.name] for r in records], type=field.type)
    return pa.Table.from_pydict(columns, schema=schema)


def row_memory(row: Mapping[str, Any]) -> Memory | None:
    """A memory from a dataset row; None for a row that is not a well-formed memory (a dataset
    is written by whoever may write it: nothing in it is trusted, row_checks.py)."""
    try:
        return checked_row(row).memory
    except InvalidInput:
        return None


class CheckedTable(NamedTuple):
    table: pa.Table  # the well-formed rows, with their checked and capped columns
    skipped: tuple[str, ...]  # why each malformed row was left out
    capped: int  # rows cut to the store's limits


_CHECKED_COLUMNS: Final = (
    "subject",
    "body",
    "keywords",
    "content_hash",
    "occurred_at",
    "document",
    "fp",  # never null: the copy rewrites a row whose fingerprint differs
)


def checked_table(data: pa.Table) -> CheckedTable:
    """A dataset's rows (its meta row and memories) as a copy may hold them: malformed rows
    left out, every memory's text checked and cut (row_checks.checked_row), its full-text
    document rebuilt from that text. Vectors are kept as Arrow (never Python floats)."""
    import pyarrow as pa

    plain = data.drop_columns(["vector", "passages"]).to_pylist()
    keep: list[int] = []
    values: dict[str, list[Any]] = {name: [] for name in _CHECKED_COLUMNS}
    skipped: list[str] = []
    capped = 0
    for index, row in enumerate(plain):
        if row.get("key") == META_KEY and row.get("kind") == "repo":
            problem = meta_row_problem(row)
            if problem is not None:
                skipped.append(problem)
                continue
            checked = {**row, "subject": " ".join(str(row.get("subject")).split()), "document": ""}
            checked["fp"] = row.get("fp") or ""
        else:
            try:
                memory, cut = checked_row(row)
            except InvalidInput as exc:
                skipped.append(str(exc))
                continue
            capped += cut
            checked = {
                "subject": memory.subject,
                "body": memory.body,
                "keywords": list(memory.keywords),
                "content_hash": memory.content_hash,
                "occurred_at": memory.occurred_at.timestamp(),
                "document": fts_document(memory, memory.keywords),
                "fp": row.get("fp") or "",
            }
        keep.append(index)
        for name in _CHECKED_COLUMNS:
            values[name].append(checked[name])
    table = data.take(pa.array(keep, pa.int64()))
    for name in _CHECKED_COLUMNS:
        at = table.schema.get_field_index(name)
        table = table.set_column(
            at, table.schema.field(at), pa.array(values[name], table.schema.field(at).type)
        )
    return CheckedTable(table, tuple(skipped), capped)


def parse_meta_body(body: str) -> tuple[RepoIdentity | None, TermStats | None]:
    """The identity and term statistics of a meta row's body (None for what does not parse)."""
    try:
        data = json.loads(body)
        found = data["identity"]
        identity = RepoIdentity(
            name=str(found["name"]),
            remote=str(found.get("remote") or ""),
            branch=found.get("branch"),
            commit=found.get("commit"),
        )
    except (ValueError, TypeError, KeyError, AttributeError):
        return None, None
    return identity, term_stats_from_json(data.get("stats"))
