"""`consolidate`: what its thresholds catch, and how long it takes at 10k memories.

    .venv/bin/python benchmarks/consolidation.py [--memories 10000] [--data DIR] [--show N]

1. Labelled pairs (consolidation_pairs.py): precision and recall of the near-duplicate rule on
   paraphrases vs same-topic different facts, for the configured thresholds and a grid.
2. LoCoMo observations (`--data`, default $LOCOMO_DATA, else benchmarks/data/locomo-dev/ as
   `python benchmarks/locomo_data.py` writes it; `--skip locomo` without it): one store per
   conversation; how many pairs and groups the rule flags (`--show N` prints N of them to label).
3. Speed: `Recall.consolidation_plan()` on a store of N synthetic memories (benchmarks/scale.py's
   generator, embedded with MiniLM) with the labelled positives added; the index is built first
   (not measured), then the plan is timed (a no-op sync, reading the vectors, the neighbour
   search, rapidfuzz on the candidate pairs, grouping).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from consolidation_pairs import NEG, POS  # noqa: E402
from locomo_data import data_dir  # noqa: E402
from scale import synthetic, write_files  # noqa: E402

from local_recall.lifecycle.consolidation import Pair, Thresholds, is_near_duplicate  # noqa: E402
from local_recall.lifecycle.neighbours import candidate_pairs, text_ratio  # noqa: E402
from local_recall.recall import Recall  # noqa: E402
from local_recall.search.embedders.minilm import MiniLMEmbedder  # noqa: E402
from local_recall.settings import Settings  # noqa: E402

DEFAULT = Thresholds()


def pair_features(embedder: MiniLMEmbedder, pairs: list) -> list[Pair]:  # type: ignore[type-arg]
    out = []
    for (s1, b1), (s2, b2) in pairs:
        a, b = f"{s1}\n{b1}", f"{s2}\n{b2}"
        v = embedder.embed_documents([a, b])
        v = v / np.linalg.norm(v, axis=1, keepdims=True)
        out.append(Pair(s1, s2, float(v[0] @ v[1]), text_ratio(a, b)))
    return out


def labelled(embedder: MiniLMEmbedder) -> None:
    pos, neg = pair_features(embedder, POS), pair_features(embedder, NEG)
    print(f"labelled pairs: {len(pos)} paraphrases, {len(neg)} same-topic different facts")
    print("| cosine with text | text ratio | cosine alone | recall | precision | false pairs |")
    print("|---|---|---|---|---|---|")
    grid = [DEFAULT] + [
        Thresholds(c, r, 0.95) for c in (0.70, 0.75, 0.80, 0.88) for r in (60.0, 65.0, 70.0)
    ]
    for t in grid:
        tp = sum(is_near_duplicate(p, t) for p in pos)
        fp = sum(is_near_duplicate(p, t) for p in neg)
        precision = tp / (tp + fp) if tp + fp else 1.0
        mark = " (default)" if t == DEFAULT else ""
        print(
            f"| {t.cosine_with_text:.2f}{mark} | {t.text_ratio:.0f} | {t.cosine_alone:.2f} "
            f"| {tp / len(pos):.2f} ({tp}/{len(pos)}) | {precision:.2f} | {fp} |"
        )
    print("paraphrases cos/ratio:", " ".join(f"{p.cosine:.2f}/{p.text_ratio:.0f}" for p in pos))
    print("negatives   cos/ratio:", " ".join(f"{p.cosine:.2f}/{p.text_ratio:.0f}" for p in neg))


def locomo(embedder: MiniLMEmbedder, data: Path, show: int) -> None:
    total = flagged = 0
    shown = 0
    for path in sorted(data.glob("conv-*.json")):
        conv = json.loads(path.read_text())
        facts = [
            fact
            for key, value in conv.items()
            if key.endswith("_observation")
            for speaker in value.values()
            for fact, _ in speaker
        ]
        total += len(facts)
        vectors = embedder.embed_documents(facts)
        keys = [str(i) for i in range(len(facts))]
        texts = dict(zip(keys, facts, strict=True))
        pairs = [
            p
            for p in candidate_pairs(keys, vectors, texts, floor=DEFAULT.floor)
            if is_near_duplicate(p)
        ]
        flagged += len(pairs)
        print(f"{path.stem}: {len(facts)} observations, {len(pairs)} near-duplicate pairs")
        for p in pairs:
            if shown < show:
                shown += 1
                print(f"  {p.cosine:.2f}/{p.text_ratio:.0f}  {texts[p.a]!r}")
                print(f"             {texts[p.b]!r}")
    print(f"LoCoMo: {total} observations, {flagged} pairs flagged")


def speed(embedder: MiniLMEmbedder, size: int, workdir: Path) -> None:
    root = workdir / f"store-{size}"
    root.mkdir(parents=True, exist_ok=True)
    recall = Recall.open(
        settings=Settings(root=root, environ={}, embedder_factory=lambda _config: embedder)
    )
    recall.init()
    rows = synthetic(size - 2 * len(POS))
    start = rows[-1][4]
    for (s1, b1), (s2, b2) in POS:
        rows.append((s1, b1, [], "global", start))
        rows.append((s2, b2, [], "global", start))
    random.Random(3).shuffle(rows)
    if not any(recall.layout.episodic_dir.glob("*.md")):
        write_files(recall, rows)
    started = time.perf_counter()
    recall.sync_index()
    print(f"index built in {time.perf_counter() - started:.0f} s")
    runs = []
    for _ in range(3):
        started = time.perf_counter()
        plan = recall.consolidation_plan()
        runs.append(time.perf_counter() - started)
    subjects = {recall.get(p.keep).subject for p in plan} | {
        recall.get(i).subject for p in plan for i in p.remove
    }
    found = sum(1 for (s1, _), (s2, _) in POS if s1 in subjects and s2 in subjects)
    load = os.getloadavg()[0]
    print(
        f"| {size:,} memories | plan {min(runs):.1f} s (runs: "
        f"{', '.join(f'{r:.1f}' for r in runs)}) | {len(plan)} groups, "
        f"{sum(len(p.remove) for p in plan)} to remove | labelled paraphrases found "
        f"{found}/{len(POS)} | load {load:.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--show", type=int, default=0)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--skip", default="", help="comma list of: labelled, locomo, speed")
    args = parser.parse_args()
    skip = set(args.skip.split(","))
    data = None if "locomo" in skip else data_dir(args.data)  # stops early if it is missing
    embedder = MiniLMEmbedder()
    if "labelled" not in skip:
        labelled(embedder)
    if data is not None:
        locomo(embedder, data, args.show)
    if "speed" not in skip:
        workdir = args.workdir or Path(tempfile.mkdtemp(prefix="lr-consolidate-"))
        speed(embedder, args.memories, workdir)


if __name__ == "__main__":
    main()
