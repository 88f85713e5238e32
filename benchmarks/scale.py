"""Index build, no-op sync and search latency at 10k and 100k synthetic memories.

    .venv/bin/python benchmarks/scale.py [--sizes 10000,100000] [--minilm-up-to 10000]
                                         [--queries 60] [--saves 0] [--workdir DIR] [--json OUT]

Memories are written as real memory files (subject, two-sentence body, keywords, a scope) and
indexed and searched through `Recall`. Stores up to --minilm-up-to memories are embedded with
the real MiniLM model; larger ones with a hashing embedder of the same dimension (384), so the
LanceDB side (tables, full-text index, ANN index) is measured at full size without hours of
CPU embedding — the MiniLM share of a build is reported separately from its measured
throughput. Queries are always embedded by the real MiniLM, so search latency is end to end.
The first scan is timed without a catalog (a fresh clone: every file's header parsed; one left
in a reused --workdir is removed first), in wall and CPU seconds.
`--saves N`: N saves as MCP `save_memory` makes them (`unless_paraphrase`: each syncs the index
first, embedding the save before it), with the bytes each one wrote (the process's write
syscalls, /proc/self/io `wchar`: memory file, catalog, LanceDB, relevance cache) and the wall
and CPU milliseconds each took (p50 of all but the first). Use a fresh
--workdir: in a store that already holds them, the saves find their earlier copies and write
nothing.
Searches: `hybrid_lancedb`, a hybrid search in a process without the in-process keyword index
(a one-shot CLI with no daemon: full text from LanceDB); then each mode as `search` makes it in
the daemon and the MCP server, which keep that index (`hybrid`: full-text candidates from it;
`text`: LanceDB's BM25 still; `semantic`, `fuzzy`), and `prompt`: a prompt's hybrid search there.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import resource
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

from local_recall.memory.format import render_memory  # noqa: E402
from local_recall.memory.model import Memory, content_hash  # noqa: E402
from local_recall.recall import Recall, SearchQuery, Settings  # noqa: E402
from local_recall.search.embedders import MiniLMEmbedder  # noqa: E402
from local_recall.search.index.plan import embedded_text, passages  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import cpu_model, percentile  # noqa: E402

TOPICS = (
    "cache",
    "index",
    "daemon",
    "socket",
    "hook",
    "transcript",
    "config",
    "lock",
    "queue",
    "parser",
    "token",
    "budget",
    "embedding",
    "schema",
    "migration",
    "retry",
    "timeout",
    "logging",
    "redaction",
    "pipeline",
    "scheduler",
    "worker",
    "session",
    "snapshot",
)
VERBS = (
    "use",
    "avoid",
    "prefer",
    "retry",
    "batch",
    "debounce",
    "validate",
    "hash",
    "rotate",
    "compact",
    "stream",
    "rebuild",
    "pin",
    "split",
    "merge",
    "flush",
)
NOUNS = (
    "filelock",
    "sqlite",
    "lancedb",
    "watchdog",
    "onnxruntime",
    "pyarrow",
    "click",
    "yaml",
    "rapidfuzz",
    "numpy",
    "httpx",
    "subprocess",
    "asyncio",
    "threading",
    "tempfile",
    "json",
)
WHY = (
    "because concurrent writers race",
    "since the CI machine has two cores",
    "as the hook must answer within 300 ms",
    "because Windows paths differ",
    "since users edit files by hand",
    "because the API rate-limits bursts",
    "as large transcripts exceed memory",
    "because the model changed dimension",
)


class HashingEmbedder:
    """Documents: a deterministic hashed bag of words (fast, 384-d); queries: real MiniLM.
    Only for measuring the index at sizes MiniLM would take hours to embed here."""

    def __init__(self, minilm: MiniLMEmbedder) -> None:
        self._minilm = minilm

    name = "hashing"
    model = "bag-of-words-384"
    dim = 384

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                out[row, int.from_bytes(digest[:4], "little") % self.dim] += (
                    1.0 if digest[4] & 1 else -1.0
                )
        out[:, 0] += 0.01
        norms: npt.NDArray[np.float32] = np.linalg.norm(out, axis=1, keepdims=True)
        result: npt.NDArray[np.float32] = out / norms
        return result

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self._minilm.embed_query(text)


def synthetic(n: int, seed: int = 7) -> list[tuple[str, str, list[str], str, datetime]]:
    rng = random.Random(seed)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    out = []
    for i in range(n):
        topic, verb, noun, why = (
            rng.choice(TOPICS),
            rng.choice(VERBS),
            rng.choice(NOUNS),
            rng.choice(WHY),
        )
        ident = f"{topic}_{rng.randint(1, 999)}"
        subject = f"{verb.capitalize()} {noun} for the {topic} ({ident})"
        body = (
            f"We {verb} {noun} in the {topic} module {why}. "
            f"See {ident} in src/{topic}/{noun}.py, changed in PR {1000 + i}."
        )
        scope = rng.choice(("global", f"file:src/{topic}/", f"area:{topic}"))
        out.append((subject, body, [topic, noun, ident], scope, start + timedelta(minutes=i)))
    return out


def write_files(recall: Recall, rows: Sequence[tuple[str, str, list[str], str, datetime]]) -> None:
    """Benchmark fixture: real memory files, written without fsync (setup, not measured)."""
    folder = recall.layout.episodic_dir
    folder.mkdir(parents=True, exist_ok=True)
    for i, (subject, body, keywords, scope, when) in enumerate(rows):
        memory_id = f"00000000-0000-4000-8000-{i:012d}"
        memory = Memory(
            id=memory_id,
            subject=subject,
            body=body,
            keywords=tuple(keywords),
            applies_to=scope,
            occurred_at=when,
            content_hash=content_hash(body),
            source="bench",
        )
        (folder / f"{memory_id}.md").write_text(render_memory(memory), encoding="utf-8")


def written_bytes() -> int:
    """What this process has written so far (write syscalls; Linux only)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise RuntimeError("no wchar in /proc/self/io")


