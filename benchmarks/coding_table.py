"""The coding benchmark's README table from one or more `coding_bench.py --json` files.

    .venv/bin/python benchmarks/coding_table.py RUN.json [RUN2.json ...] [--label main]

Runs of different projects (e.g. one per held-out project) are merged prompt by prompt, so the
figures are over every prompt of a split and size, whichever run measured it.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def merged(paths: Sequence[Path]) -> dict[str, list[dict[str, Any]]]:
    rows: dict[str, list[dict[str, Any]]] = {}
    for path in paths:
        for key, prompts in json.loads(path.read_text(encoding="utf-8"))["prompts"].items():
            rows.setdefault(key, []).extend(prompts)
    return rows


def figures(prompts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    pos = [p for p in prompts if p["kind"] == "positive"]
    ranks = [p["answer_rank"] for p in pos]
    first = [p for p in pos if p["answer_rank"] == 1]
    injected = [p for p in prompts if p["injected"]]

    def share(kind: str) -> float:
        got = [bool(p["injected"]) for p in prompts if p["kind"] == kind]
        return sum(got) / max(1, len(got))

    return {
        "prompts": f"{len(pos)}/{sum(p['kind'] == 'negative' for p in prompts)}/"
        f"{sum(p['kind'] == 'generic' for p in prompts)}",
        "R@5": sum(r is not None and r <= 5 for r in ranks) / max(1, len(pos)),
        "MRR@10": sum(1 / r for r in ranks if r) / max(1, len(pos)),
        "hit": sum(p["hit"] for p in pos) / max(1, len(pos)),
        "hit_first": sum(p["hit"] for p in first) / max(1, len(first)),
        "generic": share("generic"),
        "in_domain": share("negative"),
        "tokens": statistics.fmean(p["tokens"] for p in injected) if injected else 0.0,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--label", default="")
    args = parser.parse_args(argv)
    print(
        "| split / memories | run | prompts (pos/in-domain/generic) | R@5 | MRR@10 | hit | hit "
        "when ranked first | injected: generic | injected: in-domain | tokens per injected prompt |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key, prompts in sorted(
        merged(args.runs).items(), key=lambda kv: (kv[0].split("/")[0], int(kv[0].split("/")[1]))
    ):
        f = figures(prompts)
        print(
            f"| {key} | {args.label} | {f['prompts']} | {f['R@5']:.3f} | {f['MRR@10']:.3f} | "
            f"{f['hit']:.3f} | {f['hit_first']:.3f} | {f['generic']:.3f} | {f['in_domain']:.3f} | "
            f"{f['tokens']:.0f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
