"""Fit and evaluate the relevance calibration (local_recall/search/relevance.py) on LoCoMo dev.

    .venv/bin/python benchmarks/relevance_fit.py [--data DIR] [--fit conv-26,conv-30,conv-41]
        [--eval conv-42,conv-43] [--cache DIR] [--json OUT]

DIR holds LoCoMo conversations as conv-*.json (default: $LOCOMO_DATA, else
benchmarks/data/locomo-dev/ from `python benchmarks/locomo_data.py`). Corpus: each
conversation's observations are one store (as in locomo.py).
Queries per store: its own questions (positives: the memories carrying an evidence dia_id),
every question of the next conversation of the same split (other people: nothing to find) and
generic coding prompts (generic_prompts.FIT for the fit split, .EVAL for the held-out one).
Candidates of a query: the 20 best memories by cosine and the 20 best by word coverage — what
the search's first stage would put in front of the decision. Rows: one per (query, candidate),
label 1 when the candidate carries an evidence dia_id. Two logistic models (with and without
the cosine) are fitted by Newton's method with a small L2 penalty; the threshold is the lowest
one whose share of negative prompts with anything at or above it is ≤ --negative-rate on the
fit split, and the intercept is shifted so that threshold reads as DEFAULT_THRESHOLD (0.5).

Printed for both splits: hit-level AUC; at the threshold, prompt-level evidence-found rate
(an evidence memory among the 10 best candidates, at or above it), negatives-with-anything,
and R@5 when all memories are ranked by relevance. Paste the printed constants into
relevance.py.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(PROJECT))

import generic_prompts  # noqa: E402
import locomo  # noqa: E402
from locomo_data import data_dir  # noqa: E402

from local_recall.search import relevance as rel  # noqa: E402
from local_recall.search.embedders import MiniLMEmbedder  # noqa: E402

CANDIDATES = 20
INJECT_LIMIT = 10  # the hook's search limit (search.default_limit)

Matrix = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Query:
    store: str
    text: str
    kind: str  # positive / foreign / generic
    evidence: frozenset[str]


@dataclass
class Store:
    labels: list[frozenset[str]]
    terms: list[rel.MemoryTerms]
    stats: rel.TermStats
    vectors: npt.NDArray[np.float32]


def build_store(name: str, conv: dict[str, Any], embedder: MiniLMEmbedder, cache: Path) -> Store:
    items = locomo.corpus(conv, "obs")
    # What the index embeds: the subject, then the body unless it already starts with it.
    texts = [item.text for item in items]
    terms = [rel.memory_terms(locomo.subject_of(t), (), t) for t in texts]
    path = cache / f"{name}-obs-minilm.npy"
    if path.exists():
        vectors = np.load(path)
    else:
        vectors = embedder.embed_documents(texts)
        cache.mkdir(parents=True, exist_ok=True)
        np.save(path, vectors)
    return Store([i.labels for i in items], terms, rel.term_stats(terms), vectors)


def queries_for(names: Sequence[str], convs: dict[str, Any], generic: Sequence[str]) -> list[Query]:
    out: list[Query] = []
    for i, name in enumerate(names):
        for q in locomo.questions(convs[name]):
            out.append(Query(name, q.text, "positive", q.evidence))
        if len(names) > 1:
            for q in locomo.questions(convs[names[(i + 1) % len(names)]]):
                out.append(Query(name, q.text, "foreign", frozenset()))
        out.extend(Query(name, text, "generic", frozenset()) for text in generic)
    return out


@dataclass
class Scored:
    query: Query
    candidates: list[int]
    features: list[rel.Features]
    labels: list[int]
    all_cosines: npt.NDArray[np.float32]


def embed_queries(
    texts: Sequence[str], embedder: MiniLMEmbedder, cache: Path
) -> npt.NDArray[np.float32]:
    """MiniLM query vectors, kept in `cache` (keyed by the texts) so a re-fit embeds nothing."""
    import hashlib

    key = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    path = cache / f"queries-{key}.npy"
    if path.exists():
        loaded: npt.NDArray[np.float32] = np.load(path)
        return loaded
    vectors = np.stack([embedder.embed_query(t) for t in texts])
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def score_queries(
    queries: Sequence[Query], stores: dict[str, Store], embedder: MiniLMEmbedder, cache: Path
) -> list[Scored]:
    vectors = embed_queries([q.text for q in queries], embedder, cache)
    out = []
    for query, qv in zip(queries, vectors, strict=True):
        store = stores[query.store]
        profile = rel.query_profile(query.text)
        cosines = store.vectors @ qv
        lexical = [
            rel.extract_features(profile, t, store.stats, None).coverage for t in store.terms
        ]
        top_cos = np.argsort(-cosines)[:CANDIDATES]
        top_lex = sorted(range(len(lexical)), key=lambda i: -lexical[i])[:CANDIDATES]
        cands = list(dict.fromkeys([*map(int, top_cos), *(i for i in top_lex if lexical[i] > 0)]))
        feats = [
            rel.extract_features(profile, store.terms[i], store.stats, float(cosines[i]))
            for i in cands
        ]
        labels = [int(bool(store.labels[i] & query.evidence)) for i in cands]
        out.append(Scored(query, cands, feats, labels, cosines))
    return out


def fit_logistic(x: Matrix, y: Matrix, l2: float = 1e-2) -> Matrix:
    x1 = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(x1.shape[1])
    penalty = np.full(x1.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(100):
        p = 1 / (1 + np.exp(-np.clip(x1 @ w, -60, 60)))
        grad = x1.T @ (p - y) + penalty * w
        hess = x1.T @ (x1 * (p * (1 - p))[:, None]) + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def auc(scores: Sequence[float], labels: Sequence[int]) -> float:
    order = np.argsort(scores)
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    pos = np.array(labels) == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    if not n_pos or not n_neg:
        return float("nan")
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def prompt_metrics(scored: Sequence[Scored], score: Any, threshold: float) -> dict[str, float]:
    found = injected_neg = n_pos = n_neg = 0
    by_kind: dict[str, list[int]] = {}
    for s in scored:
        values = sorted(
            zip((score(f) for f in s.features), s.labels, strict=True), key=lambda v: -v[0]
        )[:INJECT_LIMIT]
        chosen = [label for value, label in values if value >= threshold]
        if s.query.kind == "positive":
            n_pos += 1
            found += any(chosen)
        else:
            n_neg += 1
            injected_neg += bool(chosen)
            by_kind.setdefault(s.query.kind, []).append(int(bool(chosen)))
    out = {
        "evidence_found": found / max(1, n_pos),
        "negatives_injected": injected_neg / max(1, n_neg),
    }
    out.update({f"{k}_injected": sum(v) / len(v) for k, v in by_kind.items()})
    return out


def recall_at_5(
    scored: Sequence[Scored], stores: dict[str, Store], score: Any, *, every: bool = False
) -> float:
    """R@5 when the candidates are ranked by `score` (as the search would rank them); with
    `every`, recall_all@5: every memory of the store carrying an evidence dia_id is in the 5."""
    hits = n = 0
    for s in scored:
        if s.query.kind != "positive":
            continue
        n += 1
        order = sorted(range(len(s.candidates)), key=lambda i: -score(s.features[i]))[:5]
        if every:
            labels = stores[s.query.store].labels
            wanted = {i for i, got in enumerate(labels) if got & s.query.evidence}
            hits += bool(wanted) and wanted <= {s.candidates[i] for i in order}
        else:
            hits += any(s.labels[i] for i in order)
    return hits / max(1, n)


def threshold_for(scored: Sequence[Scored], score: Any, rate: float) -> float:
    """The lowest threshold at which at most `rate` of negative prompts get anything."""
    tops = sorted(
        (max(map(score, s.features), default=0.0) for s in scored if s.query.kind != "positive"),
        reverse=True,
    )
    allowed = math.floor(rate * len(tops))
    return tops[allowed] + 1e-6 if allowed < len(tops) else 0.0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="default: $LOCOMO_DATA, else "
        "benchmarks/data/locomo-dev/ (python benchmarks/locomo_data.py)",
    )
    parser.add_argument("--fit", default="conv-26,conv-30,conv-41")
    parser.add_argument("--eval", default="conv-42,conv-43")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/local-recall-relevance-fit"))
    parser.add_argument("--negative-rate", type=float, default=0.05)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    args.data = data_dir(args.data)
    fit_names, eval_names = args.fit.split(","), args.eval.split(",")
    convs = {n: json.loads((args.data / f"{n}.json").read_text()) for n in fit_names + eval_names}
    embedder = MiniLMEmbedder()
    stores = {n: build_store(n, convs[n], embedder, args.cache) for n in convs}
    fit = score_queries(
        queries_for(fit_names, convs, generic_prompts.FIT), stores, embedder, args.cache
    )
    held = score_queries(
        queries_for(eval_names, convs, generic_prompts.EVAL), stores, embedder, args.cache
    )

    rows = [(f, label) for s in fit for f, label in zip(s.features, s.labels, strict=True)]
    y = np.array([label for _, label in rows], dtype=float)
    results: dict[str, Any] = {}
    for name, vec in (("WEIGHTS", "vector"), ("LEXICAL_WEIGHTS", "lexical_vector")):
        x = np.array([getattr(f, vec)() for f, _ in rows])
        w = fit_logistic(x, y)

        def raw(f: rel.Features, w: Matrix = w, vec: str = vec) -> float:
            z = w[0] + float(np.dot(w[1:], getattr(f, vec)()))
            return 1 / (1 + math.exp(-max(-60, min(60, z))))

        t = threshold_for(fit, raw, args.negative_rate)
        shifted = w.copy()
        shifted[0] -= math.log(t / (1 - t))  # so that DEFAULT_THRESHOLD 0.5 is this threshold
        results[name] = {"weights": [round(v, 4) for v in shifted], "raw_threshold": t}
        for split, scored in (("fit", fit), ("held-out", held)):
            hit_scores = [raw(f) for s in scored for f in s.features]
            hit_labels = [label for s in scored for label in s.labels]
            results[name][split] = {
                "hit_auc": round(auc(hit_scores, hit_labels), 4),
                **{k: round(v, 4) for k, v in prompt_metrics(scored, raw, t).items()},
                "R@5_by_relevance": round(recall_at_5(scored, stores, raw), 4),
                "recall_all@5_by_relevance": round(recall_at_5(scored, stores, raw, every=True), 4),
                "evidence_found_without_threshold": prompt_metrics(scored, raw, 0.0)[
                    "evidence_found"
                ],
                # the trade-off: (negative rate allowed on the fit split, evidence found here)
                "curve": [
                    (
                        rate,
                        round(
                            prompt_metrics(scored, raw, threshold_for(fit, raw, rate))[
                                "evidence_found"
                            ],
                            3,
                        ),
                        round(
                            prompt_metrics(scored, raw, threshold_for(fit, raw, rate))[
                                "negatives_injected"
                            ],
                            3,
                        ),
                    )
                    for rate in (0.02, 0.05, 0.08, 0.1, 0.15, 0.2)
                ],
            }
    for split, scored in (("fit", fit), ("held-out", held)):
        for every in (False, True):
            results[f"{'recall_all' if every else 'R'}@5_by_cosine/{split}"] = round(
                recall_at_5(scored, stores, lambda f: f.cosine or 0.0, every=every), 4
            )
    results["queries"] = {
        "fit": {k: sum(s.query.kind == k for s in fit) for k in ("positive", "foreign", "generic")},
        "held-out": {
            k: sum(s.query.kind == k for s in held) for k in ("positive", "foreign", "generic")
        },
    }
    print(json.dumps(results, indent=1))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
