"""The org index against a real S3-compatible server on localhost (moto_server, started here):
publish, incremental re-publish, org search from another repository through the real CLI and
the real MCP client, concurrent and killed publishes, an unreadable dataset, an unreachable
store, another embedder. Nothing of LanceDB or S3 is mocked."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from local_recall.org.plan import META_KEY, storage_options
from local_recall.recall import Recall
from local_recall.search.embedders import Embedder, OllamaEmbedder, make_embedder
from local_recall.search.index.shared import SharedStore
from local_recall.search.query import SearchQuery
from local_recall.settings import Settings
from tests.conftest import clean_env, git_init
from tests.fake_ollama import FakeOllama
from tests.s3_server import S3Server, running_s3
from tests.waiting import Ceiling

pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    with running_s3(tmp_path_factory.mktemp("moto") / "moto.log") as server:
        yield server


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    return make_embedder("minilm")


_buckets = iter(range(1_000_000))


@pytest.fixture
def org_uri(s3: S3Server) -> str:
    name = f"org-test-{next(_buckets)}"
    s3.create_bucket(name)
    return f"s3://{name}/recall"


def make_repo(path: Path, remote: str, memories: Mapping[str, str]) -> Path:
    root = git_init(path)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", remote], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-q", "--allow-empty", "-m", "c"], check=True)
    recall = Recall.open(settings=Settings(root=root, environ=clean_env()))
    recall.init()
    for subject, body in memories.items():
        recall.add(subject, body)
    return root


def open_recall(root: Path, env: Mapping[str, str], embedder: Embedder) -> Recall:
    settings = Settings(root=root, environ=clean_env(env), embedder_factory=lambda _: embedder)
    return Recall.open(settings=settings)


def run_cli(root: Path, env: Mapping[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "local_recall", *args],
        cwd=root,
        env=clean_env(env),
        capture_output=True,
        text=True,
        timeout=600,
    )


def dataset_rows(uri: str, env: Mapping[str, str], name: str) -> tuple[int, dict[str, Any]]:
    """(version, key → row) of a dataset, read straight from the store."""
    table = SharedStore(uri, storage_options(uri, env, timeout=30)).open(name)
    rows = table.read(["key", "subject", "body", "fp"]).to_pylist()
    return table.version, {row["key"]: row for row in rows}


ALPHA = {
    "Kafka consumer lag in the billing service": (
        "Consumer lag in billing came from max.poll.records = 500 with slow handlers; lowering "
        "it to 50 and committing offsets asynchronously fixed it. marker-alpha-7731"
    ),
    "Use filelock for cross-process locks": "filelock works on every platform we ship.",
}
BETA = {
    "Consumer lag on the orders topic": (
        "The orders consumer fell behind because a rebalance storm restarted it every minute; "
        "raising session.timeout.ms stopped the rebalances. marker-beta-4412"
    ),
}


@pytest.mark.slow
def test_done_when_two_repos_publish_and_a_third_finds_both(
    tmp_path: Path, s3: S3Server, org_uri: str
) -> None:
    env = {**s3.env(), "LOCAL_RECALL_ORG_URI": org_uri}
    alpha = make_repo(tmp_path / "alpha", "git@github.com:acme/alpha.git", ALPHA)
    beta = make_repo(tmp_path / "beta", "https://github.com/acme/beta", BETA)
    gamma = make_repo(tmp_path / "gamma", "git@github.com:acme/gamma.git", {})

    first = run_cli(alpha, env, "publish", "--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["dataset"] == "github.com--acme--alpha" and report["upserted"] == 2
    assert run_cli(beta, env, "publish").returncode == 0

    # a second publish with no change writes nothing: the dataset's version does not move
    version, _ = dataset_rows(org_uri, s3.env(), "github.com--acme--alpha")
    again = run_cli(alpha, env, "publish", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["wrote"] is False
    assert dataset_rows(org_uri, s3.env(), "github.com--acme--alpha")[0] == version

    found = run_cli(gamma, env, "search", "--org", "how did we fix the consumer lag?", "--json")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    by_repo = {hit["repo"]: hit for hit in hits if "repo" in hit}
    assert "marker" not in found.stderr
    assert by_repo["github.com--acme--alpha"]["subject"].startswith("Kafka consumer lag")
    assert by_repo["github.com--acme--beta"]["subject"] == "Consumer lag on the orders topic"
    text = run_cli(gamma, env, "search", "--org", "consumer lag rebalance storm")
    assert "[github.com--acme--beta]" in text.stdout.splitlines()[0], text.stdout

    # two publishes at once (two repositories, and the same one twice) both land
    delta = make_repo(tmp_path / "delta", "git@github.com:acme/delta.git", {"Delta": "d body"})
    local_recall = [sys.executable, "-m", "local_recall", "publish", "--json"]
    runs = [
        subprocess.Popen(
            local_recall, cwd=root, env=clean_env(env), stdout=subprocess.PIPE, text=True
        )
        for root in (beta, delta, delta)
    ]
    for run in runs:
        run.communicate(timeout=600)
        assert run.returncode == 0
    _, rows = dataset_rows(org_uri, s3.env(), "github.com--acme--delta")
    assert sorted(r["subject"] for r in rows.values()) == ["Delta", "github.com--acme--delta"]
    assert len(rows) == 2  # one memory + the meta row: no duplicate from the second publisher


def test_a_publish_that_loses_the_race_to_create_the_dataset_plans_again(
    tmp_path: Path, s3: S3Server, org_uri: str, minilm: Embedder
) -> None:
    """Two first publishes of one repository at once (CI found it): both create the dataset,
    Lance lands the second creation as an overwrite, and the first one's write, planned
    against the table it created, is refused ("Incompatible transaction"). That publish
    re-reads the table and plans again, without embedding anything twice."""
    import lancedb

    root = make_repo(tmp_path / "r", "git@github.com:acme/race.git", ALPHA)
    recall = open_recall(root, s3.env(), minilm)
    name = "github.com--acme--race"
    options = storage_options(org_uri, s3.env(), timeout=30)
    calls: list[tuple[int, int]] = []

    def the_other_publisher_creates_it_too(done: int, total: int) -> None:
        if not calls:  # after this publish read the table, before its write
            db = lancedb.connect(org_uri, storage_options=options)
            db.create_table(name, schema=db.open_table(name).schema, mode="overwrite")
        calls.append((done, total))

    report = recall.org.publish(to=org_uri, progress=the_other_publisher_creates_it_too)
    assert (report.upserted, report.memories) == (2, 2)
    assert len(calls) == 1  # the retry embedded nothing again
    _, rows = dataset_rows(org_uri, s3.env(), name)
    assert sorted(rows) == sorted([*(f"episodic/{m.id}" for m in recall.list()), META_KEY])
    assert recall.org.publish(to=org_uri).wrote is False


def test_edit_replaces_and_delete_removes_a_row(
    tmp_path: Path, s3: S3Server, org_uri: str, minilm: Embedder
) -> None:
    root = make_repo(tmp_path / "r", "git@github.com:acme/r.git", ALPHA)
    recall = open_recall(root, s3.env(), minilm)
    first = recall.org.publish(to=org_uri)
    assert (first.upserted, first.deleted, first.version_before) == (2, 0, None)
    kafka = next(m for m in recall.list() if m.subject.startswith("Kafka"))
    other = next(m for m in recall.list() if m.id != kafka.id)
    recall.update(kafka.id, body="Lag fixed by partitioning by customer id. marker-edited")
    recall.delete(other.id)
    second = recall.org.publish(to=org_uri)
    assert (second.upserted, second.deleted, second.memories) == (1, 1, 1)
    assert second.version_after > first.version_after
    version, rows = dataset_rows(org_uri, s3.env(), "github.com--acme--r")
    assert set(rows) == {f"episodic/{kafka.id}", META_KEY}
    assert "marker-edited" in rows[f"episodic/{kafka.id}"]["body"]
    assert recall.org.publish(to=org_uri).version_after == version  # nothing more to write
    # a hand edit brings a secret in: the memory is withheld and its published row removed
    kafka_path = recall.get(kafka.id).path
    assert kafka_path is not None
    text = kafka_path.read_text().replace(
        "marker-edited", "ghp_R8x2kLm9QwZt4VbN7cYp3JdF6sHa1Ue5GiKo"
    )
    kafka_path.write_text(text)
    third = recall.org.publish(to=org_uri)
    assert third.withheld == (kafka.id,) and third.deleted == 1
    assert set(dataset_rows(org_uri, s3.env(), "github.com--acme--r")[1]) == {META_KEY}


def test_publish_refuses_a_repo_without_a_name(tmp_path: Path, s3: S3Server, org_uri: str) -> None:
    root = git_init(tmp_path / "plain")
    Recall.open(settings=Settings(root=root, environ=clean_env())).init()
    done = run_cli(root, s3.env(), "publish", "--to", org_uri)
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0 and "no remote URL" in done.stderr


def test_unreadable_dataset_is_skipped_with_a_note(
    tmp_path: Path, s3: S3Server, org_uri: str, minilm: Embedder
) -> None:
    alpha = make_repo(tmp_path / "alpha", "git@github.com:acme/alpha.git", ALPHA)
    open_recall(alpha, s3.env(), minilm).org.publish(to=org_uri)
    bucket, prefix = org_uri.removeprefix("s3://").split("/", 1)
    # a dataset someone else wrote, that this user cannot make sense of
    s3.client().put_object(
        Bucket=bucket, Key=f"{prefix}/broken.lance/_versions/1.manifest", Body=b"not a manifest"
    )
    gamma = make_repo(tmp_path / "gamma", "git@github.com:acme/gamma.git", {})
    env = {**s3.env(), "LOCAL_RECALL_ORG_URI": org_uri}
    result = open_recall(gamma, env, minilm).query(SearchQuery("consumer lag billing"), org=True)
    assert [h.repo for h in result.hits][:1] == ["github.com--acme--alpha"]
    assert any(note.startswith("org: skipped broken:") for note in result.notes), result.notes


@pytest.mark.parametrize("kind", ["refused", "silent"])
def test_unreachable_store_degrades_to_local_hits_in_bounded_time(
    tmp_path: Path, kind: str, minilm: Embedder
) -> None:
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    if kind == "silent":
        listener.listen(64)  # accepts connections, never answers
    else:
        listener.close()  # nothing listens: connection refused
    env = {
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
        "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "y",
        "AWS_REGION": "us-east-1",
        "AWS_ALLOW_HTTP": "true",
        "LOCAL_RECALL_ORG_URI": "s3://nowhere/recall",
        "LOCAL_RECALL_ORG_TIMEOUT_SECONDS": "2",
    }
    root = make_repo(tmp_path / "r", "git@github.com:acme/r.git", ALPHA)
    recall = open_recall(root, env, minilm)
    recall.query(SearchQuery("consumer lag"))  # lancedb imported, index built
    result = recall.query(SearchQuery("consumer lag"), org=True)
    listener.close()
    assert result.hits and all(hit.repo is None for hit in result.hits)
    assert len(result.notes) == 1 and "s3://nowhere/recall" in result.notes[0], result.notes
    # bounded by org.timeout_seconds: the silent store is given up on at that timeout (no
    # stopwatch: a busy machine; without the timeout the store is waited for, pytest's timeout)
    if kind == "silent":
        assert "did not answer within 2 s" in result.notes[0], result.notes


def test_killed_publish_leaves_the_previous_version_readable(
    tmp_path: Path, s3: S3Server, org_uri: str, minilm: Embedder
) -> None:
    root = make_repo(tmp_path / "r", "git@github.com:acme/r.git", ALPHA)
    open_recall(root, s3.env(), minilm).org.publish(to=org_uri)
    version, before = dataset_rows(org_uri, s3.env(), "github.com--acme--r")
    recall = Recall.open(settings=Settings(root=root, environ=clean_env()))
    for i in range(150):
        recall.add(f"Generated memory {i}", f"Body {i} about topic {i % 7}. More words here.")
    env = clean_env({**s3.env(), "LOCAL_RECALL_ORG_URI": org_uri})
    bucket, prefix = org_uri.removeprefix("s3://").split("/", 1)
    data = f"{prefix}/github.com--acme--r.lance/data/"

    def data_files() -> int:
        return int(s3.client().list_objects_v2(Bucket=bucket, Prefix=data).get("KeyCount", 0))

    for moment in ("early", "on-write"):
        files = data_files()
        run = subprocess.Popen([sys.executable, "-m", "local_recall", "publish"], cwd=root, env=env)
        if moment == "early":  # while importing or embedding
            time.sleep(4.0)
        else:  # the moment its new data files reach the store: just before or after the commit
            ceiling = Ceiling()
            while data_files() == files and run.poll() is None and not ceiling.passed():
                time.sleep(0.02)
        run.send_signal(signal.SIGKILL)
        run.wait()
        now, rows = dataset_rows(org_uri, s3.env(), "github.com--acme--r")
        # either untouched or the whole publish landed: never a half
        assert (now, set(rows)) == (version, set(before)) or len(rows) == 153
    done = run_cli(root, {**s3.env(), "LOCAL_RECALL_ORG_URI": org_uri}, "publish", "--json")
    assert done.returncode == 0, done.stderr
    assert len(dataset_rows(org_uri, s3.env(), "github.com--acme--r")[1]) == 153


def test_a_dataset_of_another_embedder_is_searched_by_words_only(
    tmp_path: Path, s3: S3Server, org_uri: str, minilm: Embedder
) -> None:
    beta = make_repo(tmp_path / "beta", "git@github.com:acme/beta.git", BETA)
    with FakeOllama() as ollama:
        report = open_recall(beta, s3.env(), OllamaEmbedder(host=ollama.url)).org.publish(
            to=org_uri
        )
    assert report.embedder.startswith("ollama:") and report.embedder.endswith(":768")
    gamma = make_repo(tmp_path / "gamma", "git@github.com:acme/gamma.git", {})
    env = {**s3.env(), "LOCAL_RECALL_ORG_URI": org_uri}
    result = open_recall(gamma, env, minilm).query(
        SearchQuery("consumer lag rebalance orders"), org=True
    )
    assert [h.repo for h in result.hits] == ["github.com--acme--beta"]
    hit = result.hits[0]
    assert hit.signals is not None and hit.signals.cosine is None  # no vector compared
    assert any("searched by its words only" in note for note in result.notes)


@pytest.mark.slow
def test_mcp_search_with_the_org_flag(
    tmp_path: Path, s3: S3Server, org_uri: str, minilm: Embedder
) -> None:
    alpha = make_repo(tmp_path / "alpha", "git@github.com:acme/alpha.git", ALPHA)
    open_recall(alpha, s3.env(), minilm).org.publish(to=org_uri)
    gamma = make_repo(tmp_path / "gamma", "git@github.com:acme/gamma.git", {"Local": "local body"})
    env = clean_env({**s3.env(), "LOCAL_RECALL_ORG_URI": org_uri, "LOCAL_RECALL_ROOT": str(gamma)})
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "local_recall", "mcp"], env=env, cwd=str(gamma)
    )
    answers: list[dict[str, Any]] = []

    async def main() -> None:
        async with Client(params, mode="legacy", read_timeout_seconds=300) as client:
            for org in (False, True):
                result = await client.call_tool(
                    "search_memories", {"query": "kafka consumer lag billing", "org": org}
                )
                assert not result.is_error, result.content
                assert isinstance(result.structured_content, dict)
                answers.append(result.structured_content)

    anyio.run(main)
    assert all("repo" not in row for row in answers[0]["results"])
    org_rows = [row for row in answers[1]["results"] if "repo" in row]
    assert org_rows[0]["repo"] == "github.com--acme--alpha"
    assert "marker-alpha-7731" in org_rows[0]["content"]
    assert os.path.isdir(gamma)


def test_pulled_copy_answers_the_hook_opt_in_without_the_store(
    tmp_path: Path, s3: S3Server, org_uri: str, minilm: Embedder
) -> None:
    from local_recall.context.prompt import PromptAsk
    from local_recall.context.service import ContextService
    from local_recall.daemon.query_service import QueryService

    alpha = make_repo(tmp_path / "alpha", "git@github.com:acme/alpha.git", ALPHA)
    beta = make_repo(tmp_path / "beta", "git@github.com:acme/beta.git", BETA)
    for root in (alpha, beta):
        open_recall(root, s3.env(), minilm).org.publish(to=org_uri)
    gamma = make_repo(tmp_path / "gamma", "git@github.com:acme/gamma.git", {})
    env = {**s3.env(), "LOCAL_RECALL_ORG_URI": org_uri, "LOCAL_RECALL_ORG_HOOK": "true"}
    recall = open_recall(gamma, env, minilm)
    first = recall.org.pull()
    assert (first.datasets, first.rows, first.notes) == (2, 3, ())
    assert recall.org.pull().datasets == 0  # nothing moved: nothing copied
    # the store goes away: the copy still answers, through the daemon's search (the hook's)
    offline = open_recall(gamma, {**env, "AWS_ENDPOINT_URL": "http://127.0.0.1:1"}, minilm)
    lag = "how did we fix the consumer lag?"
    notes = ContextService(offline).prompt_notes(PromptAsk(lag, limit=10, min_score=0.0))
    assert {"github.com--acme--alpha", "github.com--acme--beta"} <= {n.repo for n in notes}
    assert all(n.subject.startswith("[github.com--acme--") for n in notes if n.repo)
    service = QueryService(offline, on_transcript_done=lambda _: None, describe=dict)
    asked = {"op": "answer", "kind": "prompt", "agent": "claude_code", "prompt": lag}
    reply = service.handle({**asked, "hook_env": {}})
    assert "[github.com--acme--" in reply["text"], reply  # shown as another repository's
    # `search --org` reads the copy once there is one (no note: it is fresh); --live does not
    auto = offline.query(SearchQuery("consumer lag rebalance orders"), org=True)
    assert auto.hits[0].repo == "github.com--acme--beta" and auto.notes == ()
    live = offline.query(SearchQuery("consumer lag rebalance orders"), org="live")
    assert all(hit.repo is None for hit in live.hits) and "not reachable" in live.notes[0]
    # an edit is published, then pulled: only that repository is copied again
    alpha_recall = open_recall(alpha, s3.env(), minilm)
    kafka = next(m for m in alpha_recall.list() if m.subject.startswith("Kafka"))
    alpha_recall.update(kafka.id, body="Lag fixed by a bigger fetch size. marker-pulled-edit")
    alpha_recall.org.publish(to=org_uri)
    again = recall.org.pull()
    assert (again.datasets, again.unchanged) == (1, 1)
    found = recall.query(SearchQuery("bigger fetch size lag"), org="mirror")
    assert "marker-pulled-edit" in found.hits[0].memory.body


def test_doctor_names_the_org_index_and_the_age_of_its_local_copy(tmp_path: Path) -> None:
    """`doctor` with [org] set (a folder index: no store needed): the name this repository
    publishes under, and, with the hook opted in, no copy → pull → fresh → an old copy."""
    root = make_repo(tmp_path / "api", "git@github.com:acme/api.git", {})
    env = {"LOCAL_RECALL_ORG_URI": str(tmp_path / "org"), "LOCAL_RECALL_ORG_HOOK": "true"}

    def org_checks() -> dict[str, tuple[str, str]]:
        done = run_cli(root, env, "doctor", "--json")
        assert done.returncode in (0, 1), done.stderr  # other checks may fail on this machine
        found = json.loads(done.stdout)
        return {c["name"]: (c["status"], c["detail"]) for c in found if "org" in c["name"]}

    before = org_checks()
    assert before["org index"][0] == "ok"
    assert "publishes as github.com--acme--api" in before["org index"][1]
    assert before["org in prompts"][0] == "warn"
    assert "no local copy" in before["org in prompts"][1]
    assert run_cli(root, env, "org", "pull").returncode == 0
    assert org_checks()["org in prompts"][0] == "ok"
    state = root / "local-recall" / "state" / "org-mirror" / "mirror.json"
    copied = json.loads(state.read_text())
    state.write_text(json.dumps({**copied, "pulled_at": copied["pulled_at"] - 5 * 86_400}))
    status, detail = org_checks()["org in prompts"]
    assert status == "warn" and "5 days old" in detail
