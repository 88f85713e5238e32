"""`local-recall org pull`: a local copy of the org index in ONE table, for the prompt hook.

    mirror = Mirror(state_dir / "org-mirror", embedder_fp, dim, own="github.com--acme--api")
    report = mirror.pull(source, uri=uri, ann_threshold=5000)
    found = mirror.search("consumer lag", query_vector, embedder=embedder_fp, depth=50)

A live org search asks every dataset (two queries each): its cost grows with the number of
repositories, and even one object-store round trip is far over the prompt hook's budget. The
copy holds every readable dataset published with this repository's embedder, merged into one
local LanceDB table (key `<repo>/<kind>/<id>`, a `repo` column), so a search costs two local
queries whatever the number of repositories (benchmarks/README.md#org-index-orgpy). A pull re-reads
only datasets whose version moved, writes the difference in one commit, and records what it
copied in `mirror.json` (written after the commit: a pull killed in between is redone).
This repository's own dataset is left out (the local index answers for it).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from local_recall.errors import IndexUnavailable, OrgUnavailable
from local_recall.org.candidates import OrgQuery, TermsCache, gather, score_candidates
from local_recall.org.plan import (
    MIRROR_TABLE,
    NO_PERMISSION,
    ORG_FORMAT,
    DatasetMeta,
    describe_store_error,
    odd_name_note,
    parse_dataset_meta,
    shown_uri,
    usable_names,
)
from local_recall.org.row_checks import schema_problem
from local_recall.org.rows import (
    HIT_COLUMNS,
    CheckedTable,
    checked_table,
    dataset_schema,
    parse_meta_body,
    readable,
    with_optional,
)
from local_recall.org.search import OrgFound
from local_recall.repo.files import read_bytes_nofollow, through_symlink, write_text_atomic
from local_recall.search.index.shared import SharedStore, SharedTable
from local_recall.search.relevance import TermStats, query_profile
from local_recall.search.text_terms import query_terms

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa

STATE_FILE: Final = "mirror.json"
COPY_FORMAT: Final = 2  # 2: every row checked and cut (row_checks.py) before it is copied
_COPIED: Final = (*HIT_COLUMNS, "document", "fp")


@dataclass(frozen=True, slots=True)
class PullReport:
    uri: str
    datasets: int  # copied this time (their version moved)
    unchanged: int
    removed: int  # datasets gone from the store (or no longer readable): rows dropped
    rows: int  # memory rows written
    notes: tuple[str, ...]
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {
            "uri": self.uri,
            "datasets": self.datasets,
            "unchanged": self.unchanged,
            "removed": self.removed,
            "rows": self.rows,
            "notes": list(self.notes),
            "seconds": round(self.seconds, 3),
        }


class Mirror:
    """The local copy in `directory` (inside the gitignored state folder)."""

    def __init__(self, directory: Path, embedder: str, dim: int, *, own: str | None) -> None:
        self.directory = directory
        self.embedder = embedder
        self.dim = dim
        self.own = own
        self._store: SharedStore | None = None
        self._stats: tuple[int, dict[str, TermStats], dict[str, str]] | None = None
        self._terms = TermsCache()
        self._handle: SharedTable | None = None
        self._lock = threading.Lock()

    # --- the copy -------------------------------------------------------------------------------

    def _local(self) -> SharedStore:
        if through_symlink(self.directory):  # the state folder could be planted
            raise IndexUnavailable(f"{self.directory} is a symbolic link; not followed")
        if self._store is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._store = SharedStore(str(self.directory), {}, consistency=timedelta(0))
        return self._store

    def _state(self) -> dict[str, Any]:
        try:
            data = json.loads(read_bytes_nofollow(self.directory / STATE_FILE))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("format") != COPY_FORMAT:
            return {}  # a copy made before rows were checked: the next pull starts afresh
        return data if data.get("embedder") == self.embedder else {}

    def exists(self) -> bool:
        return bool(self._state())

    def pulled_at(self, uri: str) -> float | None:
        """When the copy of `uri` was last pulled (epoch seconds), None: no copy of it."""
        state = self._state()
        if state.get("uri") != shown_uri(uri):
            return None
        when = state.get("pulled_at")
        return float(when) if isinstance(when, int | float) else None

    def _table(self, *, fresh: bool) -> SharedTable:
        store = self._local()
        meta = DatasetMeta(ORG_FORMAT, self.embedder, self.dim, MIRROR_TABLE)
        if not fresh and MIRROR_TABLE in store.table_names():
            table = store.open(MIRROR_TABLE)
            if parse_dataset_meta(table.metadata()) == meta:
                return table
        schema = _mirror_schema(self.dim, meta)
        return store.create(MIRROR_TABLE, schema, overwrite=MIRROR_TABLE in store.table_names())

    def pull(self, source: SharedStore, *, uri: str, ann_threshold: int, now: float) -> PullReport:
        """Copy what changed in the store since the last pull. Raises OrgUnavailable when the
        store cannot be listed; a dataset that cannot be read is a note (its copy is kept)."""
        started = time.monotonic()
        try:
            listed = [n for n in source.table_names() if n != self.own]
        except IndexUnavailable as exc:
            raise OrgUnavailable(f"{shown_uri(uri)}: {describe_store_error(str(exc))}") from exc
        names, odd = usable_names(listed)
        notes: list[str] = [odd_name_note(name) for name in odd]
        wanted = dataset_schema(self.dim, {})
        state = self._state()
        if state.get("uri") != shown_uri(uri):
            state = {}  # a copy of another org index: start afresh
        known: dict[str, int] = dict(state.get("datasets", {}))
        table = self._table(fresh=not state)
        self._handle = None  # a pull may have recreated the table
        copied: dict[str, int] = {}
        records: list[pa.Table] = []
        gone_repos = [name for name in known if name not in names]
        for name in names:
            try:
                dataset = source.open(name)
                version = dataset.version
                if known.get(name) == version:
                    continue
                meta = parse_dataset_meta(dataset.metadata())
                if meta is None or meta.embedder != self.embedder:
                    why = "not a local-recall dataset" if meta is None else meta.embedder
                    notes.append(f"org: not copied {name}: published with {why}")
                    continue
                data = with_optional(dataset.read(list(readable(_COPIED, dataset.column_names()))))
                # One dataset of the wrong shape is that dataset's note, never the pull's end
                problem = schema_problem(data.schema, wanted)
                if problem is not None:
                    notes.append(f"org: not copied {name}: malformed dataset ({problem})")
                    continue
                checked = checked_table(data)
                notes += _row_notes(name, checked)
                records.append(_prefixed(checked.table, name))
                copied[name] = version
            except IndexUnavailable as exc:
                why = describe_store_error(str(exc))
                notes.append(f"org: skipped {name}: {why}")
                if why == NO_PERMISSION and name in known:  # access revoked: drop the copy
                    gone_repos.append(name)
        try:
            self._apply(table, records, copied, gone_repos, ann_threshold)
        except IndexUnavailable as exc:
            raise OrgUnavailable(f"cannot write the local org copy: {exc}") from exc
        datasets = {k: v for k, v in known.items() if k not in gone_repos} | copied
        write_text_atomic(
            self.directory / STATE_FILE,
            json.dumps(
                {
                    "format": COPY_FORMAT,
                    "embedder": self.embedder,
                    "uri": shown_uri(uri),
                    "pulled_at": now,
                    "datasets": datasets,
                }
            )
            + "\n",
        )
        return PullReport(
            shown_uri(uri),
            len(copied),
            len(names) - len(copied) - sum(1 for n in notes if n.startswith("org: skipped")),
            len(gone_repos),
            sum(t.num_rows - 1 for t in records),  # each holds its meta row
            tuple(notes),
            time.monotonic() - started,
        )

    def _apply(
        self,
        table: SharedTable,
        records: list[pa.Table],
        copied: Mapping[str, int],
        gone: list[str],
        ann_threshold: int,
    ) -> None:
        """Write the copied datasets' rows and drop what they no longer hold (and every row
        of a dataset that is gone), in one commit. Arrow all the way: a row's vectors never
        become Python floats."""
        import pyarrow as pa

        repos = sorted({*copied, *gone})
        if not repos:
            return
        have = table.read(["key", "repo", "fp"]).to_pydict()
        current = dict(zip(have["key"], have["fp"], strict=True))
        schema = _mirror_schema(self.dim, DatasetMeta(ORG_FORMAT, "", self.dim, MIRROR_TABLE))
        data = (
            pa.concat_tables([t.select(schema.names).cast(schema) for t in records])
            if records
            else None
        )
        wanted: set[str] = set()
        changed = False
        if data is not None:
            keys, fps = data.column("key").to_pylist(), data.column("fp").to_pylist()
            wanted = set(keys)
            changed = any(current.get(k) != f for k, f in zip(keys, fps, strict=True))
        stale = any(
            repo in repos and key not in wanted
            for key, repo in zip(have["key"], have["repo"], strict=True)
        )
        if changed or stale:
            # Rows leave by their repository's name, never by a key listed in SQL (a copy made
            # before keys were checked may hold any text); a row is rewritten only when its
            # fingerprint moved.
            table.apply(
                data,
                on="key",
                update_where="target.fp != source.fp OR target.fp IS NULL"
                if data is not None
                else None,
                delete_where="repo IN (" + ", ".join(map(sql_text, repos)) + ")",
            )
            table.maintain(ann_threshold=ann_threshold)

    # --- search ---------------------------------------------------------------------------------

    def search(
        self,
        text: str,
        query_vector: npt.NDArray[np.float32] | None,
        *,
        embedder: str | None,
        depth: int,
    ) -> OrgFound:
        """The copy's candidates, scored like a live org search's. Raises IndexUnavailable."""
        if not self.exists():
            return OrgFound(notes=("org: no local copy yet; run `local-recall org pull`",))
        table = self._opened()
        stats, remotes = self._repo_stats(table)
        query = OrgQuery(query_profile(text), query_terms(text), query_vector, depth)
        same = query_vector is not None and embedder == self.embedder
        found = gather(
            table,
            query,
            use_vector=same,
            skip=lambda row: row["kind"] == "repo",
            columns=(*HIT_COLUMNS, "repo"),
        )
        scored = score_candidates(
            found,
            query,
            use_vector=same,
            stats_of=stats.get,
            repo_of=lambda row: str(row["repo"]),
            remote_of=lambda repo: remotes.get(repo, ""),
            terms=self._terms,
        )
        notes = (f"org: {scored.malformed} malformed rows left out",) if scored.malformed else ()
        return OrgFound(tuple(scored.hits), notes, len(remotes), len(remotes))

    def _opened(self) -> SharedTable:
        """The copy's table, opened once: reads check for a newer version (a pull by another
        process) on their own, so the handle can be kept."""
        with self._lock:
            if self._handle is None:
                self._handle = self._local().open(MIRROR_TABLE)
            return self._handle

    def _repo_stats(self, table: SharedTable) -> tuple[dict[str, TermStats], dict[str, str]]:
        version = table.version
        with self._lock:
            if self._stats is not None and self._stats[0] == version:
                return self._stats[1], self._stats[2]
        stats: dict[str, TermStats] = {}
        remotes: dict[str, str] = {}
        for row in table.read(["repo", "body"], where="kind = 'repo'").to_pylist():
            identity, found = parse_meta_body(str(row["body"]))
            if found is not None:
                stats[str(row["repo"])] = found
            remotes[str(row["repo"])] = identity.remote if identity else ""
        with self._lock:
            self._stats = (version, stats, remotes)
        return stats, remotes


def _mirror_schema(dim: int, meta: DatasetMeta) -> pa.Schema:
    import pyarrow as pa

    schema = dataset_schema(dim, meta.to_metadata())
    return schema.append(pa.field("repo", pa.string()))


def _row_notes(name: str, checked: CheckedTable) -> list[str]:
    notes = []
    if checked.skipped:
        first = checked.skipped[0]
        notes.append(
            f"org: {name}: {len(checked.skipped)} malformed rows not copied (e.g. {first})"
        )
    if checked.capped:
        notes.append(f"org: {name}: {checked.capped} rows cut to this store's size limits")
    return notes


def sql_text(value: str) -> str:
    """A string literal of the store's SQL filters: quoted, a quote inside doubled."""
    return "'" + value.replace("'", "''") + "'"


def _prefixed(data: pa.Table, repo: str) -> pa.Table:
    """A dataset's rows as the copy holds them: key `<repo>/<key>`, a `repo` column."""
    import pyarrow as pa
    import pyarrow.compute as pc

    keys = pc.binary_join_element_wise(pa.scalar(f"{repo}/"), data.column("key"), "")
    data = data.set_column(data.schema.get_field_index("key"), "key", keys)
    return data.append_column("repo", pa.array([repo] * data.num_rows, pa.string()))