def measure_saves(recall: Recall, count: int) -> dict[str, Any]:
    rows = synthetic(count, seed=13)
    times, cpus, sizes = [], [], []
    for n, (subject, body, keywords, scope, _when) in enumerate(rows):
        before, started, cpu = written_bytes(), time.perf_counter(), time.process_time()
        recall.save(f"{subject} #{n}", f"{body} Save {n}.", keywords=keywords, scope=scope,
                    source="mcp", reviewed=False, unless_paraphrase=True)  # fmt: skip
        cpus.append(1000 * (time.process_time() - cpu))
        times.append(1000 * (time.perf_counter() - started))
        sizes.append(written_bytes() - before)
    later = sizes[1:] or sizes  # the first save embeds nothing before it
    return {
        "save_ms_p50": round(percentile(times[1:] or times, 0.5), 1),
        # this process's CPU (the `git` child that names the commit is not counted): what a
        # loaded machine changes least
        "save_cpu_ms_p50": round(percentile(cpus[1:] or cpus, 0.5), 1),
        "save_bytes_written_median": int(statistics.median(later)),
        "save_bytes_written_max": max(later),
    }


def measure(
    size: int,
    minilm: MiniLMEmbedder,
    use_minilm: bool,
    queries: int,
    workdir: Path,
    saves: int = 0,
) -> dict[str, Any]:
    root = workdir / f"store-{size}"
    root.mkdir(parents=True, exist_ok=True)
    embedder: Any = minilm if use_minilm else HashingEmbedder(minilm)
    recall = Recall.open(
        settings=Settings(root=root, environ={}, embedder_factory=lambda _config: embedder)
    )
    recall.init()
    rows = synthetic(size)
    result: dict[str, Any] = {
        "memories": size,
        "embedder": "minilm" if use_minilm else "hashing (docs) + minilm (queries)",
    }
    if not any(recall.layout.episodic_dir.glob("*.md")):
        started = time.perf_counter()
        write_files(recall, rows)
        result["write_files_s"] = round(time.perf_counter() - started, 1)
    for catalog in recall.layout.state_dir.glob("catalog-*.*"):
        catalog.unlink()  # a first scan is one without a catalog, in a reused --workdir too
    started, cpu = time.perf_counter(), time.process_time()
    recall.scan()
    result["first_scan_s"] = round(time.perf_counter() - started, 2)
    result["first_scan_cpu_s"] = round(time.process_time() - cpu, 2)
    started = time.perf_counter()
    report = recall.sync_index(rebuild=True)
    result["build_s"] = round(time.perf_counter() - started, 1)
    result["vectors"] = report.embedded
    texts = [embedded_text(m) for m in recall.scan().memories[:500]]
    cut = [p for m in recall.scan().memories[:500] for p in passages(m)]
    result["texts_per_memory"] = round((len(texts) + len(cut)) / len(texts), 2)
    result["has_ann"] = recall.searcher.index.has_ann()
    noop = []
    for _ in range(5):
        started = time.perf_counter()
        again = recall.sync_index()
        noop.append(time.perf_counter() - started)
        assert again.embedded == again.updated == again.removed == 0, again
    result["noop_sync_s_median"] = round(statistics.median(noop), 3)
    if saves:
        result.update(measure_saves(recall, saves))
    rng = random.Random(11)
    asks = [
        f"why do we {rng.choice(VERBS)} {rng.choice(NOUNS)} in the {rng.choice(TOPICS)}"
        for _ in range(queries)
    ]
    asks[::5] = [f"{rng.choice(TOPICS)}_{rng.randint(1, 999)}" for _ in asks[::5]]  # identifiers
    recall.search(asks[0], sync=False)  # warm: fuzzy vocabulary, table handles

    def timed(name: str, **fields: Any) -> None:
        times = []
        for ask in asks:
            started = time.perf_counter()
            recall.search(SearchQuery(ask, limit=10, **fields), sync=False)
            times.append(1000 * (time.perf_counter() - started))
        result[f"{name}_ms_p50"] = round(percentile(times, 0.5), 1)
        result[f"{name}_ms_p95"] = round(percentile(times, 0.95), 1)

    # A process without the keyword index (a one-shot CLI with no daemon): LanceDB's full text.
    timed("hybrid_lancedb", mode="hybrid")
    # The daemon and the MCP server keep the keyword index: `search`'s hybrid and a prompt's
    # take their full-text candidates from it; `--mode text` still asks LanceDB.
    # Code before the keyword index (a before run) has neither: its prompt's search is a hybrid one.
    prompt: dict[str, Any] = (
        {"prompt": True} if "prompt" in SearchQuery.__dataclass_fields__ else {}
    )
    if hasattr(recall.searcher, "keep_keywords"):
        recall.searcher.keep_keywords()
    recall.search(SearchQuery(asks[0], limit=10, **prompt), sync=False)
    for mode in ("hybrid", "semantic", "text", "fuzzy"):
        timed(mode, mode=mode)
    timed("prompt", **prompt)
    started = time.perf_counter()
    recall.search(asks[1], sync=True)
    result["search_with_noop_sync_ms"] = round(1000 * (time.perf_counter() - started), 1)
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return result


