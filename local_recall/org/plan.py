"""What the org index holds and what a publish must change: pure decisions over plain values.

    name = dataset_name("git@github.com:acme/payments.git")     # "github.com--acme--payments"
    plan = plan_publish(local={key: fp}, published={key: fp})  # upsert / delete
    why = decide_recreate(found_meta, wanted_meta)             # None: keep the dataset

One dataset (a LanceDB table) per repository under the org URI, named from its remote URL, so
the object store's own access rules on `<prefix>/<name>.lance/` decide who reads or writes it
(docs/org.md#permissions). Its schema metadata records the format, the embedder (model and
dimension) and the repository; a dataset made by another embedder or format is recreated by the
next publish, and a search never compares vectors of two embedders.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from local_recall.errors import InvalidInput
from local_recall.memory.model import scope_matches
from local_recall.search.query import SearchHit, SearchQuery
from local_recall.text import one_line

# bump when the datasets' columns change: every dataset is recreated (2: disputed)
ORG_FORMAT: Final = 2
META_KEY: Final = "~repo"  # the row holding the repository's identity and term statistics
META_PREFIX: Final = "local_recall."
_NAME_PART = re.compile(r"[^A-Za-z0-9._-]+")
_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$")  # git@host:owner/repo.git
MAX_NAME_CHARS: Final = 120
MIRROR_TABLE: Final = "org_mirror"


# --- naming ---------------------------------------------------------------------------------


def clean_remote(url: str) -> str:
    """A remote URL without credentials: `https://user:token@host/x` → `https://host/x`.
    Only this form is ever published or shown."""
    text = url.strip()
    if "://" in text:
        scheme, _, rest = text.partition("://")
        host, slash, path = rest.partition("/")
        return f"{scheme}://{host.rpartition('@')[2]}{slash}{path}"
    match = _SCP_LIKE.match(text)
    if match:
        return f"{match.group(1)}:{match.group(2)}"
    return text


def is_local_remote(remote: str) -> bool:
    """A remote that is a path on this machine (`/srv/git/x.git`, `../x`, `file:///x`), not a
    repository the team shares: a dataset named after it would carry a machine path in a shared
    name and change with every clone."""
    text = remote.strip()
    if "://" in text:
        return text.partition("://")[0].lower() == "file"
    return _SCP_LIKE.match(text) is None


def dataset_name(remote: str) -> str:
    """The dataset of a repository: host, owner and name joined by `--`, e.g.
    `github.com--acme--payments` (predictable, so an admin can write access rules for it)."""
    text = clean_remote(remote)
    if "://" in text:
        rest = text.partition("://")[2]
        host, _, path = rest.partition("/")
        host = host.rpartition(":")[0] if host.count(":") == 1 else host  # drop a port
    else:
        match = _SCP_LIKE.match(text)
        host, path = (match.group(1), match.group(2)) if match else ("", text)
    path = path.strip("/").removesuffix(".git")
    parts = [p for p in [host.lower(), *path.split("/")] if p]
    return check_dataset_name("--".join(_NAME_PART.sub("_", p) for p in parts))


def check_dataset_name(name: str) -> str:
    """A dataset name as a table name: letters, digits, `.`, `_`, `-`; not empty."""
    if not name or len(name) > MAX_NAME_CHARS or _NAME_PART.search(name) or name[0] in ".-":
        raise InvalidInput(
            f"not a usable org dataset name: {name[:MAX_NAME_CHARS]!r} (letters, digits, "
            f". _ -, at most {MAX_NAME_CHARS} characters)"
        )
    if name == MIRROR_TABLE:
        raise InvalidInput(f"{name!r} is reserved")
    return name


def usable_names(listed: Sequence[str]) -> tuple[list[str], list[str]]:
    """The listed datasets whose names are usable (check_dataset_name), and the others: a
    folder of another name in the org prefix is left out, never the end of a listing."""
    usable: list[str] = []
    odd: list[str] = []
    for name in listed:
        try:
            usable.append(check_dataset_name(name))
        except InvalidInput:
            odd.append(name)
    return usable, odd


def odd_name_note(name: str) -> str:
    # repr: a name's line breaks and escapes are shown as text, never printed
    return f"org: left out a dataset named {name[:MAX_NAME_CHARS]!r} (not a dataset name)"


# --- what a dataset records -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DatasetMeta:
    """The schema metadata of a dataset: set when it is created, read with its manifest."""

    format: int
    embedder: str  # embedder_fingerprint, e.g. "minilm:all-MiniLM-L6-v2-int8:384"
    dim: int
    repo: str  # the dataset name

    def to_metadata(self) -> dict[str, str]:
        return {
            f"{META_PREFIX}format": str(self.format),
            f"{META_PREFIX}embedder": self.embedder,
            f"{META_PREFIX}dim": str(self.dim),
            f"{META_PREFIX}repo": self.repo,
        }


def parse_dataset_meta(metadata: Mapping[str, str]) -> DatasetMeta | None:
    """The meta of a dataset, None when it was not written by local-recall (or is damaged)."""
    try:
        meta = DatasetMeta(
            format=int(metadata[f"{META_PREFIX}format"]),
            embedder=metadata[f"{META_PREFIX}embedder"],
            dim=int(metadata[f"{META_PREFIX}dim"]),
            repo=metadata[f"{META_PREFIX}repo"],
        )
    except (KeyError, ValueError):
        return None
    return meta if 0 < meta.dim <= 4096 else None


def decide_recreate(found: DatasetMeta | None, wanted: DatasetMeta) -> str | None:
    """Why a publish must start the dataset afresh (None: update it in place)."""
    if found is None:
        return "no dataset yet"
    if found.format != wanted.format:
        return f"format {found.format} → {wanted.format}"
    if found.embedder != wanted.embedder or found.dim != wanted.dim:
        return f"embedder {found.embedder} → {wanted.embedder}"
    return None


@dataclass(frozen=True, slots=True)
class RepoIdentity:
    """The repository a dataset holds, as its meta row records it."""

    name: str
    remote: str  # without credentials
    branch: str | None  # the default branch
    commit: str | None  # HEAD when the published memories last changed

    def to_json(self) -> dict[str, str | None]:
        return {
            "name": self.name,
            "remote": self.remote,
            "branch": self.branch,
            "commit": self.commit,
        }


# --- what a publish changes -----------------------------------------------------------------


def row_fingerprint(
    text_fp: str,
    meta_fp: str,
    unreviewed: bool,
    superseded_by: str | None,
    disputed: str | None = None,
) -> str:
    """Everything a published row is made from (the index's text and metadata fingerprints,
    the review state, supersession and dispute): a row is rewritten exactly when this
    changes."""
    blob = json.dumps([ORG_FORMAT, text_fp, meta_fp, unreviewed, superseded_by, disputed])
    return hashlib.blake2b(blob.encode(), digest_size=16).hexdigest()


def meta_fingerprint(identity: RepoIdentity, stats: Mapping[str, object]) -> str:
    """The meta row changes when the repository's name, remote, default branch or term
    statistics do — not with every commit (a push that changes no memory writes nothing)."""
    blob = json.dumps(
        [ORG_FORMAT, identity.name, identity.remote, identity.branch, stats], sort_keys=True
    )
    return hashlib.blake2b(blob.encode(), digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class PublishPlan:
    upsert: tuple[str, ...]  # new rows, or rows whose fingerprint changed
    delete: tuple[str, ...]  # published, no longer a memory of the repository
    meta: bool  # the meta row must be written

    @property
    def is_empty(self) -> bool:
        return not (self.upsert or self.delete or self.meta)


def plan_publish(
    local: Mapping[str, str], published: Mapping[str, str], *, meta_fp: str
) -> PublishPlan:
    """Compare the fingerprints of the repository's memories with the dataset's (both keyed
    `kind/id`; the dataset's meta row under META_KEY). Sorted keys: deterministic plans."""
    upsert = tuple(sorted(k for k, fp in local.items() if published.get(k) != fp))
    delete = tuple(sorted(k for k in published if k != META_KEY and k not in local))
    return PublishPlan(upsert, delete, published.get(META_KEY) != meta_fp)


# --- where the store is and how to reach it -------------------------------------------------

# Standard AWS variables → LanceDB (object_store) storage options. Passed explicitly so that
# the library reads no process environment (Settings.environ is the seam); anything not set
# here (profiles, web identity, instance roles) is still found by the store's own chain.
_AWS_OPTIONS: Final = (
    ("AWS_ENDPOINT_URL_S3", "aws_endpoint"),
    ("AWS_ENDPOINT_URL", "aws_endpoint"),
    ("AWS_ACCESS_KEY_ID", "aws_access_key_id"),
    ("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key"),
    ("AWS_SESSION_TOKEN", "aws_session_token"),
    ("AWS_REGION", "aws_region"),
    ("AWS_DEFAULT_REGION", "aws_region"),
    ("AWS_ALLOW_HTTP", "allow_http"),
)


def storage_options(uri: str, environ: Mapping[str, str], *, timeout: float) -> dict[str, str]:
    """The storage options of an org URI: AWS variables for s3 URIs, and request time limits
    (`timeout`: seconds; a request that cannot connect gives up after a third of it) so an
    unreachable store costs a bounded time."""
    options: dict[str, str] = {}
    if is_remote(uri) and uri.split("://", 1)[0] in ("s3", "s3+ddb"):
        for variable, option in _AWS_OPTIONS:
            value = environ.get(variable, "").strip()
            if value and option not in options:
                options[option] = value
    if is_remote(uri):
        seconds = max(0.1, timeout)
        options["connect_timeout"] = f"{max(100, int(seconds * 1000 / 3))}ms"
        options["timeout"] = f"{max(100, int(seconds * 1000))}ms"
        options["client_max_retries"] = "1"
        options["client_retry_timeout"] = f"{max(1, int(seconds))}"
    return options


def is_remote(uri: str) -> bool:
    return "://" in uri and not uri.startswith("file://")


def shown_uri(uri: str) -> str:
    """The URI for messages: without anything before its last `@` (a secret key may hold a
    `/`, so the host cannot be told from the path first) or after a `?`, on one line."""
    scheme, sep, rest = uri.partition("://")
    if not sep:
        return " ".join(uri.split())
    rest = rest.partition("?")[0].rpartition("@")[2]
    return " ".join(f"{scheme}://{rest}".split())


# --- one list of hits -------------------------------------------------------------------------


def merge_hits(
    local: Sequence[SearchHit], org: Sequence[SearchHit], query: SearchQuery, *, limit: int
) -> tuple[SearchHit, ...]:
    """This repository's hits and the org's in one list, by the same calibrated score (best
    first; between equal scores this repository's first, then the newer). The query's
    filters (scope, dates, kind, min_score) are applied to the org hits as the local search
    applied them to its own."""
    floor = query.min_score if query.min_score is not None else 0.0
    kept = [
        hit
        for hit in org
        if hit.score > 0
        and hit.score >= floor
        and (query.kind is None or hit.memory.kind == query.kind)
        and (
            query.scope is None
            or scope_matches(
                hit.memory.applies_to, query.scope, include_global=query.include_global
            )
        )
        and (query.since is None or hit.memory.occurred_at >= query.since)
        and (query.until is None or hit.memory.occurred_at <= query.until)
    ]
    both = [(hit, 0) for hit in local] + [(hit, 1) for hit in kept]
    both.sort(
        key=lambda item: (-round(item[0].score, 6), item[1], -item[0].occurred_at.timestamp())
    )
    return tuple(hit for hit, _ in both[:limit])


NO_PERMISSION: Final = "no permission to read it"
_STORE_ERRORS: Final = (
    (("accessdenied", "access denied", "forbidden", " 403"), NO_PERMISSION),
    (("nosuchbucket", "bucket does not exist"), "the bucket does not exist"),
    (
        ("connection refused", "error sending", "timed out", "timeout", "dns error", "retryerror"),
        "not reachable",
    ),
    (("not found", "nosuchkey", " 404"), "not found"),
)


def describe_store_error(message: str) -> str:
    """One short line for an object-store failure (lance's errors run to a screenful)."""
    lowered = message.lower()
    for needles, meaning in _STORE_ERRORS:
        if any(needle in lowered for needle in needles):
            return meaning
    # an object's name in the store's words may hold anything, an escape sequence included
    return one_line(message, 160, mark="...")
