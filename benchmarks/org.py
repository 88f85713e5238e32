"""The org index: publish throughput, incremental re-publish, org search latency and cold start,
across 10 and 100 repositories holding 10k and 100k memories in total, on a local folder and on
a local S3-compatible server (moto_server, started here).

    .venv/bin/python benchmarks/org.py [--repos 10,100] [--rows 10000,100000]
                                       [--backends local,s3] [--queries 30] [--json OUT]

Memories are synthetic (subject, two-sentence body, keywords) and published straight through
`local_recall.org.publish.publish` (what `local-recall publish` runs, minus reading files). Their
vectors come from a deterministic hashed bag of words of the model's dimension (384), NOT from
MiniLM: 100k memories would take ~6 min of MiniLM on an idle 2-core machine (and far more under
load), and the store side is what is measured here. Real-model publish throughput is
`--minilm N` (N memories, one repository, embedded by MiniLM). Queries use the same hashing
embedder, so each search costs what the store costs (a MiniLM query adds ~5 ms).

Each search asks every dataset with `OrgSearcher` (one thread per dataset, up to 16), exactly as
`search --org` does; "cold" is the first search of a new OrgSearcher in a process that has
already imported lancedb (its import is reported on its own line), "warm" the next ones.
`--mirror` also measures `org pull` and a search of the merged local copy (the hook's opt-in).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from local_recall.memory.model import Memory, content_hash  # noqa: E402
from local_recall.org.mirror import Mirror  # noqa: E402
from local_recall.org.plan import RepoIdentity, storage_options  # noqa: E402
from local_recall.org.publish import Target, publish  # noqa: E402
from local_recall.org.search import OrgSearcher  # noqa: E402
from local_recall.search.index.shared import SharedStore  # noqa: E402

FINGERPRINT = "hashing:bag-of-words-384:384"

WORDS = [
    "cache", "index", "daemon", "socket", "hook", "transcript", "config", "lock", "queue",
    "parser", "token", "budget", "embedding", "schema", "migration", "retry", "timeout",
    "consumer", "producer", "offset", "partition", "rebalance", "billing", "invoice", "ledger",
    "deploy", "rollback", "canary", "latency", "throughput", "memory", "leak", "thread",
    "deadlock", "session", "cookie", "oauth", "certificate", "proxy", "gateway", "webhook",
]  # fmt: skip
VERBS = ["fixed", "broke", "slowed", "replaced", "raised", "lowered", "split", "merged", "cached"]


class HashingEmbedder:
    """A deterministic hashed bag of words, 384-d, unit rows (see the module docstring)."""

    name = "hashing"
    model = "bag-of-words-384"
    dim = 384

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                slot = int.from_bytes(digest[:4], "little") % self.dim
                out[row, slot] += 1.0 if digest[4] & 1 else -1.0
        out[:, 0] += 0.01
        norms: npt.NDArray[np.float32] = np.linalg.norm(out, axis=1, keepdims=True)
        return np.asarray(out / norms, dtype=np.float32)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self.embed_documents([text])[0]


def synthetic(repo: int, count: int, seed: int = 11) -> list[Memory]:
    rng = random.Random(seed * 1_000_003 + repo)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    found = []
    for i in range(count):
        a, b, c = rng.sample(WORDS, 3)
        verb = rng.choice(VERBS)
        subject = f"{a} {verb} by {b} in service{repo} ({i})"
        body = (
            f"The {a} of service{repo} {verb} when the {b} met the {c}; we changed the {c} "
            f"settings and it held. Look at the {b} first next time (note {repo}-{i})."
        )
        found.append(
            Memory(
                id=f"{repo:08x}-0000-4000-8000-{i:012x}",
                subject=subject,
                body=body,
                keywords=(a, b, c),
                applies_to="global",
                occurred_at=start + timedelta(minutes=i),
                content_hash=content_hash(body),
            )
        )
    return found


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def run_config(
    uri: str, env: dict[str, str], repos: int, rows: int, queries: int, *, mirror_up_to: int
) -> dict[str, Any]:
    embedder = HashingEmbedder()
    per_repo = rows // repos
    publish_options = storage_options(uri, env, timeout=60.0)
    target = Target(uri, publish_options)
    memories = {r: synthetic(r, per_repo) for r in range(repos)}
    started = time.perf_counter()
    cpu = time.process_time()
    for r in range(repos):
        identity = RepoIdentity(f"bench--repo{r:04d}", f"git@example.com:b/r{r}.git", "main", "c")
        publish(target, identity, memories[r], embedder, ann_threshold=5_000)
    publish_s = time.perf_counter() - started
    publish_cpu = time.process_time() - cpu
    identity0 = RepoIdentity("bench--repo0000", "git@example.com:b/r0.git", "main", "c")
    t = time.perf_counter()
    noop = publish(target, identity0, memories[0], embedder, ann_threshold=5_000)
    noop_s = time.perf_counter() - t
    assert not noop.wrote
    changed = list(memories[0])
    for i in range(0, len(changed), 100):  # 1 % of one repository edited
        m = changed[i]
        body = m.body + " Edited."
        changed[i] = Memory(**{**_fields(m), "body": body, "content_hash": content_hash(body)})
    t = time.perf_counter()
    incremental = publish(target, identity0, changed, embedder, ann_threshold=5_000)
    incremental_s = time.perf_counter() - t
    search_options = storage_options(uri, env, timeout=120.0)
    rng = random.Random(5)
    texts = [
        f"{rng.choice(WORDS)} {rng.choice(VERBS)} {rng.choice(WORDS)} {rng.choice(WORDS)}"
        for _ in range(queries + 1)
    ]
    searcher = OrgSearcher(Target(uri, search_options), own=None, timeout=120.0)
    t = time.perf_counter()
    first = searcher.search(
        texts[0], embedder.embed_query(texts[0]), embedder=FINGERPRINT, depth=50
    )
    cold_s = time.perf_counter() - t
    answered = [first.answered]
    warm = []
    cpu = time.process_time()
    for text in texts[1:]:
        t = time.perf_counter()
        found = searcher.search(text, embedder.embed_query(text), embedder=FINGERPRINT, depth=50)
        warm.append(time.perf_counter() - t)
        answered.append(found.answered)
    search_cpu = (time.process_time() - cpu) / len(warm)
    result = {
        "repos": repos,
        "rows": rows,
        "publish_s": round(publish_s, 2),
        "publish_cpu_s": round(publish_cpu, 2),
        "publish_rows_per_s": round(rows / publish_s),
        "noop_republish_one_repo_s": round(noop_s, 3),
        "incremental_1pct_one_repo_s": round(incremental_s, 3),
        "incremental_rows": incremental.upserted,
        "cold_first_search_s": round(cold_s, 3),
        "search_p50_ms": round(1000 * statistics.median(warm), 1),
        "search_p95_ms": round(1000 * percentile(warm, 0.95), 1),
        "search_cpu_ms": round(1000 * search_cpu, 1),
        "datasets_answered_min": min(answered),  # of `repos`, within the 120 s deadline
    }
    if rows > mirror_up_to:
        return result
    mirror = Mirror(Path(tempfile.mkdtemp(prefix="org-mirror-")), FINGERPRINT, 384, own=None)
    source = SharedStore(uri, publish_options)
    t = time.perf_counter()
    pulled = mirror.pull(source, uri=uri, ann_threshold=5_000, now=time.time())
    pull_s = time.perf_counter() - t
    assert pulled.datasets == repos, pulled.notes
    t = time.perf_counter()
    assert mirror.pull(source, uri=uri, ann_threshold=5_000, now=time.time()).datasets == 0
    repull_s = time.perf_counter() - t
    mirror_times = []
    cpu = time.process_time()
    for text in texts[1:]:
        t = time.perf_counter()
        found = mirror.search(text, embedder.embed_query(text), embedder=FINGERPRINT, depth=20)
        mirror_times.append(time.perf_counter() - t)
        assert found.hits
    mirror_cpu = (time.process_time() - cpu) / len(mirror_times)
    return {
        **result,
        "pull_s": round(pull_s, 2),
        "noop_pull_s": round(repull_s, 3),
        "mirror_search_p50_ms": round(1000 * statistics.median(mirror_times), 1),
        "mirror_search_p95_ms": round(1000 * percentile(mirror_times, 0.95), 1),
        "mirror_search_cpu_ms": round(1000 * mirror_cpu, 1),
    }


def _fields(memory: Memory) -> dict[str, Any]:
    return {name: getattr(memory, name) for name in Memory.__dataclass_fields__}


def minilm_publish(uri: str, env: dict[str, str], count: int) -> dict[str, Any]:
    from local_recall.search.embedders import make_embedder

    embedder = make_embedder("minilm")
    embedder.embed_documents(["warm up"])
    target = Target(uri, storage_options(uri, env, timeout=60.0))
    identity = RepoIdentity("bench--minilm", "git@example.com:b/m.git", "main", "c")
    t = time.perf_counter()
    report = publish(target, identity, synthetic(999, count), embedder, ann_threshold=5_000)
    seconds = time.perf_counter() - t
    return {
        "memories": count,
        "seconds": round(seconds, 2),
        "per_s": round(count / seconds, 1),
        "upserted": report.upserted,
    }


def main() -> None:  # noqa: PLR0912 (one loop per axis of the table)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", default="10,100")
    parser.add_argument("--rows", default="10000,100000")
    parser.add_argument("--backends", default="local,s3")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument(
        "--mirror-up-to", type=int, default=100_000, help="measure org pull up to this many rows"
    )
    parser.add_argument("--minilm", type=int, default=0, help="also publish N memories with MiniLM")
    parser.add_argument("--skip", default="", help="backend:rows:repos,... not to run")
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="org-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    import lancedb  # noqa: F401

    import_s = time.perf_counter() - t
    results: dict[str, Any] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "load_before": os.getloadavg(),
        "lancedb_import_s": round(import_s, 2),
        "runs": [],
    }
    backends = args.backends.split(",")
    s3 = None
    context = None
    if "s3" in backends:
        from tests.s3_server import running_s3

        context = running_s3(workdir / "moto.log")
        s3 = context.__enter__()
    try:
        number = 0
        for backend in backends:
            for rows in [int(x) for x in args.rows.split(",")]:
                for repos in [int(x) for x in args.repos.split(",")]:
                    if f"{backend}:{rows}:{repos}" in args.skip.split(","):
                        continue
                    number += 1
                    if backend == "s3":
                        assert s3 is not None
                        bucket = f"org-bench-{number}"
                        s3.create_bucket(bucket)
                        uri, env = f"s3://{bucket}/recall", s3.env()
                    else:
                        uri, env = str(workdir / f"local-{number}"), {}
                    result = run_config(
                        uri, env, repos, rows, args.queries, mirror_up_to=args.mirror_up_to
                    )
                    result["backend"] = backend
                    result["load"] = round(os.getloadavg()[0], 1)
                    print(json.dumps(result), flush=True)
                    results["runs"].append(result)
        if args.minilm:
            for backend in backends:
                if backend == "s3":
                    assert s3 is not None
                    s3.create_bucket("org-bench-minilm")
                    uri, env = "s3://org-bench-minilm/recall", s3.env()
                else:
                    uri, env = str(workdir / "local-minilm"), {}
                found = {"backend": backend, **minilm_publish(uri, env, args.minilm)}
                print(json.dumps(found), flush=True)
                results.setdefault("minilm", []).append(found)
    finally:
        if context is not None:
            context.__exit__(None, None, None)
    results["load_after"] = os.getloadavg()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
