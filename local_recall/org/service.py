"""The org side of the facade: `Recall.org` (publish) and `Recall.query(..., org=True)`.

service = OrgService(root, config, environ, memories=scan, embedder=get_embedder)
report = service.publish(to=None, name=None)      # `local-recall publish`
result = service.search(query, local_result, limit=10)
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from local_recall.errors import (
    EmbedderUnavailable,
    IndexUnavailable,
    InvalidInput,
    OrgUnavailable,
)
from local_recall.memory.model import Memory
from local_recall.org.identity import remote_url, repo_identity
from local_recall.org.mirror import Mirror, PullReport
from local_recall.org.plan import (
    check_dataset_name,
    dataset_name,
    describe_store_error,
    is_local_remote,
    is_remote,
    merge_hits,
    shown_uri,
    storage_options,
)
from local_recall.org.publish import Progress, PublishReport, Target, publish
from local_recall.org.search import OrgFound, OrgSearcher, within
from local_recall.repo.config import Config
from local_recall.repo.config_trust import NO_SECRETS, credentials_in_uri
from local_recall.search.embedders import Embedder, embedder_fingerprint
from local_recall.search.index.shared import SharedStore
from local_recall.search.query import SearchHit, SearchQuery, SearchResult
from local_recall.search.scoring import snippet
from local_recall.search.text_terms import query_terms, query_text

log = logging.getLogger(__name__)

# Candidates per signal and dataset: twice the hits wanted, at least 10. Each dataset's best
# few are all that can make a merged top 10; deeper lists cost scoring time per repository.
MIN_ORG_DEPTH = 10
STALE_COPY_SECONDS = 86_400.0  # a local copy older than this is named in a note
# `org pull` and `publish` give up on a store that has not answered their first listing by then
FIRST_ANSWER_SECONDS = 30.0


# An org dataset is searched through LanceDB only (no vector cache of another repository's
# rows): its ANN index pays from a few thousand rows, unlike the local index's (search/scoring.py).
ORG_ANN_FROM_ROWS = 5_000


class OrgService:
    def __init__(
        self,
        root: Path,
        config: Config,
        environ: Mapping[str, str],
        *,
        memories: Callable[[], Sequence[Memory]],
        embedder: Callable[[], Embedder],
        state_dir: Path,
        clock: Callable[[], datetime],
    ) -> None:
        self._clock = clock
        self.root = root
        self.mirror_dir = state_dir / "org-mirror"
        self._mirror: Mirror | None = None
        self.config = config.org
        self.ann_threshold = ORG_ANN_FROM_ROWS
        self.environ = environ
        self._memories = memories
        self._embedder = embedder
        self._searchers: dict[str, OrgSearcher] = {}
        self._own: list[str | None] = []
        self._lock = threading.Lock()

    def target(self, uri: str | None = None, flag: str = "") -> Target:
        """The store at `uri`, else [org] uri. `flag`: the option that gives one to the command
        asking (`--to`, `--from`), named when there is none; `search` has no such option."""
        chosen = (uri or self.config.uri).strip()
        if not chosen:
            passing = f"pass {flag}, or " if flag else ""
            raise InvalidInput(
                f"no org URI: {passing}set [org] uri in local-recall/config.toml "
                "or LOCAL_RECALL_ORG_URI (docs/org.md)"
            )
        if "://" not in chosen:  # a folder: relative to the repository, like every path here
            chosen = str((self.root / chosen).resolve())
        elif (found := credentials_in_uri(chosen)) is not None:
            # whichever source gave it (--to, the environment, a config file): checked as the
            # committed one is, and never shown or used with its secret
            raise InvalidInput(f"the org URI {shown_uri(chosen)} holds {found}; {NO_SECRETS}")
        options = storage_options(chosen, self.environ, timeout=self.config.timeout_seconds)
        return Target(chosen, options)

    def publish(
        self,
        *,
        to: str | None = None,
        name: str | None = None,
        progress: Progress | None = None,
    ) -> PublishReport:
        identity = repo_identity(self.root, self.environ, name or self.config.name)
        target = self.target(to, "--to")
        # A publish waits for the store as long as it needs (CI), unlike a search.
        options = storage_options(target.uri, self.environ, timeout=60.0)
        self._answers(SharedStore(target.uri, options))
        return publish(
            Target(target.uri, options),
            identity,
            self._memories(),
            self._embedder(),
            ann_threshold=self.ann_threshold,
            progress=progress,
        )

    def own_name(self) -> str | None:
        """This repository's dataset name (left out of its own org searches: the local index
        answers for it), None when it has none."""
        if not self._own:
            if self.config.name:
                self._own.append(self.config.name)
            else:
                remote = remote_url(self.root, self.environ)
                if remote and not is_local_remote(remote):  # a path names no dataset
                    self._own.append(dataset_name(remote))
                else:
                    self._own.append(None)
        return self._own[0]

    def searcher(self, uri: str | None = None) -> OrgSearcher:
        target = self.target(uri)
        with self._lock:
            found = self._searchers.get(target.uri)
            if found is None:
                found = OrgSearcher(
                    target, own=self.own_name(), timeout=self.config.timeout_seconds
                )
                self._searchers[target.uri] = found
            return found

    def mirror(self) -> Mirror:
        embedder = self._embedder()
        fingerprint = embedder_fingerprint(embedder)
        if self._mirror is None or self._mirror.embedder != fingerprint:
            self._mirror = Mirror(self.mirror_dir, fingerprint, embedder.dim, own=self.own_name())
        return self._mirror

    def copy_age(self) -> float | None:
        """Seconds since `org pull` last copied the configured index; None: no copy of it."""
        when = self.mirror().pulled_at(self.target().uri)
        return None if when is None else self._now() - when

    def pull(self, uri: str | None = None) -> PullReport:
        """Bring the local copy (`org pull`) up to date with the store."""
        target = self.target(uri, "--from")
        options = storage_options(target.uri, self.environ, timeout=60.0)
        source = SharedStore(target.uri, options)
        self._answers(source)
        return self.mirror().pull(
            source, uri=target.uri, ann_threshold=self.ann_threshold, now=self._now()
        )

    def forget(self, name: str, uri: str | None = None) -> str:
        """Remove one repository's dataset from the store (`org forget`): the one an earlier
        name or remote left behind. Its URI; InvalidInput when there is no such dataset."""
        wanted = check_dataset_name(name)
        target = self.target(uri, "--from")
        store = SharedStore(target.uri, storage_options(target.uri, self.environ, timeout=60.0))
        names = store.table_names()
        if wanted not in names:
            listed = ", ".join(n for n in names if n != wanted)[:300] or "none"
            raise InvalidInput(
                f"no dataset {wanted!r} in {shown_uri(target.uri)} (there: {listed})"
            )
        store.drop(wanted)
        return target.uri

    def _answers(self, store: SharedStore) -> None:
        """Raise OrgUnavailable unless the store answers a listing within FIRST_ANSWER_SECONDS.
        Each request has its time limit, but connecting alone makes several, each retried: an
        endpoint that accepts and never answers held a pull or publish for minutes."""
        if not is_remote(store.uri):
            return
        store.load()  # importing lancedb is not the store's time
        answer = within(store.table_names, time.monotonic() + FIRST_ANSWER_SECONDS)
        if answer is None:
            raise OrgUnavailable(
                f"{shown_uri(store.uri)}: the store did not answer within "
                f"{FIRST_ANSWER_SECONDS:g} s"
            )
        if isinstance(answer, BaseException):
            raise OrgUnavailable(f"{shown_uri(store.uri)}: {describe_store_error(str(answer))}")

    def _now(self) -> float:
        return self._clock().timestamp()

    def search(
        self,
        query: SearchQuery,
        local: Callable[[], SearchResult],
        *,
        limit: int,
        source: str = "auto",
    ) -> SearchResult:
        """`local()`'s result with the org's hits merged in by score; the org part runs on a
        daemon thread meanwhile (on two cores the two searches overlap). This repository's own
        dataset is left out: the local index answers for it. `source`: "live" asks the store,
        "mirror" the local copy `org pull` made (no request leaves the machine: the prompt
        hook's opt-in), "auto" the copy when there is one of this org URI, else the store. A
        store that cannot be reached leaves the local result as it is, with a note saying so."""
        text = query_text(query.text)
        if not text or query.kind == "thinking":  # the org index holds episodic memories
            return local()
        if query.mode in ("hybrid", "semantic"):
            with contextlib.suppress(EmbedderUnavailable):
                self._embedder()  # made once, here: both threads then share it
        box: list[OrgFound] = []
        worker = threading.Thread(
            target=lambda: box.append(self._find(query, text, limit, source)),
            name="local-recall-org-search",
            daemon=True,
        )
        worker.start()
        mine = local()
        worker.join(self.config.timeout_seconds + 5.0)  # _find keeps its own deadline
        found = box[0] if box else OrgFound(notes=("org: no answer in time",))
        terms = query_terms(text)
        hits = [
            SearchHit(
                hit.memory, hit.score, snippet(hit.memory.body, terms), hit.signals, None, hit.repo
            )
            for hit in found.hits
        ]
        merged = merge_hits(mine.hits, hits, query, limit=limit)
        return replace(mine, hits=merged, notes=(*mine.notes, *found.notes))

    def _find(self, query: SearchQuery, text: str, limit: int, source: str) -> OrgFound:
        """The org's hits for `text`, never raising: what went wrong is a note."""
        try:
            vector = None
            fingerprint = None
            if query.mode in ("hybrid", "semantic"):
                embedder = self._embedder()
                vector = embedder.embed_query(text)
                fingerprint = embedder_fingerprint(embedder)
            depth = max(MIN_ORG_DEPTH, 2 * limit)
            notes: tuple[str, ...] = ()
            if source == "auto":
                pulled = self.mirror().pulled_at(self.target().uri)
                source = "live" if pulled is None else "mirror"
                age = self._now() - (pulled or 0.0)
                if pulled is not None and age > STALE_COPY_SECONDS:
                    notes = (
                        f"org: searched the local copy pulled {age / 86400:.0f} days ago "
                        "(`local-recall org pull` refreshes it; `search --org --live` asks "
                        "the store)",
                    )
            if source == "mirror":
                found = self.mirror().search(text, vector, embedder=fingerprint, depth=depth)
            else:
                found = self.searcher().search(text, vector, embedder=fingerprint, depth=depth)
            if not found.datasets and not found.notes:  # else a search looks like it ran
                notes += (
                    f"org: {shown_uri(self.target().uri)} holds no other repository's memories "
                    "(none published there, or forgotten)",
                )
            return replace(found, notes=(*notes, *found.notes))
        except (OrgUnavailable, IndexUnavailable, EmbedderUnavailable, InvalidInput) as exc:
            return OrgFound(notes=(f"org: {exc}",))
        except Exception as exc:  # a search never fails because of the org side
            log.warning("org search failed", exc_info=True)
            return OrgFound(notes=(f"org: search failed: {type(exc).__name__}: {exc}",))
