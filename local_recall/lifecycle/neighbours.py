"""Candidate near-duplicate pairs for `consolidate`, without comparing every pair of texts.

Each memory's nearest neighbours come from its whole-text embedding (the vectors the search index
already holds): a blocked matrix product over unit vectors keeps, per memory, the `k` most similar
others above the cosine floor. Only those pairs are compared as text (rapidfuzz), so the text
comparison is O(n·k), not O(n²). At 10k memories × 384 dimensions the product is ~40 GFLOP of
float32 BLAS: seconds (benchmarks/consolidation.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from local_recall.lifecycle.consolidation import Pair
from local_recall.memory.likeness import restates

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

NEIGHBOURS = 8  # per memory: a fact rarely has more wordings than this in one store
BLOCK_ROWS = 1024  # rows per matrix product: 1024 × n float32 (40 MB at 10k)


def nearest(
    matrix: npt.NDArray[np.float32], *, floor: float, k: int = NEIGHBOURS
) -> list[tuple[int, int, float]]:
    """(i, j, cosine) with i < j for every memory's `k` nearest others at cosine >= floor."""
    import numpy as np

    count = matrix.shape[0]
    if count < 2:
        return []
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = (matrix / np.where(norms == 0, 1.0, norms)).astype(np.float32)
    found: dict[tuple[int, int], float] = {}
    for start in range(0, count, BLOCK_ROWS):
        sims = unit[start : start + BLOCK_ROWS] @ unit.T
        rows = np.arange(sims.shape[0])
        sims[rows, rows + start] = -1.0  # not its own neighbour
        hit_rows, hit_cols = np.nonzero(sims >= floor)
        by_row: dict[int, list[int]] = {}
        for r, c in zip(hit_rows.tolist(), hit_cols.tolist(), strict=True):
            by_row.setdefault(r, []).append(c)
        for r, above in by_row.items():
            row = sims[r]
            cols = above if len(above) <= k else sorted(above, key=lambda c: -float(row[c]))[:k]
            i = r + start
            for c in cols:
                key = (i, c) if i < c else (c, i)
                found[key] = float(sims[r, c])
    return [(i, j, cos) for (i, j), cos in sorted(found.items())]


def text_ratio(a: str, b: str) -> float:
    """rapidfuzz token_set_ratio (0..100) of two texts, case and punctuation folded."""
    from rapidfuzz import fuzz, utils

    return float(fuzz.token_set_ratio(a, b, processor=utils.default_process))


def candidate_pairs(
    keys: Sequence[str],
    matrix: npt.NDArray[np.float32],
    texts: Mapping[str, str],
    *,
    floor: float,
    k: int = NEIGHBOURS,
    ratio: Callable[[str, str], float] = text_ratio,
) -> list[Pair]:
    """The pairs worth judging: embedding neighbours, with their text agreement (texts are
    subject, newline, body: `restates` reads the subject line). Keys missing
    from `texts` (a vector left in the index for a memory deleted since) are skipped."""
    pairs = []
    for i, j, cosine in nearest(matrix, floor=floor, k=k):
        a, b = keys[i], keys[j]
        if a in texts and b in texts:
            first, second = texts[a], texts[b]
            pairs.append(Pair(a, b, cosine, ratio(first, second), restates(first, second)))
    return pairs
