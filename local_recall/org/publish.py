"""`local-recall publish`: this repository's memories into its org dataset, incrementally.

    report = publish(target, identity, memories, embedder, ann_threshold=5000)

Reads the dataset's keys and fingerprints (two short columns), compares them with the memory
files (plan.plan_publish), embeds only new or changed memories, and writes upserts, deletions
and the meta row in ONE commit. Nothing changed: nothing is written and the dataset's version
stays where it was. A dataset of another embedder or format is recreated (a new version, so
readers of the old one are not disturbed). Memories whose text holds something the redaction
rules call a secret (a hand edit, say) are withheld and reported, never published.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from local_recall.errors import CommitConflict, IndexUnavailable, OrgUnavailable
from local_recall.memory.model import Memory
from local_recall.org.plan import (
    ORG_FORMAT,
    DatasetMeta,
    RepoIdentity,
    decide_recreate,
    meta_fingerprint,
    parse_dataset_meta,
    plan_publish,
    row_fingerprint,
    shown_uri,
)
from local_recall.org.rows import dataset_schema, memory_record, meta_record, to_arrow
from local_recall.redaction.engine import find_secrets
from local_recall.search.embedders import Embedder, embedder_fingerprint
from local_recall.search.index.plan import embedded_text, fingerprint, passages
from local_recall.search.index.shared import SharedStore, SharedTable
from local_recall.search.relevance import memory_terms, term_stats

log = logging.getLogger(__name__)

_KEY: Final = re.compile(r"^episodic/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_EMBED_BATCH: Final = 256
PUBLISH_ATTEMPTS: Final = 4  # a commit that lost to a concurrent dataset creation is re-planned
Progress = Callable[[int, int], None]
Vectors = tuple[Any, Any]  # a memory's whole-text vector and its passage vectors


@dataclass(frozen=True, slots=True)
class Target:
    """Where to publish: an org URI and the storage options to reach it."""

    uri: str
    options: dict[str, str]


@dataclass(frozen=True, slots=True)
class PublishReport:
    uri: str  # as shown (no credentials)
    dataset: str
    memories: int  # published after this run
    upserted: int
    deleted: int
    withheld: tuple[str, ...]  # ids of memories holding a secret: not published
    version_before: int | None  # None: the dataset did not exist
    version_after: int
    recreated: str | None  # why the dataset was started afresh
    embedder: str
    commit: str | None
    seconds: float

    @property
    def wrote(self) -> bool:
        return self.version_after != self.version_before

    def to_json(self) -> dict[str, Any]:
        return {
            "uri": self.uri,
            "dataset": self.dataset,
            "memories": self.memories,
            "upserted": self.upserted,
            "deleted": self.deleted,
            "withheld": list(self.withheld),
            "version_before": self.version_before,
            "version_after": self.version_after,
            "wrote": self.wrote,
            "recreated": self.recreated,
            "embedder": self.embedder,
            "commit": self.commit,
            "seconds": round(self.seconds, 3),
        }


def publish(
    target: Target,
    identity: RepoIdentity,
    memories: Sequence[Memory],
    embedder: Embedder,
    *,
    ann_threshold: int,
    progress: Progress | None = None,
) -> PublishReport:
    """Bring the repository's dataset in line with `memories` (episodic ones are published).
    Raises OrgUnavailable when the store cannot be reached or written, EmbedderUnavailable
    when something must be embedded and cannot be."""
    started = time.monotonic()
    where = shown_uri(target.uri)
    store = SharedStore(target.uri, target.options)
    embedded: dict[tuple[str, str], Vectors] = {}  # kept across a retry: none embedded twice
    for attempt in range(PUBLISH_ATTEMPTS):
        try:
            done = _publish_once(
                store, identity, memories, embedder, embedded, ann_threshold, progress
            )
            return replace(done, seconds=time.monotonic() - started)
        except CommitConflict as exc:
            # A first publish that raced another's creation of the dataset: that creation
            # (an overwrite) landed after this publish read the table, and LanceDB will not
            # rebase an update onto it. Re-read the table and plan again.
            if attempt + 1 == PUBLISH_ATTEMPTS:
                raise OrgUnavailable(f"{where}/{identity.name}: {exc}") from exc
            log.info("org dataset %s: %s; planning again", identity.name, exc)
            time.sleep(0.2 * (attempt + 1))
        except IndexUnavailable as exc:
            raise OrgUnavailable(f"{where}/{identity.name}: {exc}") from exc
    raise AssertionError("unreachable")


def _publish_once(
    store: SharedStore,
    identity: RepoIdentity,
    memories: Sequence[Memory],
    embedder: Embedder,
    embedded: dict[tuple[str, str], Vectors],
    ann_threshold: int,
    progress: Progress | None,
) -> PublishReport:
    """One read, plan and commit (its `seconds` are filled in by the caller)."""
    where = shown_uri(store.uri)
    wanted = DatasetMeta(ORG_FORMAT, embedder_fingerprint(embedder), embedder.dim, identity.name)
    table, before, recreated, published = _open_or_create(store, wanted)
    chosen = {f"episodic/{m.id}": m for m in memories if m.kind == "episodic"}
    fps = {key: _row_fp(memory) for key, memory in chosen.items()}
    stats = term_stats(memory_terms(m.subject, m.keywords, m.body) for m in chosen.values())
    meta_fp = meta_fingerprint(identity, stats.to_json())
    plan = plan_publish(fps, published, meta_fp=meta_fp)
    # Only what is about to be written is scanned (a no-change publish scans nothing); a
    # memory holding a secret is left out, and removed if an edit brought the secret in.
    withheld = _holding_secrets(chosen[key] for key in plan.upsert)
    if withheld:
        for memory_id in withheld:
            del chosen[f"episodic/{memory_id}"], fps[f"episodic/{memory_id}"]
        plan = plan_publish(fps, published, meta_fp=meta_fp)
    upserts = [chosen[key] for key in plan.upsert]
    records = _embedded(upserts, fps, identity.commit, embedder, progress, embedded)
    if plan.meta:
        records.append(meta_record(identity, stats, fp=meta_fp, dim=wanted.dim))
    for key in plan.delete:  # the filter is SQL: only well-formed keys reach it
        if not _KEY.match(key):
            raise OrgUnavailable(f"{where}/{identity.name}: refusing a malformed key {key!r}")
    delete_where = "key IN (" + ", ".join(f"'{k}'" for k in plan.delete) + ")"
    if not plan.is_empty:
        schema = dataset_schema(wanted.dim, wanted.to_metadata())
        table.apply(
            to_arrow(records, schema) if records else None,
            on="key",
            delete_where=delete_where if plan.delete else None,
        )
        table.maintain(ann_threshold=ann_threshold)
    after = table.version
    return PublishReport(
        uri=where,
        dataset=identity.name,
        memories=len(chosen),
        upserted=len(plan.upsert),
        deleted=len(plan.delete),
        withheld=withheld,
        version_before=before,
        version_after=after,
        recreated=recreated,
        embedder=wanted.embedder,
        commit=identity.commit,
        seconds=0.0,
    )


def _open_or_create(
    store: SharedStore, wanted: DatasetMeta
) -> tuple[SharedTable, int | None, str | None, dict[str, str]]:
    """The dataset (created or recreated as needed), its version before this publish, why it
    was recreated, and key → fingerprint of what it holds."""
    exists = wanted.repo in store.table_names()
    table = store.open(wanted.repo) if exists else None
    before = table.version if table is not None else None
    found = parse_dataset_meta(table.metadata()) if table is not None else None
    reason = decide_recreate(found, wanted)
    if reason is None and table is not None:
        data = table.read(["key", "fp"])
        keys, fps = data.column("key").to_pylist(), data.column("fp").to_pylist()
        return table, before, None, {str(k): str(f) for k, f in zip(keys, fps, strict=True)}
    log.info("org dataset %s: %s", wanted.repo, reason)
    schema = dataset_schema(wanted.dim, wanted.to_metadata())
    try:
        table = store.create(wanted.repo, schema, overwrite=exists)
    except IndexUnavailable:
        if exists or wanted.repo not in store.table_names():
            raise
        # another publish of this repository created it a moment ago: update that one
        return _open_or_create(store, wanted)
    return table, before, reason if exists else None, {}


def _holding_secrets(memories: Iterable[Memory]) -> tuple[str, ...]:
    """Ids of the memories whose text the redaction rules call a secret."""
    found = [
        memory.id
        for memory in memories
        if find_secrets("\n".join([memory.subject, " ".join(memory.keywords), memory.body]))
    ]
    return tuple(sorted(found))


def _row_fp(memory: Memory) -> str:
    fp = fingerprint(memory, memory.keywords)
    disputed = memory.disputed.reason if memory.disputed else None
    return row_fingerprint(fp.text, fp.meta, memory.unreviewed, memory.superseded_by, disputed)


def _embedded(
    memories: Sequence[Memory],
    fps: dict[str, str],
    commit: str | None,
    embedder: Embedder,
    progress: Progress | None,
    done: dict[tuple[str, str], Vectors],
) -> list[dict[str, Any]]:
    """Rows of `memories` with their whole-text and passage vectors; `done` holds the vectors
    already computed, by (key, row fingerprint), and gains the new ones."""
    import numpy as np

    keys = [(f"{m.kind}/{m.id}", fps[f"{m.kind}/{m.id}"]) for m in memories]
    texts: list[str] = []
    spans: list[tuple[int, int]] = []
    for memory, key in zip(memories, keys, strict=True):
        if key in done:
            continue
        cut = passages(memory)
        spans.append((len(texts), len(cut)))
        texts += [embedded_text(memory), *cut]
    vectors: list[Any] = []
    for start in range(0, len(texts), _EMBED_BATCH):
        vectors.append(embedder.embed_documents(texts[start : start + _EMBED_BATCH]))
        if progress is not None:
            progress(min(start + _EMBED_BATCH, len(texts)), len(texts))
    matrix = np.concatenate(vectors) if vectors else np.zeros((0, embedder.dim), np.float32)
    new = iter(spans)
    for key in keys:
        if key not in done:
            first, count = next(new)
            done[key] = (matrix[first], matrix[first + 1 : first + 1 + count])
    return [
        memory_record(memory, fp=key[1], commit=commit, vector=done[key][0], passages=done[key][1])
        for memory, key in zip(memories, keys, strict=True)
    ]
