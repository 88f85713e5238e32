"""Credentials in the org URI, from any source (--to, --from, LOCAL_RECALL_ORG_URI): refused as
the committed one is, and never shown — not by doctor, not on stderr, not in recall.log. The
store is a port nothing listens on: a URI that got through would fail there, quoting itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from local_recall.org.plan import shown_uri
from local_recall.repo.config_trust import credentials_in_uri
from tests.org.test_org import make_repo, run_cli

SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYzEXAMPLEKEY"  # AWS's own documentation example
URI = f"s3://AKIAIOSFODNN7EXAMPLE:{SECRET}@acme-recall/org"
NOWHERE = {
    "AWS_ENDPOINT_URL": "http://127.0.0.1:1",
    "AWS_ALLOW_HTTP": "true",
    "AWS_REGION": "us-east-1",
    "LOCAL_RECALL_ORG_TIMEOUT_SECONDS": "1",
}


def test_a_secret_holding_a_slash_is_found_and_never_shown() -> None:
    assert credentials_in_uri(URI) == "a user name or password"
    assert shown_uri(URI) == "s3://acme-recall/org"
    assert shown_uri("s3://k:s@b/p?token=x") == "s3://b/p"
    assert credentials_in_uri("s3://acme-recall/org?ddbTableName=t") is None


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (("publish", "--to", URI), {}),
        (("org", "pull", "--from", URI), {}),
        (("publish",), {"LOCAL_RECALL_ORG_URI": URI}),
        (("org", "pull"), {"LOCAL_RECALL_ORG_URI": URI}),
    ],
)
def test_publish_and_pull_refuse_credentials_from_any_source(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str]
) -> None:
    root = make_repo(tmp_path / "api", "git@github.com:acme/api.git", {"A": "a body"})
    done = run_cli(root, {**NOWHERE, **env}, *args)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1, done.stderr
    assert "holds a user name or password" in done.stderr
    assert "s3://acme-recall/org" in done.stderr
    log = (root / "local-recall" / "recall.log").read_text(encoding="utf-8")
    for text in (done.stdout, done.stderr, log):
        assert SECRET not in text and "AKIAIOSFODNN7EXAMPLE" not in text


def test_doctor_and_search_name_the_uri_without_its_secret(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "api", "git@github.com:acme/api.git", {"Kafka lag": "a body"})
    env = {**NOWHERE, "LOCAL_RECALL_ORG_URI": URI, "LOCAL_RECALL_ORG_HOOK": "true"}
    doctor = run_cli(root, env, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(doctor.stdout)}
    assert doctor.returncode == 1
    assert checks["org index"]["status"] == "fail"
    assert checks["org index"]["detail"].startswith("s3://acme-recall/org: the org URI holds")
    search = run_cli(root, env, "search", "--org", "kafka lag")
    assert search.returncode == 0 and "Kafka lag" in search.stdout
    assert "holds a user name or password" in search.stderr
    log = (root / "local-recall" / "recall.log").read_text(encoding="utf-8")
    for text in (doctor.stdout, doctor.stderr, search.stdout, search.stderr, log):
        assert SECRET not in text and "AKIAIOSFODNN7EXAMPLE" not in text
