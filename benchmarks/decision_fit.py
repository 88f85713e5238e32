"""Fit the inject / skip decision (local_recall/search/decision.py) on the tuning data only.

    .venv/bin/python benchmarks/decision_fit.py [--repos DIR] [--data DIR] [--workdir DIR]
        [--sizes 25,500,5000] [--negative-rate 0.04] [--json OUT]

Tuning data, never the held-out part: the coding benchmark's `tune` projects (coding_bench.py;
stores of ~25, ~500 and ~5,000 memories, `--repos` or $CODING_BENCH_REPOS for the history) with
the `tune` generic prompts, and LoCoMo dev conversations 26, 30, 41 (`--data` or $LOCOMO_DATA;
observations as memories; positives: own questions; negatives: the next conversation's questions
and generic_prompts.FIT). Each store is indexed by the library, which computes its background.

One row per searched prompt (the chit-chat filter's prompts are never searched): the decision's
inputs as the library computes them (`SearchResult.decision`: best relevance, runner-up, the
background's tail, the prompt's intent) and the label "the store holds its answer" (a positive
prompt: which of the hits answers it is then the search's order's business). A logistic
model is fitted by Newton's method (small L2), the two domains weighted equally; the intercept is
then shifted so that at most `--negative-rate` of the negative prompts reach 0.5 (the hook's
threshold). Printed: the constants for decision.py, and per domain and store size the share of
positives whose answer would be injected (any hit whose score reaches 0.5 is; runner-up shares
0, 0.25, 0.5, 1) and of negatives with anything injected.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import coding_data  # noqa: E402
import generic_prompts  # noqa: E402
import locomo  # noqa: E402
from locomo_data import data_dir  # noqa: E402

from local_recall.recall import Recall  # noqa: E402
from local_recall.search import decision as dec  # noqa: E402
from local_recall.search.query import SearchQuery  # noqa: E402
from local_recall.search.query_intent import has_nothing_to_look_up, prompt_intent  # noqa: E402
from local_recall.search.scoring import score_hit  # noqa: E402

FIT_CONVERSATIONS = ("conv-26", "conv-30", "conv-41")
LIMIT = 10  # the hook's search limit


@dataclass(frozen=True, slots=True)
class Row:
    domain: str  # "coding" / "locomo"
    text: str
    store: str
    size: int
    kind: str  # positive / negative / generic / foreign
    decision: dec.Decision
    relevances: tuple[float, ...]  # every hit's relevance, best first
    answers: tuple[bool, ...]  # whether each hit answers the prompt


def rows_of(
    recall: Recall, domain: str, store: str, size: int, prompts: Sequence[tuple[str, str, Any]]
) -> list[Row]:
    """prompts: (text, kind, answers) — answers: a set of memory ids or a callable(id) -> bool."""
    out = []
    for text, kind, answers in prompts:
        if has_nothing_to_look_up(text):
            continue
        found = recall.query(SearchQuery(text, limit=LIMIT, min_score=0.0), sync=False)
        assert found.decision is not None
        hits = found.hits
        good = tuple(bool(answers(h.id)) if callable(answers) else h.id in answers for h in hits)
        relevances = tuple(score_hit(h.signals) if h.signals else h.score for h in hits)
        out.append(Row(domain, text, store, size, kind, found.decision, relevances, good))
    return out


def coding_rows(
    repos: Path | None,
    workdir: Path,
    sizes: Sequence[int],
    only: Sequence[str] = (),
    existing: bool = False,
) -> list[Row]:
    embedder = coding_data.CachingEmbedder(workdir / "embeddings.npz")
    rows: list[Row] = []
    for project in coding_data.load_projects(only):
        if project.split != "tune":
            continue
        padding = coding_data.project_padding(project, repos, workdir / "history")
        generic = coding_data.generic_prompts("tune")
        for size in sizes:
            if size > len(project.memories) and padding is None:
                continue
            items = coding_data.store_items(project, padding, size)
            root = workdir / "stores" / f"{project.name}-{size}"
            if existing and not (root / "benchmark-items.json").exists():
                continue  # --existing: only the stores already built
            recall, ids = coding_data.build_store(root, project.name, items, embedder)
            embedder.save()
            prompts = [
                (p.text, p.kind, {ids[a] for a in p.answers if a in ids})
                for p in coding_data.fit_prompts(project)  # never the user-style set
            ] + [(text, "generic", set()) for text in generic]
            rows += rows_of(recall, "coding", project.name, size, prompts)
            print(f"coding {project.name}-{size}: {len(rows)} rows", flush=True)
    return rows


def locomo_rows(data: Path, workdir: Path) -> list[Row]:
    embedder = coding_data.CachingEmbedder(workdir / "embeddings.npz")
    convs = {n: json.loads((data / f"{n}.json").read_text()) for n in FIT_CONVERSATIONS}
    names = list(convs)
    rows: list[Row] = []
    for i, name in enumerate(names):
        root = workdir / "locomo" / name
        items = locomo.corpus(convs[name], "obs")
        fresh = not (root / "local-recall").is_dir()
        root.mkdir(parents=True, exist_ok=True)
        recall = locomo.open_store(root, embedder)
        labels = locomo.load(recall, items) if fresh else locomo._labels(recall, items)
        recall.sync_index()
        embedder.save()
        own = [
            (
                q.text,
                "positive",
                lambda m, ev=q.evidence, lb=labels: bool(lb.get(m, frozenset()) & ev),
            )
            for q in locomo.questions(convs[name])
        ]
        other = locomo.questions(convs[names[(i + 1) % len(names)]])
        prompts: list[tuple[str, str, Any]] = own + [(q.text, "foreign", set()) for q in other]
        prompts += [(text, "generic", set()) for text in generic_prompts.FIT]
        rows += rows_of(recall, "locomo", name, len(labels), prompts)
        print(f"locomo {name}: {len(rows)} rows", flush=True)
    return rows


def row_to_json(row: Row) -> dict[str, Any]:
    d = row.decision
    return {
        "domain": row.domain,
        "text": row.text,
        "store": row.store,
        "size": row.size,
        "kind": row.kind,
        "decision": [d.relevance, d.runner_up, d.tail, list(d.intent), d.probability, d.shift],
        "relevances": list(row.relevances),
        "answers": list(row.answers),
    }


def row_from_json(data: dict[str, Any]) -> Row:
    relevance, runner_up, tail, _intent, probability_, shift = data["decision"]
    # the intent is recomputed from the text: the library's current prompt_intent
    intent = prompt_intent(data["text"])
    decision = dec.Decision(relevance, runner_up, tail, intent, probability_, shift)
    return Row(
        data["domain"],
        data["text"],
        data["store"],
        data["size"],
        data["kind"],
        decision,
        tuple(data["relevances"]),
        tuple(data["answers"]),
    )


def matrix(rows: Sequence[Row]) -> np.ndarray:
    return np.array(
        [
            dec.inputs_vector(
                r.decision.relevance,
                r.decision.runner_up,
                r.decision.tail or 1.0,
                r.decision.intent,
            )
            for r in rows
        ]
    )


def probability(weights: Sequence[float], row: Row) -> float:
    d = row.decision
    return dec.answer_probability(d.relevance, d.runner_up, d.tail or 1.0, d.intent, weights)


def injected(weights: Sequence[float], row: Row, share: float) -> tuple[bool, bool]:
    """(anything injected, an answer injected) at the hook's threshold, budget ignored."""
    if not row.relevances:
        return False, False
    p = probability(weights, row)
    decision = dec.Decision(
        row.decision.relevance,
        row.decision.runner_up,
        row.decision.tail,
        row.decision.intent,
        p,
        dec.logit(p) - dec.logit(row.decision.relevance),
    )
    shown = [dec.shifted(r, decision, share) >= 0.5 for r in row.relevances]
    return any(shown), any(s and a for s, a in zip(shown, row.answers, strict=True))


