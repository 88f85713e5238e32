"""The org index's pure decisions, on literals: names, plans, recreation, storage options,
committed URIs, merging, error lines."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from local_recall.errors import InvalidInput
from local_recall.memory.model import Memory
from local_recall.org.plan import (
    META_KEY,
    ORG_FORMAT,
    DatasetMeta,
    PublishPlan,
    RepoIdentity,
    check_dataset_name,
    clean_remote,
    dataset_name,
    decide_recreate,
    describe_store_error,
    merge_hits,
    meta_fingerprint,
    parse_dataset_meta,
    plan_publish,
    row_fingerprint,
    shown_uri,
    storage_options,
)
from local_recall.repo.config_trust import committed_value_problem, credentials_in_uri
from local_recall.search.query import SearchHit, SearchQuery

ID_A = "00000000-0000-4000-8000-00000000000a"
ID_B = "00000000-0000-4000-8000-00000000000b"


@pytest.mark.parametrize(
    ("remote", "name"),
    [
        ("git@github.com:acme/payments.git", "github.com--acme--payments"),
        ("https://github.com/acme/payments", "github.com--acme--payments"),
        ("https://user:ghp_secret@github.com/acme/payments.git", "github.com--acme--payments"),
        (
            "ssh://git@gitlab.example.com:2222/group/sub/api.git",
            "gitlab.example.com--group--sub--api",
        ),
        ("https://GitHub.com/Acme/My Repo", "github.com--Acme--My_Repo"),
    ],
)
def test_dataset_names_come_from_the_remote(remote: str, name: str) -> None:
    assert dataset_name(remote) == name


def test_credentials_never_leave_a_remote_url() -> None:
    assert clean_remote("https://user:tok@host/x.git") == "https://host/x.git"
    assert clean_remote("git@github.com:acme/x.git") == "github.com:acme/x.git"
    assert shown_uri("s3://key:secret@bucket/p?ddbTableName=t") == "s3://bucket/p"


@pytest.mark.parametrize("bad", ["", "../x", "a/b", ".hidden", "x" * 121, "org_mirror"])
def test_bad_dataset_names_are_refused(bad: str) -> None:
    with pytest.raises(InvalidInput):
        check_dataset_name(bad)


def test_plan_writes_only_what_changed() -> None:
    local = {f"episodic/{ID_A}": "fa", f"episodic/{ID_B}": "fb2"}
    published = {f"episodic/{ID_A}": "fa", f"episodic/{ID_B}": "fb1", "episodic/gone": "x"}
    published[META_KEY] = "m1"
    assert plan_publish(local, published, meta_fp="m1") == PublishPlan(
        upsert=(f"episodic/{ID_B}",), delete=("episodic/gone",), meta=False
    )
    same = {**local, META_KEY: "m1"}
    assert plan_publish(local, same, meta_fp="m1").is_empty
    assert plan_publish(local, same, meta_fp="m2") == PublishPlan((), (), True)
    assert plan_publish({}, {}, meta_fp="m") == PublishPlan((), (), True)


def test_fingerprints_move_with_what_they_cover() -> None:
    base = row_fingerprint("t", "m", False, None)
    assert base == row_fingerprint("t", "m", False, None)
    assert base != row_fingerprint("t2", "m", False, None)
    assert base != row_fingerprint("t", "m", True, None)
    who = RepoIdentity("n", "git@h:o/r", "main", "c1")
    later = RepoIdentity("n", "git@h:o/r", "main", "c2")
    stats = {"documents": 1, "df": {"a": 1}}
    assert meta_fingerprint(who, stats) == meta_fingerprint(later, stats)  # commit alone: no write
    assert meta_fingerprint(who, stats) != meta_fingerprint(who, {"documents": 2, "df": {}})


def test_another_embedder_or_format_recreates_the_dataset() -> None:
    want = DatasetMeta(ORG_FORMAT, "minilm:m:384", 384, "r")
    assert decide_recreate(None, want) == "no dataset yet"
    assert decide_recreate(want, want) is None
    assert "embedder" in (
        decide_recreate(DatasetMeta(ORG_FORMAT, "ollama:x:768", 768, "r"), want) or ""
    )
    assert "format" in (decide_recreate(DatasetMeta(0, want.embedder, 384, "r"), want) or "")
    assert parse_dataset_meta(want.to_metadata()) == want
    assert parse_dataset_meta({"local_recall.format": "1"}) is None
    assert parse_dataset_meta({**want.to_metadata(), "local_recall.dim": "99999"}) is None


def test_storage_options_come_from_the_aws_variables_given() -> None:
    env = {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
        "AWS_ACCESS_KEY_ID": "id",
        "AWS_SECRET_ACCESS_KEY": "secret",
        "AWS_DEFAULT_REGION": "eu-west-1",
        "AWS_ALLOW_HTTP": "true",
    }
    options = storage_options("s3://bucket/p", env, timeout=3.0)
    assert options["aws_endpoint"] == "http://127.0.0.1:9000"
    assert options["aws_region"] == "eu-west-1"
    assert options["timeout"] == "3000ms" and options["connect_timeout"] == "1000ms"
    assert options["client_max_retries"] == "1"
    assert storage_options("/tmp/org", env, timeout=3.0) == {}
    assert "aws_access_key_id" not in storage_options("gs://b/p", env, timeout=3.0)


def test_a_committed_org_uri_may_not_carry_credentials() -> None:
    assert committed_value_problem("org", "uri", "s3://bucket/recall") is None
    assert committed_value_problem("org", "uri", "s3+ddb://b/p?ddbTableName=locks") is None
    assert "credentials" in (committed_value_problem("org", "uri", "s3://k:s@bucket/p") or "")
    assert credentials_in_uri("az://c/p?sas=token") == "query parameters (sas)"


def _hit(subject: str, score: float, repo: str | None, day: int = 1) -> SearchHit:
    memory = Memory(
        id=ID_A,
        subject=subject,
        body="b",
        keywords=(),
        applies_to="file:src/" if subject == "scoped" else "global",
        occurred_at=datetime(2025, 1, day, tzinfo=UTC),
        content_hash="h",
    )
    return SearchHit(memory, score, "b", repo=repo)


def test_merge_orders_by_the_same_score_and_filters_org_hits() -> None:
    local = [_hit("local best", 0.9, None), _hit("local low", 0.3, None)]
    org = [_hit("org mid", 0.6, "r1"), _hit("org tie", 0.9, "r2"), _hit("scoped", 0.95, "r3")]
    merged = merge_hits(local, org, SearchQuery("q"), limit=4)
    assert [h.subject for h in merged] == ["scoped", "local best", "org tie", "org mid"]
    only = merge_hits(local, org, SearchQuery("q", scope="area:x", include_global=False), limit=9)
    assert [h.subject for h in only] == [
        "local best",
        "local low",
    ]  # the local search filtered its own
    floor = merge_hits([], org, SearchQuery("q", min_score=0.7), limit=9)
    assert [h.subject for h in floor] == ["scoped", "org tie"]


def test_store_errors_read_as_one_short_line() -> None:
    assert describe_store_error("... AccessDenied ... 403 ...") == "no permission to read it"
    assert describe_store_error("RetryError ... Connection refused") == "not reachable"
    assert len(describe_store_error("x" * 1000)) == 160
