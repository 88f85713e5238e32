"""One vector per memory to gather a prompt's vector candidates: measured, not shipped
(benchmarks/README.md, "A prompt's search without LanceDB", step 3b).

Main's exact search (`VectorCache.nearest`) takes the dot product of the query with every stored
row (a memory's whole-text vector and its passages') and keeps each memory's best. The variant
takes the product with each memory's whole-text row only, keeps `factor` x the wanted number of
memories, and scores all rows of those exactly (one gather, one product, `maximum.reduceat`).

    .venv/bin/python benchmarks/one_vector.py cpu STATE_DIR [--limit 50] [--factor 4]
    .venv/bin/python benchmarks/one_vector.py run --factor 4 -- coding_bench.py --split all ...

`cpu`: this thread's CPU per search, main's and the variant's interleaved over 300 queries near
stored rows, on the vector cache of a store's `local-recall/state` (e.g. one coding_bench.py
built), and how many of main's top 10 the variant keeps. `run`: another benchmark of this
folder with `VectorCache.nearest` replaced by the variant (`--factor 0`: main's, for the same
run without it). Results: benchmarks/README.md, "A prompt's search without LanceDB".
"""

from __future__ import annotations

import argparse
import runpy
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from local_recall.search import vector_cache
from local_recall.search.vector_cache import VectorCache, read_header, read_vector_cache

HERE = Path(__file__).resolve().parent


class OneVector:
    """A cache's rows grouped by memory: the whole-text row (a memory's first) of each, and
    every row of each as one flat index (memory i's rows: `flat[starts[i]:][:counts[i]]`)."""

    def __init__(self, cache: VectorCache) -> None:
        parts = [p.matrix if p.live is None else p.matrix[p.live] for p in cache._parts]
        self.rows = np.ascontiguousarray(np.concatenate(parts).astype(np.float32))
        order: dict[str, list[int]] = {}
        for i, key in enumerate(cache.keys):
            order.setdefault(key, []).append(i)
        self.keys = list(order)
        self.whole = np.ascontiguousarray(self.rows[[order[k][0] for k in self.keys]])
        self.counts = np.array([len(order[k]) for k in self.keys])
        self.starts = np.concatenate([[0], np.cumsum(self.counts)[:-1]])
        self.flat = np.array([i for k in self.keys for i in order[k]])

    def nearest(self, query: Any, limit: int, factor: int) -> dict[str, float]:
        q = np.asarray(query, dtype=np.float32)
        scores = np.einsum("ij,j->i", self.whole, q)
        take = min(len(self.keys), max(1, limit) * factor)
        everyone = take >= len(self.keys)
        top = np.arange(take) if everyone else np.argpartition(-scores, take - 1)[:take]
        counts = self.counts[top]
        offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
        at = np.repeat(self.starts[top] - offsets, counts) + np.arange(int(counts.sum()))
        best = np.maximum.reduceat(np.einsum("ij,j->i", self.rows[self.flat[at]], q), offsets)
        picked = np.argsort(-best)[:limit]
        return {self.keys[int(top[i])]: float(best[i]) for i in picked}


def cpu(state: Path, limit: int, factor: int) -> None:
    header = read_header(state)
    cache = read_vector_cache(state, embedder=header.embedder) if header else None
    if cache is None:
        sys.exit(f"no vector cache in {state}")
    variant = OneVector(cache)
    rng = np.random.default_rng(0)
    queries = variant.rows[rng.choice(len(variant.rows), 300)]
    queries = queries + rng.normal(0, 0.02, queries.shape).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    main_cpu = variant_cpu = 0.0
    kept = 0
    for q in queries:
        started = time.thread_time()
        every = cache.nearest(q, limit)
        middle = time.thread_time()
        one = variant.nearest(q, limit, factor)
        variant_cpu += time.thread_time() - middle
        main_cpu += middle - started
        kept += len(set(list(every)[:10]) & set(list(one)[:10]))
    n = len(queries)
    print(
        f"{len(variant.rows)} rows, {len(variant.keys)} memories: every row "
        f"{1000 * main_cpu / n:.2f} ms, one per memory + its rows {1000 * variant_cpu / n:.2f} "
        f"ms CPU a search; main's top 10 kept {kept / n / 10:.3f}"
    )


def run(factor: int, script: list[str]) -> None:
    if factor:
        held: dict[int, tuple[VectorCache, OneVector]] = {}

        def nearest(self: VectorCache, query: Any, limit: int, *, kind: str | None = None) -> Any:
            if kind is not None:  # not what a prompt's search asks; main's answer
                return original(self, query, limit, kind=kind)
            got = held.get(id(self))
            if got is None or got[0] is not self:
                got = held[id(self)] = (self, OneVector(self))
            return got[1].nearest(query, limit, factor)

        original = VectorCache.nearest
        vector_cache.VectorCache.nearest = nearest  # type: ignore[method-assign]
    path = HERE / script[0]
    sys.argv = [str(path), *script[1:]]
    sys.path.insert(0, str(HERE.parent))
    runpy.run_path(str(path), run_name="__main__")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    commands = parser.add_subparsers(dest="command", required=True)
    measure = commands.add_parser("cpu")
    measure.add_argument("state", type=Path)
    measure.add_argument("--limit", type=int, default=50)
    measure.add_argument("--factor", type=int, default=4)
    other = commands.add_parser("run")
    other.add_argument("--factor", type=int, default=4)
    other.add_argument("script", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.command == "cpu":
        cpu(args.state, args.limit, args.factor)
    else:
        script = [a for a in args.script if a != "--"]
        run(args.factor, script)


if __name__ == "__main__":
    main()