def minilm_throughput(minilm: MiniLMEmbedder) -> float:
    rows = synthetic(512, seed=3)
    texts = [f"{s}\n{b}" for s, b, *_ in rows]
    minilm.embed_documents(texts[:32])
    started = time.perf_counter()
    minilm.embed_documents(texts)
    return len(texts) / (time.perf_counter() - started)


def machine() -> dict[str, Any]:
    cpu = cpu_model("?")
    try:
        ram = int(Path("/proc/meminfo").read_text().split()[1]) // (1024 * 1024)
    except (OSError, ValueError, IndexError):
        ram = 0
    import lancedb

    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "ram_gb": ram,
        "python": platform.python_version(),
        "lancedb": lancedb.__version__,
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--minilm-up-to", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--saves", type=int, default=0)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="lr-scale-"))
    minilm = MiniLMEmbedder()
    minilm.load()
    results: dict[str, Any] = {
        "machine": machine(),
        "minilm_texts_per_s": round(minilm_throughput(minilm), 1),
        "runs": [],
    }
    print(
        json.dumps(results["machine"]),
        f"MiniLM {results['minilm_texts_per_s']} texts/s",
        flush=True,
    )
    for size in (int(s) for s in args.sizes.split(",")):
        run = measure(
            size, minilm, size <= args.minilm_up_to, args.queries, workdir, saves=args.saves
        )
        results["runs"].append(run)
        print(json.dumps(run), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
