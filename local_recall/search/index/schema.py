"""The index tables' columns in Arrow form, and the full-text tokenizer's options.

Changing a column here changes what the tables hold: bump INDEX_FORMAT (plan.py) so every
index is rebuilt. pyarrow and numpy are imported inside the functions (they cost ~0.3 s).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import pyarrow as pa

_KIND_FILTER: Final = {"episodic": "kind = 'episodic'", "thinking": "kind = 'thinking'"}
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


def table_schema(dim: int) -> pa.Schema:
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


def passage_schema(dim: int) -> pa.Schema:
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("key", pa.string(), nullable=False),
            pa.field("kind", pa.string(), nullable=False),
            pa.field("vector", pa.list_(pa.float32(), dim)),
        ]
    )


def rows_to_arrow(rows: Sequence[Mapping[str, Any]], dim: int) -> pa.Table:
    import numpy as np
    import pyarrow as pa

    schema = table_schema(dim)
    columns: dict[str, Any] = {}
    for field in schema:
        if field.name == "vector":
            matrix = np.stack([np.asarray(r["vector"], dtype=np.float32) for r in rows])
            columns["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), dim)
        else:
            columns[field.name] = pa.array([r[field.name] for r in rows], type=field.type)
    return pa.Table.from_pydict(columns, schema=schema)


def passages_to_arrow(passages: Sequence[Mapping[str, Any]], dim: int) -> pa.Table:
    import numpy as np
    import pyarrow as pa

    matrix = np.stack([np.asarray(p["vector"], dtype=np.float32) for p in passages])
    return pa.Table.from_pydict(
        {
            "key": pa.array([p["key"] for p in passages], pa.string()),
            "kind": pa.array([p["kind"] for p in passages], pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), dim),
        },
        schema=passage_schema(dim),
    )


def metadata_to_arrow(rows: Sequence[Mapping[str, Any]], dim: int) -> pa.Table:
    """Every column but the vector and what describes it: a partial merge keeps the vector."""
    import pyarrow as pa

    fields = [
        f
        for f in table_schema(dim)
        if f.name not in ("vector", "has_vector", "embedded", "text_fp")
    ]
    return pa.Table.from_pylist(
        [{f.name: r[f.name] for f in fields} for r in rows], schema=pa.schema(fields)
    )


def row_filter(
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
