"""Does learning from sessions help? A simulation on the coding benchmark's searches.

    .venv/bin/python benchmarks/learning_hits.py --repos $CODING_BENCH_REPOS --workdir DIR \
        --sizes 25,500,5000 --out HITS.json            # the searches, once (index + model)
    .venv/bin/python benchmarks/learning_sim.py HITS.json [...] [--sessions 60] [--every 10] \
        [--noise 0.1] [--seeds 5] [--no-relied] [--json OUT]

Per project and store size, its prompts (coding_bench.py's: answered, in-domain no-answer,
generic) are split in two by a hash of their text: the *sessions* half is what a team works
on, the *held-out* half is only measured. A session is four prompts of the sessions half (two
answered, one in-domain no-answer, one generic; drawn with a seeded generator), decided with
what has been learned so far (context/prompt.py `select` with the calibrated tiers, hits
ordered with their track record), in one session record (`Shown`). A scripted agent then does
what the record of outcomes (learning/outcomes.py) says sessions do: it follows a pointer to a
memory that answers the prompt, relies on full text that answers it, and — noise — follows or
relies on one that does not with probability --noise; everything else shown is ignored.
`--no-relied`: no extraction pass, every memory shown in full is recorded `ignored`.

After every --every sessions the held-out prompts are decided, each as a new session, with
what was learned by then: reach (the answer in full or as a pointer), hit (in full), false full
text and false anything on no-answer prompts, and tokens (characters / 4 of the injected block,
mean over the prompts of the kind). Policies: static (today's cut-offs, no track record),
calibrate, track (record), both; each learns from its own sessions (what is shown decides what
can be followed). Means over projects of the split and --seeds seeds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from local_recall.context.notes import CHARS_PER_TOKEN, Note  # noqa: E402
from local_recall.context.prompt import Tiers, render_selection, select  # noqa: E402
from local_recall.learning.calibration import calibrate  # noqa: E402
from local_recall.learning.outcomes import Outcome  # noqa: E402
from local_recall.learning.shown import Shown as ShownBefore  # noqa: E402
from local_recall.learning.track import track_factors, tracks  # noqa: E402

POLICIES = ("static", "calibrate", "track", "both")
# --track-mode: "both" as the product does; "demote"/"promote": a record may only lower / only
# raise a memory's rank (variants tried)
OPTIONS = {"track_mode": "both"}
START = datetime(2026, 1, 1, tzinfo=UTC)  # session n is n days later


class Prompt(NamedTuple):
    kind: str  # positive / negative / generic
    answers: frozenset[str]
    notes: tuple[Note, ...]


class Shown(NamedTuple):
    full: frozenset[str]
    pointers: frozenset[str]
    tokens: int


def half(text: str) -> str:
    return "held-out" if hashlib.sha256(text.encode()).digest()[0] % 2 else "sessions"


def load(paths: Sequence[Path]) -> dict[str, dict[str, Any]]:
    stores: dict[str, dict[str, Any]] = {}
    for path in paths:
        for key, store in json.loads(path.read_text()).items():
            parts: dict[str, list[Prompt]] = {"sessions": [], "held-out": []}
            for row in store["prompts"]:
                notes = tuple(Note(**fields) for fields in row["notes"])
                prompt = Prompt(row["kind"], frozenset(row["answers"]), notes)
                parts[half(row["text"])].append(prompt)
            s = store["settings"]
            tiers = Tiers(
                s["prompt_tokens"],
                s["prompt_min_score"],
                s["prompt_pointers"],
                s["prompt_pointer_min_score"],
                s["prompt_full_tokens"],
            )
            stores[key] = {"split": store["split"], "tiers": tiers, **parts}
    return stores


def decide(prompt: Prompt, tiers: Tiers, factors: dict[str, float], seen: ShownBefore) -> Shown:
    notes = [n._replace(track=factors.get(n.id, 1.0)) for n in prompt.notes]
    selection = select(notes, tiers, seen)
    text = render_selection(selection, budget_tokens=tiers.budget_tokens)
    if not text:
        return Shown(frozenset(), frozenset(), 0)
    return Shown(
        frozenset(n.id for n in selection.shown),
        frozenset(n.id for n in selection.pointers),
        len(text) // CHARS_PER_TOKEN,
    )


def learned(
    policy: str, base: Tiers, outcomes: list[Outcome], now: datetime
) -> tuple[Tiers, dict[str, float]]:
    tiers, factors = base, {}
    if policy in ("calibrate", "both"):
        got = calibrate(
            outcomes, min_score=base.min_score, pointer_min_score=base.pointer_min_score, now=now
        )
        tiers = base._replace(min_score=got.min_score, pointer_min_score=got.pointer_min_score)
    if policy in ("track", "both"):
        factors = track_factors(tracks(outcomes, now))
        if OPTIONS["track_mode"] == "demote":
            factors = {m: min(1.0, f) for m, f in factors.items()}
        elif OPTIONS["track_mode"] == "promote":
            factors = {m: max(1.0, f) for m, f in factors.items()}
    return tiers, factors


def session(
    prompts: Sequence[Prompt],
    tiers: Tiers,
    factors: dict[str, float],
    n: int,
    rng: random.Random,
    noise: float,
    relied: bool,
) -> list[Outcome]:
    """One session's prompts decided in order, and the scripted agent's outcomes."""
    at = (START + timedelta(days=n)).strftime("%Y-%m-%dT%H:%M:%SZ")
    name = hashlib.sha256(f"session {n}".encode()).hexdigest()[:32]
    seen_full: set[str] = set()
    seen_pointed: set[str] = set()
    first_tier: dict[str, str] = {}
    use: dict[str, str] = {}
    rank = {"ignored": 0, "followed": 1, "relied": 2}
    for prompt in prompts:
        shown = decide(
            prompt, tiers, factors, ShownBefore(frozenset(seen_full), frozenset(seen_pointed))
        )
        # sorted: a set's order changes with the process's hash seed, and with it which memory
        # each draw of the noise goes to
        for memory, tier in [(m, "full") for m in sorted(shown.full)] + [
            (m, "pointer") for m in sorted(shown.pointers)
        ]:
            first_tier.setdefault(memory, tier)
            answers = memory in prompt.answers or rng.random() < noise
            if tier == "pointer":
                got = "followed" if answers else "ignored"
            else:
                got = "relied" if answers and relied else "ignored"
            if rank[got] > rank[use.get(memory, "ignored")] or memory not in use:
                use[memory] = got
        seen_full |= shown.full
        seen_pointed |= shown.pointers
    return [
        Outcome(m, name, at, first_tier[m], use[m])  # type: ignore[arg-type]
        for m in sorted(first_tier)
    ]


def measure(
    prompts: Sequence[Prompt], tiers: Tiers, factors: dict[str, float]
) -> dict[str, list[float]]:
    got: dict[str, list[float]] = {
        k: [] for k in ("reach", "hit", "false_full", "false_any", "tok_pos", "tok_neg")
    }
    for prompt in prompts:
        shown = decide(prompt, tiers, factors, ShownBefore())
        if prompt.kind == "positive":
            got["reach"].append(bool((shown.full | shown.pointers) & prompt.answers))
            got["hit"].append(bool(shown.full & prompt.answers))
            got["tok_pos"].append(shown.tokens)
        else:
            got["false_full"].append(bool(shown.full))
            got["false_any"].append(bool(shown.full or shown.pointers))
            got["tok_neg"].append(shown.tokens)
    return got


def run(
    store: dict[str, Any], policy: str, args: argparse.Namespace, seed: int
) -> tuple[list[dict[str, list[float]]], list[Outcome], Tiers]:
    rng = random.Random(seed)
    pool = {
        k: [p for p in store["sessions"] if p.kind == k]
        for k in ("positive", "negative", "generic")
    }
    outcomes: list[Outcome] = []
    curve = []
    base: Tiers = store["tiers"]
    for n in range(args.sessions + 1):
        now = START + timedelta(days=n)
        tiers, factors = learned(policy, base, outcomes, now)
        if n % args.every == 0:
            curve.append(measure(store["held-out"], tiers, factors))
        if n == args.sessions:
            return curve, outcomes, tiers
        picked = [
            *rng.sample(pool["positive"], 2),
            rng.choice(pool["negative"]),
            rng.choice(pool["generic"]),
        ]
        rng.shuffle(picked)
        outcomes += session(picked, tiers, factors, n, rng, args.noise, not args.no_relied)
    raise AssertionError("unreachable")


def mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("hits", type=Path, nargs="+")
    parser.add_argument("--sessions", type=int, default=60)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--noise", type=float, default=0.1)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--no-relied", action="store_true")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--track-mode", default="both", choices=("both", "demote", "promote"))
    args = parser.parse_args()
    OPTIONS["track_mode"] = args.track_mode
    stores = load(args.hits)
    table: dict[str, dict[str, Any]] = {}
    rates: dict[str, list[float]] = {}
    for key, store in sorted(stores.items()):
        size = key.split("/")[1]
        group = f"{store['split']}/{size}"
        for policy in POLICIES:
            for seed in range(args.seeds):
                curve, outcomes, last = run(store, policy, args, seed)
                if policy == "calibrate":
                    rates.setdefault(f"{group} learned full cut-off", []).append(last.min_score)
                    rates.setdefault(f"{group} learned pointer cut-off", []).append(
                        last.pointer_min_score
                    )
                for step, got in enumerate(curve):
                    cell = table.setdefault(group, {}).setdefault(policy, {}).setdefault(step, {})
                    for name, values in got.items():
                        cell.setdefault(name, []).extend(values)
                if policy == "static":
                    pointer = [o for o in outcomes if o.tier == "pointer"]
                    full = [o for o in outcomes if o.tier == "full"]
                    rates.setdefault(f"{group} follow", []).append(
                        mean([o.use == "followed" for o in pointer])
                    )
                    rates.setdefault(f"{group} relied", []).append(
                        mean([o.use == "relied" for o in full])
                    )
    print(f"noise {args.noise}, {args.seeds} seeds, relied judged: {not args.no_relied}")
    print("static rates (the targets are set from tune), cut-offs calibration ends at:")
    for name, values in sorted(rates.items()):
        print(f"  {name}: {mean(values):.3f}")
    out: dict[str, Any] = {}
    header = (
        "| sessions | policy | reach | hit | false full | false anything | tokens answered "
        "| tokens no-answer |"
    )
    for group, policies in sorted(table.items()):
        print(f"\n{group}\n{header}\n|---|---|---|---|---|---|---|---|")
        for step in sorted(next(iter(policies.values()))):
            for policy in POLICIES:
                c = policies[policy][step]
                row = {
                    "reach": mean(c["reach"]),
                    "hit": mean(c["hit"]),
                    "false_full": mean(c["false_full"]),
                    "false_any": mean(c["false_any"]),
                    "tokens_answered": mean(c["tok_pos"]),
                    "tokens_no_answer": mean(c["tok_neg"]),
                }
                out.setdefault(group, {}).setdefault(policy, {})[step * args.every] = row
                print(
                    f"| {step * args.every} | {policy} | {row['reach']:.3f} | {row['hit']:.3f} "
                    f"| {row['false_full']:.3f} | {row['false_any']:.3f} "
                    f"| {row['tokens_answered']:.0f} | {row['tokens_no_answer']:.0f} |"
                )
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
