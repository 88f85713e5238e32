"""One fact, one memory: how well the write path and the prompt hook tell a paraphrase of an
existing memory from a different fact.

    .venv/bin/python benchmarks/write_dedup.py

Pairs:
1. consolidation_pairs.py: 25 hand-written paraphrase pairs of coding facts and 25 same-topic
   pairs stating different facts, plus the pair of issue 24 ("Run the tests with pytest via tox"
   beside "Run tests with pytest through tox", bodies as a user and the extractor wrote them).
2. Every pair of this repository's own memories (local-recall/episodic-memory/, written by the
   engineers of this project, never tuned on): one pair states one rule twice (REPO_SAME below,
   found by this benchmark and read by hand); every other pair is a different fact.

Rules: the edit-distance check the write path had alone (`near_duplicate_threshold` 0.9), the
paraphrase rule it has now (memory/likeness.py: MiniLM cosine of the whole texts + rapidfuzz
token_set_ratio), `consolidate`'s stricter rule, and the prompt hook's word overlap
(context/duplicates.py), which has no vectors.
"""

from __future__ import annotations

import itertools
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from consolidation_pairs import NEG, POS  # noqa: E402

from local_recall.capture.pipeline_plan import similarity  # noqa: E402
from local_recall.context.duplicates import same_fact  # noqa: E402
from local_recall.memory.format import parse_memory_text  # noqa: E402
from local_recall.memory.likeness import is_paraphrase, other_figures, text_ratio  # noqa: E402
from local_recall.search.embedders.minilm import MiniLMEmbedder  # noqa: E402

Text = tuple[str, str]  # subject, body
ISSUE: tuple[Text, Text] = (
    (
        "Run the tests with pytest via tox",
        "Tests run through tox, which calls pytest; do not run pytest directly.",
    ),
    (
        "Run tests with pytest through tox",
        "The test suite is run with tox, which invokes pytest, rather than calling pytest by hand.",
    ),
)
# Two memories of this repository that state one rule (the second adds the incident).
REPO_SAME = frozenset(
    {("67dbdfef-7201-48b6-8aff-40209fad9ab7", "ccab271f-9f7e-4188-a677-9df7ed143fc2")}
)


class Features:
    def __init__(self, pair: tuple[Text, Text], cosine: float) -> None:
        (s1, b1), (s2, b2) = pair
        a, b = f"{s1}\n{b1}", f"{s2}\n{b2}"
        self.cosine = cosine
        self.edit = similarity(a, b)
        self.ratio = text_ratio(a, b)
        self.words = same_fact(s1, b1, s2, b2)
        self.figures = other_figures(a, b)


def features(embedder: MiniLMEmbedder, pairs: list[tuple[Text, Text]]) -> list[Features]:
    texts = [f"{s}\n{b}" for pair in pairs for (s, b) in pair]
    vectors = embedder.embed_documents(texts)
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return [
        Features(pair, float(vectors[2 * i] @ vectors[2 * i + 1])) for i, pair in enumerate(pairs)
    ]


def repo_memories() -> list[tuple[str, Text]]:
    found = []
    for path in sorted((ROOT / "local-recall" / "episodic-memory").glob("*.md")):
        memory = parse_memory_text(path.read_text("utf-8"), path)
        found.append((memory.id, (memory.subject, memory.body)))
    return found


RULES: dict[str, Callable[[Features], bool]] = {
    "before: edit distance ≥ 0.9 (the write path's only check)": lambda f: f.edit >= 0.9,
    "**after: paraphrase rule, cosine ≥ 0.80 and ratio ≥ 65, or cosine ≥ 0.95**": lambda f: (
        f.edit >= 0.9 or is_paraphrase(f.cosine, f.ratio)
    ),
    "**+ different figures are different facts (the write path since 2026-11-25)**": lambda f: (
        not f.figures and (f.edit >= 0.9 or is_paraphrase(f.cosine, f.ratio))
    ),
    "consolidate's rule (cosine ≥ 0.85 and ratio ≥ 65, or ≥ 0.95)": lambda f: is_paraphrase(
        f.cosine, f.ratio, cosine_with_text=0.85
    ),
    "prompt hook: content-word overlap ≥ 0.4 (no vectors)": lambda f: f.words,
}


def main() -> None:
    embedder = MiniLMEmbedder()
    started = time.process_time()
    positives = features(embedder, [*POS, ISSUE])
    negatives = features(embedder, NEG)
    memories = repo_memories()
    pairs = list(itertools.combinations(memories, 2))
    repo = features(embedder, [(a[1], b[1]) for a, b in pairs])
    repo_same = [(a[0], b[0]) in REPO_SAME or (b[0], a[0]) in REPO_SAME for a, b in pairs]
    cpu = time.process_time() - started
    print(
        f"{len(positives)} paraphrase pairs, {len(negatives)} same-topic different facts; "
        f"{len(memories)} repository memories = {len(pairs)} pairs ({sum(repo_same)} the same "
        f"fact); embedding + measures {cpu:.0f} s CPU, load {os.getloadavg()[0]:.1f}"
    )
    print(
        "| rule | recall (hand + repo) | precision (hand + repo) | issue pair | "
        "false on same-topic | false on repo pairs |"
    )
    print("|---|---|---|---|---|---|")
    for name, rule in RULES.items():
        tp = sum(map(rule, positives)) + sum(
            rule(f) for f, same in zip(repo, repo_same, strict=True) if same
        )
        fp_hand = sum(map(rule, negatives))
        fp_repo = sum(rule(f) for f, same in zip(repo, repo_same, strict=True) if not same)
        total = len(positives) + sum(repo_same)
        precision = tp / (tp + fp_hand + fp_repo) if tp + fp_hand + fp_repo else 1.0
        issue = "caught" if rule(positives[-1]) else "missed"
        print(
            f"| {name} | {tp / total:.2f} ({tp}/{total}) | {precision:.2f} | {issue} "
            f"| {fp_hand}/{len(negatives)} | {fp_repo}/{len(pairs) - sum(repo_same)} |"
        )


if __name__ == "__main__":
    main()
