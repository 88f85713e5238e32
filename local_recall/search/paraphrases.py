"""The existing memories nearest in meaning to a text about to be written, for the paraphrase
check of the write path (memory/likeness.py). The whole-text vectors are the index's own (what
`consolidate` compares); only the new text is embedded. A failing embedder or index leaves the
text-only checks: the caller catches `RecallError`."""

from __future__ import annotations

from local_recall.search.embedders import Embedder
from local_recall.search.index.rows import MemoryIndex

NEAREST = 5


def nearest_memories(
    index: MemoryIndex, embedder: Embedder, text: str, count: int = NEAREST
) -> list[tuple[str, float]]:
    """(memory id, cosine) of the `count` episodic memories nearest `text`, nearest first."""
    import numpy as np

    keys, matrix = index.vectors("episodic")
    if not keys:
        return []
    vector = np.asarray(embedder.embed_documents([text])[0], dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(vector) or 1.0)
    cosines = (matrix @ vector) / np.where(norms == 0, 1.0, norms)
    order = np.argsort(-cosines)[:count]
    return [(keys[i].rpartition("/")[2], float(cosines[i])) for i in order.tolist()]