def report(weights: Sequence[float], rows: Sequence[Row], share: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for domain in sorted({r.domain for r in rows}):
        for size in sorted({r.size for r in rows if r.domain == domain}):
            group = [r for r in rows if r.domain == domain and r.size == size]
            key = f"{domain}/{size}" if domain == "coding" else f"{domain}/{group[0].store}"
            pos = [injected(weights, r, share) for r in group if r.kind == "positive"]
            neg = [injected(weights, r, share) for r in group if r.kind != "positive"]
            first = [
                injected(weights, r, share)[1]
                for r in group
                if r.kind == "positive" and r.answers[:1] == (True,)
            ]
            out[key] = {
                "hit": round(sum(h for _, h in pos) / max(1, len(pos)), 3),
                "hit_when_first": round(sum(first) / max(1, len(first)), 3),
                "negatives": round(sum(a for a, _ in neg) / max(1, len(neg)), 3),
                **{
                    kind: round(
                        sum(injected(weights, r, share)[0] for r in group if r.kind == kind)
                        / max(1, sum(r.kind == kind for r in group)),
                        3,
                    )
                    for kind in ("generic", "negative", "foreign")
                    if any(r.kind == kind for r in group)
                },
            }
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    repos, data = os.environ.get("CODING_BENCH_REPOS"), os.environ.get("LOCOMO_DATA")
    parser.add_argument("--repos", type=Path, default=Path(repos) if repos else None)
    parser.add_argument("--data", type=Path, default=Path(data) if data else None)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/local-recall-decision-fit"))
    parser.add_argument("--sizes", default="25,500,5000")
    parser.add_argument("--projects", default="", help="tune projects to use (default: all)")
    parser.add_argument("--existing", action="store_true", help="only stores already built")
    parser.add_argument(
        "--append", action="store_true", help="add the rows of stores not in the cached rows"
    )
    parser.add_argument("--negative-rate", type=float, default=0.04)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--reuse", action="store_true", help="reuse the rows of the last run (same library)"
    )
    args = parser.parse_args(argv)
    workdir = args.workdir.absolute()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    cache = workdir / "rows.json"
    if args.append and cache.exists():  # the cached rows plus those of the stores asked for
        rows = [row_from_json(r) for r in json.loads(cache.read_text())]
        have = {(r.store, r.size) for r in rows if r.domain == "coding"}
        only = [p for p in args.projects.split(",") if p]
        more = coding_rows(args.repos, workdir, sizes, only, args.existing)
        rows += [r for r in more if (r.store, r.size) not in have]
        cache.write_text(json.dumps([row_to_json(r) for r in rows]))
    elif args.reuse and cache.exists():
        rows = [row_from_json(r) for r in json.loads(cache.read_text())]
    else:
        only = [p for p in args.projects.split(",") if p]
        rows = coding_rows(args.repos, workdir, sizes, only, args.existing)
        rows += locomo_rows(data_dir(args.data), workdir)
        cache.write_text(json.dumps([row_to_json(r) for r in rows]))
    rows = [r for r in rows if r.relevances]  # nothing found: nothing to decide
    # the label: the store holds the prompt's answer (the decision is whether to inject at all;
    # which memories then follows the search's order)
    x, y = matrix(rows), np.array([r.kind == "positive" for r in rows], dtype=float)
    # each domain weighs the same in the fit, whatever its number of prompts
    counts = {d: sum(r.domain == d for r in rows) for d in {r.domain for r in rows}}
    weight = np.array([len(rows) / (len(counts) * counts[r.domain]) for r in rows])
    w = fit_logistic_weighted(x, y, weight)
    # the cut: the strictest of the domains', so that neither has more than --negative-rate of
    # its negative prompts reaching 0.5 (the coding domain per store size)
    cuts = []
    for group in {(r.domain, r.size if r.domain == "coding" else 0) for r in rows}:
        negatives = sorted(
            (
                probability(w, r)
                for r in rows
                if (r.domain, r.size if r.domain == "coding" else 0) == group
                and r.kind != "positive"
                and r.relevances
            ),
            reverse=True,
        )
        allowed = math.floor(args.negative_rate * len(negatives))
        cuts.append(negatives[allowed] if allowed < len(negatives) else 0.0)
    cut = max(cuts)
    w = w.copy()
    w[0] -= dec.logit(min(max(cut + 1e-6, 1e-6), 1 - 1e-6))  # so that 0.5 is that cut
    results: dict[str, Any] = {"weights": [round(float(v), 4) for v in w], "rows": len(rows)}
    for share in (0.0, 0.25, 0.5, 1.0):
        results[f"share={share}"] = report(w, rows, share)
    print(json.dumps(results, indent=1))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


def fit_logistic_weighted(
    x: np.ndarray, y: np.ndarray, weight: np.ndarray, l2: float = 1e-2
) -> Any:
    """relevance_fit.fit_logistic with per-row weights."""
    x1 = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(x1.shape[1])
    penalty = np.full(x1.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(100):
        p = 1 / (1 + np.exp(-np.clip(x1 @ w, -60, 60)))
        grad = x1.T @ (weight * (p - y)) + penalty * w
        hess = x1.T @ (x1 * (weight * p * (1 - p))[:, None]) + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


if __name__ == "__main__":
    raise SystemExit(main())
