"""Where the prompt hook's *plausible* tier starts: a sweep over coding_bench.py's output.

    .venv/bin/python benchmarks/tier_fit.py OUT.json [--split tune] [--full 0.5]

OUT.json is `coding_bench.py --json` output: per prompt, the search's ten best (score, and
whether the memory answers it), no threshold. For each pointer cut-off (score) and number of
ranks that may point, it replays the tiers of context/prompt.py — full text at `--full`,
a pointer for the others among the best ranks at or over the cut-off, at most 3 — and reports
per size: reach (the answer shown in full or pointed at), full-text hits, and the share of
no-answer prompts (in-domain, generic) that got anything. Near-duplicates and the token budget
are not replayed (coding_bench.py measures them through the real code); the cut is chosen on
the `tune` split only and then measured on `held-out` with coding_bench.py. User-style prompts
(`--style user` of coding_bench.py) are held out: this sweep never reads them.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CUTS = tuple(round(0.10 + 0.025 * i, 3) for i in range(17))  # 0.10 .. 0.50
RANKS = (1, 2, 3, 5)
MAX_POINTERS = 3


def tiers(
    top: Sequence[Sequence[float]], full: float, cut: float, ranks: int
) -> tuple[bool, bool, bool]:
    """(answer in full, answer reached, anything shown) for one prompt's ten best."""
    shown = [(bool(a), s) for a, s in top if s >= full]
    pointed = [
        (bool(a), s) for rank, (a, s) in enumerate(top) if s < full and s >= cut and rank < ranks
    ]
    pointed = pointed[:MAX_POINTERS]
    hit = any(a for a, _ in shown)
    return hit, hit or any(a for a, _ in pointed), bool(shown or pointed)


def share(got: dict[str, list[tuple[bool, bool, bool]]], kind: str, index: int) -> float:
    values = got.get(kind, [])
    return round(sum(v[index] for v in values) / max(1, len(values)), 3)


def sweep(prompts: Sequence[dict[str, Any]], full: float) -> list[dict[str, Any]]:
    rows = []
    for ranks in RANKS:
        for cut in CUTS:
            got: dict[str, list[tuple[bool, bool, bool]]] = {}
            for p in prompts:
                got.setdefault(p["kind"], []).append(tiers(p["top"], full, cut, ranks))

            rows.append(
                {
                    "ranks": ranks,
                    "cut": cut,
                    "hit": share(got, "positive", 0),
                    "reach": share(got, "positive", 1),
                    "any_in_domain": share(got, "negative", 2),
                    "any_generic": share(got, "generic", 2),
                }
            )
    return rows


def fit_prompts(data: dict[str, Any], split: str) -> dict[str, list[dict[str, Any]]]:
    """Size → the prompts of `split` in one coding_bench.py output, commit style only: the
    user-style set is held out for every project, whatever `split` says."""
    by_size: dict[str, list[dict[str, Any]]] = {}
    for key, prompts in data["prompts"].items():
        label, size = key.split("/")
        if label != split or not all("top" in p for p in prompts):
            continue
        kept = [p for p in prompts if p.get("style", "commit") == "commit"]
        if kept:
            by_size.setdefault(size, []).extend(kept)
    return by_size


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("results", type=Path, nargs="+")
    parser.add_argument("--split", default="tune")
    parser.add_argument("--full", type=float, default=0.5)
    parser.add_argument("--ranks", type=int, default=0, help="only this many ranks")
    args = parser.parse_args(argv)
    by_size: dict[str, list[dict[str, Any]]] = {}
    for path in args.results:
        data = json.loads(path.read_text(encoding="utf-8"))
        for size, prompts in fit_prompts(data, args.split).items():
            by_size.setdefault(size, []).extend(prompts)
    for size, prompts in sorted(by_size.items(), key=lambda kv: int(kv[0])):
        print(f"\n{args.split}/{size}: {len(prompts)} prompts")
        print("ranks  cut    hit    reach  any:in-domain  any:generic")
        for row in sweep(prompts, args.full):
            if args.ranks and row["ranks"] != args.ranks:
                continue
            print(
                f"{row['ranks']:5d}  {row['cut']:.3f}  {row['hit']:.3f}  {row['reach']:.3f}  "
                f"{row['any_in_domain']:13.3f}  {row['any_generic']:11.3f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
