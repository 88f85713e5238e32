"""The searches learning_sim.py replays: every coding_bench.py prompt's hits, once, as JSON.

    .venv/bin/python benchmarks/learning_hits.py --repos $CODING_BENCH_REPOS \
        --workdir DIR --sizes 25,500 --out HITS.json

A prompt's hits are the hook's search (coding_bench.decide: `Recall.query` with the hook's
limit), kept down to LEARN_FLOOR under the hook's floor so that a calibrated (lower) cut-off
has the hits it would see; the decision itself (the tiers) is replayed by learning_sim.py, which
needs neither the index nor the model.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import coding_bench  # noqa: E402
import coding_data  # noqa: E402

# How far under the hook's cut-offs the hits are kept: calibration moves them by at most 0.1
# (local_recall/learning/calibration.py).
LEARN_FLOOR = 0.1


def collect(repos: Path | None, workdir: Path, sizes: list[int]) -> dict[str, Any]:
    embedder = coding_data.CachingEmbedder(workdir / "embeddings.npz")
    out: dict[str, Any] = {}
    for project in coding_data.load_projects():
        padding = coding_data.project_padding(project, repos, workdir / "history")
        for size in sizes:
            if size > len(project.memories) and padding is None:
                continue
            items = coding_data.store_items(project, padding, size)
            root = workdir / "stores" / f"{project.name}-{size}"
            recall, ids = coding_data.build_store(root, project.name, items, embedder)
            base = coding_bench.hook_settings(recall)
            low = base._replace(
                prompt_min_score=max(0.0, base.prompt_min_score - LEARN_FLOOR),
                prompt_pointer_min_score=max(0.0, base.prompt_pointer_min_score - LEARN_FLOOR),
            )
            rows = []
            for prompt in coding_bench.prompts_of(project):
                answers = sorted(ids[a] for a in prompt.answers if a in ids)
                if prompt.kind == "positive" and not answers:
                    continue
                decided = coding_bench.decide(recall, prompt.text, low)
                rows.append(
                    {
                        "kind": prompt.kind,
                        "text": prompt.text,
                        "answers": answers,
                        "notes": [note._asdict() for note in decided.notes],
                    }
                )
            out[f"{project.name}/{size}"] = {
                "split": project.split,
                "settings": base._asdict(),
                "prompts": rows,
            }
            print(f"{project.name}-{size}: {len(rows)} prompts", flush=True)
        embedder.save()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    repos = os.environ.get("CODING_BENCH_REPOS")
    parser.add_argument("--repos", type=Path, default=Path(repos) if repos else None)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/local-recall-coding-bench"))
    parser.add_argument("--sizes", default="25,500")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    data = collect(args.repos, args.workdir.absolute(), sizes)
    args.out.write_text(json.dumps(data) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
