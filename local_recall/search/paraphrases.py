"""Which existing memories a text paraphrases (memory/likeness.py decides), for the write path
and for `review`'s "looks like <id>". The whole-text vectors are the index's own (what
`consolidate` compares); only a new text is embedded. A failing embedder or index raises
`RecallError`: callers fall back to the text-only checks."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from local_recall.errors import RecallError
from local_recall.memory.likeness import paraphrase_of
from local_recall.memory.model import Draft, Memory
from local_recall.search.embedders import Embedder
from local_recall.search.index.plan import row_key
from local_recall.search.index.rows import MemoryIndex
from local_recall.search.query import SearchQuery

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from local_recall.memory.store import MemoryStore
    from local_recall.search.searcher import Searcher

NEAREST = 5


def memory_text(memory: Memory) -> str:
    return f"{memory.subject}\n{memory.body}"


def _ranked(
    keys: Sequence[str],
    matrix: npt.NDArray[np.float32],
    vector: npt.NDArray[np.float32],
    row_norms: npt.NDArray[np.float32] | None = None,
) -> list[tuple[str, float]]:
    """`row_norms`: the rows' norms, kept with the index's copy (else computed here)."""
    import numpy as np

    if row_norms is None:
        row_norms = np.linalg.norm(matrix, axis=1)
    norms = row_norms * (np.linalg.norm(vector) or 1.0)
    cosines = (matrix @ vector) / np.where(norms == 0, 1.0, norms)
    if not len(keys):
        return []
    # Ties at the cut are broken by key, not by row order: the index's copy (rows.py) may
    # hold its rows in another order than LanceDB returns them, and must rank the same.
    floor = np.partition(-cosines, min(NEAREST, len(keys) - 1))[min(NEAREST, len(keys) - 1)]
    tied = np.flatnonzero(-cosines <= floor).tolist()
    order = sorted(tied, key=lambda i: (-cosines[i], keys[i]))[: NEAREST + 1]
    return [(keys[i].rpartition("/")[2], float(cosines[i])) for i in order]


def nearest_memories(index: MemoryIndex, embedder: Embedder, text: str) -> list[tuple[str, float]]:
    """(memory id, cosine) of the episodic memories nearest `text`, nearest first."""
    import numpy as np

    whole = index.whole("episodic")  # kept in step with the index's writes, norms too
    if not whole.keys:
        return []
    vector = np.asarray(embedder.embed_documents([text])[0], dtype=np.float32)
    if vector.shape[0] != whole.matrix.shape[1]:  # the embedder changed, the index not yet
        return []
    return _ranked(whole.keys, whole.matrix, vector, whole.norms)


def paraphrased_memory(
    index: MemoryIndex,
    embedder: Embedder,
    memories: Sequence[Memory] | Callable[[str], Memory | None],
    subject: str,
    body: str,
) -> Memory | None:
    """The memory `subject` + `body` paraphrases, if any; an exact copy is not one (the
    content hash answers for it). `memories`: the store's, or a look-up by id (a save at
    100,000 memories looks up the few nearest, not every memory)."""
    text = f"{subject}\n{body}"
    lookup = memories if callable(memories) else {m.id: m for m in memories}.get
    nearest = nearest_memories(index, embedder, text)
    found = {i: m for i, _ in nearest if (m := lookup(i)) is not None}  # the few compared
    texts = {i: memory_text(m) for i, m in found.items()}
    match = paraphrase_of(text, nearest, texts)
    if match is None or found[match].body.strip() == body.strip():
        return None
    return found[match]


def look_alikes(
    index: MemoryIndex, memories: Sequence[Memory], wanted: Sequence[str]
) -> Mapping[str, str]:
    """For each id in `wanted`: the other memory it paraphrases, judged on the vectors the
    index holds (no embedding). Ids without a vector, or like no other, are left out."""
    keys, matrix = index.whole_vectors("episodic")
    row = {key.rpartition("/")[2]: i for i, key in enumerate(keys)}
    texts = {m.id: memory_text(m) for m in memories}
    found: dict[str, str] = {}
    for memory_id in wanted:
        if memory_id not in row or memory_id not in texts:
            continue
        nearest = [n for n in _ranked(keys, matrix, matrix[row[memory_id]]) if n[0] != memory_id]
        match = paraphrase_of(texts[memory_id], nearest, texts)
        if match is not None:
            found[memory_id] = match
    return found


def paraphrase_in(
    searcher: Searcher, store: MemoryStore, draft: Draft, scanned: Sequence[Memory] | None = None
) -> Memory | None:
    """The memory of `store` that `draft` (validated, redacted) says in other words, if any;
    None also when the embedder or index fails (the content hash still catches copies). The
    sync it makes first embeds what was saved a moment ago; the background is left to the
    syncs after it (a save never pays ~100 probe searches). `scanned`: the store's memories as
    the caller just scanned them (`MemoryStore.create` under its lock): not scanned again."""
    try:
        searcher.sync(
            waiting=True,
            background=False,
            scanned=None if scanned is None else {store.kind: scanned},
        )
        return paraphrased_memory(  # what that sync scanned: no second scan of the files
            searcher.index,
            searcher.embedder,
            lambda memory_id: searcher.loaded_memories().get(row_key(store.kind, memory_id)),
            draft.subject,
            draft.body,
        )
    except RecallError:
        return None


def look_alikes_in(
    searcher: Searcher, store: MemoryStore, wanted: Sequence[str]
) -> Mapping[str, str]:
    """`look_alikes` after a sync; {} when the index fails."""
    try:
        searcher.sync(waiting=True, background=False)
        loaded = [m for m in searcher.loaded_memories().values() if m.kind == store.kind]
        return look_alikes(searcher.index, loaded, wanted)
    except RecallError:
        return {}


def similar_memories(searcher: Searcher, text: str, count: int) -> list[tuple[str, str]]:
    """(id, subject) of the memories most like `text`: what a capture pass shows the extractor
    as existing, asked per chunk while the pass grows the store. Where the index is not open
    yet (a one-shot `sync --ended`, no daemon), the files and the vector cache answer, as for a
    hook with no daemon: an offline session end then pays no LanceDB import and index sync
    (~1.5 s) before its one `claude -p`. Else a sync first, without the search background
    (~100 probe searches, ~1.7 s in a young store: per chunk)."""
    if warm := searcher.index.connected:
        searcher.sync(waiting=True, background=False)
    else:
        searcher.load_memories()  # with what the pass wrote so far
    found = searcher.run(SearchQuery(text, limit=count), sync=False, use_index=warm)
    return [(hit.memory.id, hit.memory.subject) for hit in found.hits]
