"""What the search index should hold for a memory, and what a sync must change: pure decisions.

Every memory becomes one index row. Two fingerprints say when the row is out of date:

- `text`: a hash of the *embedded* text (subject + body, and the passages cut from it). When it
  changes the memory is embedded again: the only expensive step.
- `meta`: a hash of everything else the row carries (keywords, scope, occurred_at, kind and the
  full-text document). When only it changes the row is rewritten with its old vector.

Keywords are deliberately not embedded: they are derived from (or added to) the subject and
body, carry little new meaning for a sentence embedder, and people edit them; editing them, the
scope or the date must not cost an embedding.

`decide_rebuild` says when the whole index must be rebuilt instead (no index, another embedder,
another INDEX_FORMAT); sync.py carries out both decisions.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from local_recall.memory.model import Memory
from local_recall.memory.timestamps import format_timestamp
from local_recall.search.text_terms import identifier_parts

MIN_PASSAGE_BODY_CHARS = 200
MAX_PASSAGES = 16  # sentences of a long body beyond these are covered by the whole-text vector
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")

INDEX_FORMAT: Final = 2  # bump when the tables' columns change: every index is rebuilt
# Bump when what is embedded changes (every memory is embedded again) ...
TEXT_RECIPE = "text-3"
# ... or when the rest of the row changes shape (rows are rewritten, vectors kept).
META_RECIPE = "meta-1"
PENDING: Final = "pending:"  # text_fp prefix of a row written without a vector


@dataclass(frozen=True, slots=True)
class Fingerprint:
    text: str
    meta: str


@dataclass(frozen=True, slots=True)
class IndexPlan:
    to_embed: tuple[str, ...]  # new, or its embedded text changed
    to_update: tuple[str, ...]  # metadata only: rewritten without embedding
    to_remove: tuple[str, ...]  # in the index, no longer a readable file

    @property
    def is_empty(self) -> bool:
        return not (self.to_embed or self.to_update or self.to_remove)


@dataclass(frozen=True, slots=True)
class IndexMeta:
    """What meta.json records. `embedder` is None for an index of text-only rows."""

    format: int
    embedder: str | None  # embedder_fingerprint(), e.g. "minilm:all-MiniLM-L6-v2-int8:384"
    identity: str  # provider:model, comparable without asking the embedder anything
    dim: int

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "embedder": self.embedder,
            "identity": self.identity,
            "dim": self.dim,
        }


def decide_rebuild(meta: IndexMeta | None, *, fingerprint: str | None, identity: str) -> str | None:
    """Why the whole index must be rebuilt, or None. `fingerprint` is None when the embedder
    cannot be asked right now: then an index of the configured model is kept as it is."""
    if meta is None:
        return "no index yet"
    if meta.format != INDEX_FORMAT:
        return f"index format {meta.format} → {INDEX_FORMAT}"
    if fingerprint is not None:
        if meta.embedder != fingerprint:
            return f"embedder {meta.embedder or 'none'} → {fingerprint}"
        return None
    if meta.identity != identity:
        return f"embedder {meta.identity} → {identity} (not reachable: text-only rows)"
    return None


def plan_index_sync(
    on_disk: Mapping[str, Fingerprint], indexed: Mapping[str, Fingerprint]
) -> IndexPlan:
    """Compare the fingerprints of the memory files with those the index holds.

    `on_disk` holds only files that parse. A file that stopped parsing is therefore removed
    from the index: its memory drops out of results until the file is fixed (and is then
    embedded again — one memory, not a rebuild). The file itself is never touched.
    Keys come out sorted so a plan is deterministic."""
    to_embed: list[str] = []
    to_update: list[str] = []
    for key in sorted(on_disk):
        have = indexed.get(key)
        want = on_disk[key]
        if have is None or have.text != want.text:
            to_embed.append(key)
        elif have.meta != want.meta:
            to_update.append(key)
    to_remove = sorted(key for key in indexed if key not in on_disk)
    return IndexPlan(tuple(to_embed), tuple(to_update), tuple(to_remove))


# --- what a row holds -----------------------------------------------------------------------


def row_key(kind: str, memory_id: str) -> str:
    """Episodic and thinking memories share one table; the key keeps them apart."""
    return f"{kind}/{memory_id}"


def embedded_text(memory: Memory) -> str:
    """Subject, then body — unless the body already starts with the subject (no echo)."""
    subject = " ".join(memory.subject.split())
    body_head = " ".join(memory.body[: len(subject) * 2 + 16].split())
    if body_head.startswith(subject):
        return memory.body
    return f"{memory.subject}\n{memory.body}"


def passages(memory: Memory) -> list[str]:
    """The sentences of a multi-sentence body, each prefixed with the subject for context.

    A question usually matches one sentence of a memory; the whole-text vector of a long body
    blurs it. Each passage gets its own vector and a memory scores by its best vector (measured
    on LoCoMo turns: dense R@5 0.46 → 0.51; docs/search.md). Sentences of fewer than three
    words carry too little to embed alone. A body under MIN_PASSAGE_BODY_CHARS or of one
    sentence has no passages: its whole-text vector is already that focused (measured: same
    recall, a third of the extra embeddings)."""
    if len(memory.body) < MIN_PASSAGE_BODY_CHARS:
        return []
    sentences = [s.strip() for s in _SENTENCE_END.split(memory.body)]
    sentences = [s for s in sentences if len(s.split()) >= 3]
    if len(sentences) < 2:
        return []
    subject = memory.subject
    return [s if s in subject else f"{subject}\n{s}" for s in sentences[:MAX_PASSAGES]]


def fts_document(memory: Memory, keywords: Sequence[str]) -> str:
    """The full-text document: subject, keywords, body, then the words inside identifiers."""
    extra = identifier_parts(f"{memory.subject}\n{' '.join(keywords)}\n{memory.body}")
    parts = [memory.subject, " ; ".join(keywords), memory.body]
    if extra:
        parts.append(" ".join(extra))
    return "\n".join(parts)


def fingerprint(memory: Memory, keywords: Sequence[str]) -> Fingerprint:
    text = _digest(TEXT_RECIPE, "\x00".join([embedded_text(memory), *passages(memory)]))
    meta = _digest(
        META_RECIPE,
        json.dumps(
            [
                memory.kind,
                list(keywords),
                memory.applies_to,
                format_timestamp(memory.occurred_at),
                memory.occurred_at.timestamp(),
                memory.subject,
                memory.content_hash,
            ],
            ensure_ascii=False,
        ),
    )
    return Fingerprint(text=text, meta=meta)


def _digest(recipe: str, text: str) -> str:
    return hashlib.blake2b(f"{recipe}\x00{text}".encode(), digest_size=16).hexdigest()
