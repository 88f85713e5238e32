"""`search --org`: every readable org dataset asked at once, scored like a local memory.

    found = OrgSearcher(target, own="github.com--acme--api", timeout=5.0).search(
        "consumer lag", query_vector, embedder="minilm:…:384", depth=50)
    found.hits            # OrgHit: repository, memory, signals, calibrated score
    found.notes           # one line per dataset skipped, and why

Per dataset (one LanceDB table per repository, docs/org.md): the full-text candidates and,
when the dataset was embedded by the same model as the query, the nearest whole-text vectors,
each with its columns, in two queries; every candidate's cosine is then the best of its
whole-text and passage vectors (exact dot products, like the local index's cache) and its
score the same `score_hit` over the same features, with the dataset's own term statistics.
A dataset made by another embedder is searched by its words only (vectors of two models are
never compared). A dataset that cannot be read — no permission, damaged, not ours — is
skipped with a note; what has not answered by the deadline is reported, and the caller goes
on with what it has. The workers are daemon threads: a hung request never holds up the
process's exit.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final

from local_recall.errors import IndexUnavailable
from local_recall.org.candidates import (
    OrgHit,
    OrgQuery,
    TermsCache,
    gather,
    score_candidates,
)
from local_recall.org.plan import (
    META_KEY,
    RepoIdentity,
    describe_store_error,
    odd_name_note,
    parse_dataset_meta,
    shown_uri,
    usable_names,
)
from local_recall.org.publish import Target
from local_recall.org.row_checks import meta_row_problem
from local_recall.org.rows import HIT_COLUMNS, parse_meta_body, readable
from local_recall.search.index.shared import SharedStore, SharedTable
from local_recall.search.relevance import (
    TermStats,
    query_profile,
)
from local_recall.search.text_terms import query_terms

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

log = logging.getLogger(__name__)

MAX_WORKERS: Final = 16  # datasets asked at once
# A long-lived process (MCP server, daemon) sees a newer publish within this; each check
# costs requests (docs/org.md#consistency). A CLI search opens every table fresh anyway.
CONSISTENCY: Final = timedelta(seconds=60)


@dataclass(frozen=True, slots=True)
class OrgFound:
    hits: tuple[OrgHit, ...] = ()
    notes: tuple[str, ...] = ()
    datasets: int = 0  # asked
    answered: int = 0


@dataclass(slots=True)
class _Dataset:
    table: SharedTable
    version: int
    embedder: str | None
    identity: RepoIdentity | None
    stats: TermStats | None
    columns: tuple[str, ...] = HIT_COLUMNS  # what a search reads of it (readable: its format)


class OrgSearcher:
    """One per process and org URI: table handles and meta rows are kept between searches
    (re-read when a dataset's version moves). Searches may run concurrently."""

    def __init__(self, target: Target, *, own: str | None, timeout: float) -> None:
        self.target = target
        self.own = own
        self.timeout = timeout
        self._store = SharedStore(target.uri, target.options, consistency=CONSISTENCY)
        self._datasets: dict[str, _Dataset] = {}
        self._terms = TermsCache()
        self._lock = threading.Lock()

    def search(
        self,
        text: str,
        query_vector: npt.NDArray[np.float32] | None,
        *,
        embedder: str | None,
        depth: int,
    ) -> OrgFound:
        where = shown_uri(self.target.uri)
        self._store.load()  # importing lancedb is not the store's time: before the clock
        deadline = time.monotonic() + self.timeout
        listed = within(self._store.table_names, deadline)
        if listed is None:
            return OrgFound(notes=(f"org index {where} did not answer within {self.timeout:g} s",))
        if isinstance(listed, BaseException):
            return OrgFound(notes=(f"org index {where}: {describe_store_error(str(listed))}",))
        names, odd = usable_names([n for n in listed if n != self.own])
        query = OrgQuery(query_profile(text), query_terms(text), query_vector, depth)
        tasks = [(name, _bind(self._search_one, name, query, embedder)) for name in names]
        results = _run_all(tasks, deadline)
        hits: list[OrgHit] = []
        notes: list[str] = [odd_name_note(name) for name in odd]
        answered = 0
        for name, outcome in results:
            if outcome is None:
                notes.append(f"org: {name} did not answer within {self.timeout:g} s")
            elif isinstance(outcome, BaseException):
                notes.append(f"org: skipped {name}: {describe_store_error(str(outcome))}")
            else:
                answered += 1
                found, note = outcome
                hits += found
                if note:
                    notes.append(f"org: {name}: {note}")
        return OrgFound(tuple(hits), tuple(notes), len(names), answered)

    def _dataset(self, name: str) -> _Dataset:
        with self._lock:
            known = self._datasets.get(name)
        table = known.table if known is not None else self._store.open(name)
        version = table.version
        if known is not None and known.version == version:
            return known
        meta = parse_dataset_meta(table.metadata())
        if meta is None:
            raise IndexUnavailable("not a local-recall org dataset")
        rows = table.read(["body"], where=f"key = '{META_KEY}'").to_pylist()
        usable = rows and meta_row_problem(rows[0]) is None
        identity, stats = parse_meta_body(rows[0]["body"]) if usable else (None, None)
        columns = readable(HIT_COLUMNS, table.column_names())
        found = _Dataset(table, version, meta.embedder, identity, stats, columns)
        with self._lock:
            self._datasets[name] = found
        return found

    def _search_one(
        self, name: str, query: OrgQuery, embedder: str | None
    ) -> tuple[list[OrgHit], str | None]:
        dataset = self._dataset(name)
        note = None
        same_model = query.vector is not None and dataset.embedder == embedder
        if query.vector is not None and not same_model:
            note = f"published with embedder {dataset.embedder}, searched by its words only"
        found = gather(
            dataset.table, query, use_vector=same_model, skip=_is_meta, columns=dataset.columns
        )
        hits, rough, malformed = score_candidates(
            found,
            query,
            use_vector=same_model,
            stats_of=lambda _: dataset.stats,
            repo_of=lambda _: name,
            remote_of=lambda _: dataset.identity.remote if dataset.identity else "",
            terms=self._terms,
        )
        if rough:
            note = note or "no term statistics published; scores are rough"
        if malformed:
            note = f"{malformed} malformed rows left out" + (f"; {note}" if note else "")
        return hits, note


def _is_meta(row: Mapping[str, Any]) -> bool:
    return bool(row["key"] == META_KEY)


def _bind(function: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    return lambda: function(*args)


def within(call: Callable[[], Any], deadline: float) -> Any:
    """`call()` on a daemon thread: its result, the exception it raised, or None when it did
    not finish by `deadline` (the thread is left to end on its own)."""
    done = _run_all([("", call)], deadline)
    return done[0][1]


def _run_all(
    tasks: Sequence[tuple[str, Callable[[], Any]]], deadline: float
) -> list[tuple[str, Any]]:
    """Run the tasks on up to MAX_WORKERS daemon threads until `deadline`. Each outcome is the
    task's result, its exception, or None (not finished in time)."""
    outcomes: dict[int, Any] = {}
    pending: queue.Queue[int] = queue.Queue()
    for index in range(len(tasks)):
        pending.put(index)
    finished: queue.Queue[tuple[int, Any]] = queue.Queue()

    def worker() -> None:
        while True:
            try:
                index = pending.get_nowait()
            except queue.Empty:
                return
            if time.monotonic() >= deadline:
                continue
            try:
                finished.put((index, tasks[index][1]()))
            except Exception as exc:
                finished.put((index, exc if isinstance(exc, IndexUnavailable) else _plain(exc)))

    for _ in range(min(MAX_WORKERS, len(tasks))):
        threading.Thread(target=worker, name="local-recall-org", daemon=True).start()
    while len(outcomes) < len(tasks):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            index, outcome = finished.get(timeout=left)
        except queue.Empty:
            break
        outcomes[index] = outcome
    return [(name, outcomes.get(i)) for i, (name, _) in enumerate(tasks)]


def _plain(exc: Exception) -> Exception:
    log.warning("org search: %s", exc, exc_info=exc)
    return IndexUnavailable(f"{type(exc).__name__}: {exc}")
