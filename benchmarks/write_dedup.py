"""One fact, one memory: how well the write path, `consolidate` and the prompt hook tell a
paraphrase of an existing memory from a different fact.

    .venv/bin/python benchmarks/write_dedup.py

Pairs:
1. consolidation_pairs.py: 25 hand-written paraphrase pairs of coding facts and 25 same-topic
   pairs stating different facts, plus a reported pair ("Run the tests with pytest via tox"
   beside "Run tests with pytest through tox", bodies as a user and the extractor wrote them).
2. consolidation_pairs.py RESTATED / RESTATED_DISTINCT: a fact restated with a
   detail of its own (the version the writer ran, an example command), and same-topic pairs
   that must stay two (a corrected figure, another command of the same tool).
3. Every pair of this repository's own memories (local-recall/episodic-memory/, written by the
   engineers of this project, never tuned on): every pair is a different fact but those in
   REPO_SAME (read by hand).

Each rule is the library's own function, called as the product calls it (so the script runs
unchanged on an older checkout for a before/after): the write path's `paraphrase_of` (MCP
`save_memory`, and extraction after its edit-distance check, shown apart), `consolidate`'s
`candidate_pairs` + `group_pairs`, the prompt hook's `same_fact`.
Each text is embedded once (MiniLM, subject + body).
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

from consolidation_pairs import NEG, POS, RESTATED, RESTATED_DISTINCT  # noqa: E402

from local_recall.capture.pipeline_plan import similarity  # noqa: E402
from local_recall.context.duplicates import same_fact  # noqa: E402
from local_recall.lifecycle.consolidation import Thresholds, group_pairs  # noqa: E402
from local_recall.lifecycle.neighbours import candidate_pairs  # noqa: E402
from local_recall.memory.format import parse_memory_text  # noqa: E402
from local_recall.memory.likeness import paraphrase_of  # noqa: E402
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


Pair = tuple[Text, Text]


class Judged:
    """What each rule says of one pair, given the two texts' unit vectors."""

    def __init__(self, pair: Pair, vectors: dict[Text, np.ndarray]) -> None:
        (s1, b1), (s2, b2) = pair
        a, b = f"{s1}\n{b1}", f"{s2}\n{b2}"
        cosine = float(vectors[pair[0]] @ vectors[pair[1]])
        self.edit = similarity(a, b) >= 0.9
        self.write = paraphrase_of(a, [("b", cosine)], {"b": b}) is not None
        matrix = np.stack([vectors[pair[0]], vectors[pair[1]]]).astype(np.float32)
        found = candidate_pairs(["a", "b"], matrix, {"a": a, "b": b}, floor=Thresholds().floor)
        self.consolidate = bool(group_pairs(found))
        self.hook = same_fact(s1, b1, s2, b2)


def unit_vectors(embedder: MiniLMEmbedder, texts: list[Text]) -> dict[Text, np.ndarray]:
    vectors = np.asarray(embedder.embed_documents([f"{s}\n{b}" for s, b in texts]))
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return dict(zip(texts, vectors, strict=True))


def repo_memories() -> list[tuple[str, Text]]:
    found = []
    for path in sorted((ROOT / "local-recall" / "episodic-memory").glob("*.md")):
        memory = parse_memory_text(path.read_text("utf-8"), path)
        found.append((memory.id, (memory.subject, memory.body)))
    return found


RULES: dict[str, Callable[[Judged], bool]] = {
    "edit distance ≥ 0.9 alone": lambda j: j.edit,
    "write path (`paraphrase_of`)": lambda j: j.write,
    "`consolidate`": lambda j: j.consolidate,
    "prompt hook (`same_fact`, no vectors)": lambda j: j.hook,
}


def main() -> None:
    embedder = MiniLMEmbedder()
    started = time.process_time()
    labelled = {"same": [*POS, ISSUE], "distinct": NEG, "restated": RESTATED}
    labelled["restated_distinct"] = RESTATED_DISTINCT
    memories = repo_memories()
    repo = list(itertools.combinations(memories, 2))
    texts = {t for pairs in labelled.values() for pair in pairs for t in pair}
    vectors = unit_vectors(embedder, sorted(texts | {text for _, text in memories}))
    judged = {name: [Judged(p, vectors) for p in pairs] for name, pairs in labelled.items()}
    repo_judged = [Judged((a[1], b[1]), vectors) for a, b in repo]
    repo_same = [(a[0], b[0]) in REPO_SAME or (b[0], a[0]) in REPO_SAME for a, b in repo]
    cpu = time.process_time() - started
    print(
        f"{len(judged['same'])} paraphrase pairs, {len(judged['distinct'])} same-topic different "
        f"facts, {len(RESTATED)} restated + {len(RESTATED_DISTINCT)} distinct; "
        f"{len(memories)} repository memories = {len(repo)} pairs ({sum(repo_same)} the same "
        f"fact); {cpu:.0f} s CPU, load {os.getloadavg()[0]:.1f}"
    )
    print(
        "| rule | recall (hand + repo) | precision | reported pair | restated "
        "| false: same-topic | false: restated distinct | false: repo pairs |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, rule in RULES.items():
        same = [*judged["same"], *judged["restated"]]
        same += [j for j, s in zip(repo_judged, repo_same, strict=True) if s]
        tp = sum(map(rule, same))
        fp_hand = sum(map(rule, judged["distinct"]))
        fp_restated = sum(map(rule, judged["restated_distinct"]))
        fp_repo = sum(rule(j) for j, s in zip(repo_judged, repo_same, strict=True) if not s)
        fp = fp_hand + fp_restated + fp_repo
        precision = tp / (tp + fp) if tp + fp else 1.0
        reported = "caught" if rule(judged["same"][-1]) else "missed"
        restated = sum(map(rule, judged["restated"]))
        print(
            f"| {name} | {tp / len(same):.2f} ({tp}/{len(same)}) | {precision:.2f} | {reported} "
            f"| {restated}/{len(RESTATED)} | {fp_hand}/{len(NEG)} "
            f"| {fp_restated}/{len(RESTATED_DISTINCT)} | {fp_repo}/{len(repo) - sum(repo_same)} |"
        )


if __name__ == "__main__":
    main()
