"""Retrieval quality on the LoCoMo dev split, through the real library.

    .venv/bin/python benchmarks/locomo.py [--data DIR] [--modes hybrid,semantic,text,fuzzy]
                                          [--corpora obs,turns] [--json OUT] [--workdir DIR]

Data: LoCoMo (public: the snap-research/locomo repository), the dev conversations as conv-*.json
files in --data DIR, else $LOCOMO_DATA, else benchmarks/data/locomo-dev/, which
`python benchmarks/locomo_data.py` fills (it says so when none holds them).
Scoring rule: as in benchmarks/README.md. Each conversation is one memory store: its memories are
written as memory files in a temporary repository, indexed with
`Recall.sync_index()` and queried with `Recall.search(SearchQuery(question, limit=10, mode=...))`.
Memory: subject = the first ~100 characters of the text, body = the text, occurred_at = the
session's date (plus one second per turn, so order is kept but recency never dominates).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

_ID_NAMESPACE = uuid.UUID("3b7c2f0e-5a1d-4c8e-9f7a-1d2e3c4b5a69")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from locomo_data import data_dir  # noqa: E402

from local_recall.memory.drafts import make_draft  # noqa: E402
from local_recall.memory.format import render_memory  # noqa: E402
from local_recall.memory.model import Memory, content_hash  # noqa: E402
from local_recall.recall import Recall, SearchQuery, Settings  # noqa: E402
from local_recall.repo.files import write_text_atomic  # noqa: E402
from local_recall.search.embedders import MiniLMEmbedder  # noqa: E402

MODES = ("hybrid", "semantic", "text", "fuzzy")
CORPORA = ("obs", "turns")
_DIA = re.compile(r"D:?(\d+):(\d+)")


@dataclass(frozen=True, slots=True)
class Item:
    text: str
    labels: frozenset[str]
    when: datetime


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    evidence: frozenset[str]


def dia_ids(value: Any) -> frozenset[str]:
    """Every D<a>:<b> in a string or nested list, normalised ("D:11:26" → "D11:26")."""
    if isinstance(value, list | tuple):
        return frozenset().union(*(dia_ids(v) for v in value)) if value else frozenset()
    return frozenset(f"D{a}:{b}" for a, b in _DIA.findall(str(value)))


def session_time(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def sessions(conv: dict[str, Any]) -> list[int]:
    return sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))


def corpus(conv: dict[str, Any], kind: str) -> list[Item]:
    items: list[Item] = []
    for n in sessions(conv):
        start = session_time(conv[f"session_{n}_date_time"])
        if kind == "turns":
            for i, turn in enumerate(conv[f"session_{n}"]):
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [shares a photo of {turn['blip_caption']}]"
                items.append(Item(text, dia_ids(turn["dia_id"]), start + timedelta(seconds=i)))
        else:
            facts = conv.get(f"session_{n}_observation") or {}
            i = 0
            for speaker_facts in facts.values():
                for fact, label in speaker_facts:
                    items.append(Item(fact, dia_ids(label), start + timedelta(seconds=i)))
                    i += 1
    return items


def questions(conv: dict[str, Any]) -> list[Question]:
    return [
        Question(q["question"], dia_ids(q["evidence"]))
        for q in conv["qa"]
        if q.get("category") in (1, 2, 3, 4) and dia_ids(q.get("evidence") or [])
    ]


def subject_of(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat.rfind(" ", 0, limit)
    return flat[: cut if cut > limit // 2 else limit]


def load(recall: Recall, items: Sequence[Item]) -> dict[str, frozenset[str]]:
    """Write one memory file per item (validated and redacted by `make_draft`, as every write
    path is); return memory id → labels. Files are written directly rather than through
    `Recall.save`, whose per-call dedup scan makes n saves O(n²) (measured: see README)."""
    recall.layout.episodic_dir.mkdir(parents=True, exist_ok=True)
    labels: dict[str, frozenset[str]] = {}
    for number, item in enumerate(items):
        draft = make_draft(
            subject=subject_of(item.text),
            body=item.text,
            keywords=None,
            applies_to="global",
            occurred_at=item.when,
            source="locomo",
        )
        memory_id = locomo_memory_id(number)
        path = recall.memories.path_of(memory_id)
        memory = Memory(
            id=memory_id,
            subject=draft.subject,
            body=draft.body,
            keywords=draft.keywords,
            applies_to=draft.applies_to,
            occurred_at=draft.occurred_at,
            content_hash=content_hash(draft.body),
            source=draft.source,
            path=path,
        )
        write_text_atomic(path, render_memory(memory))
        labels[memory_id] = item.labels
    return labels


def score(
    ranked: Sequence[Sequence[frozenset[str]]], wanted: Sequence[frozenset[str]]
) -> dict[str, float]:
    """Recall@1/5/10 and MRR@10 over questions (ranked: the labels of each hit, best first)."""
    n = len(wanted)
    out = {"R@1": 0.0, "R@5": 0.0, "R@10": 0.0, "MRR@10": 0.0}
    for hits, evidence in zip(ranked, wanted, strict=True):
        first = next((i for i, labels in enumerate(hits[:10]) if labels & evidence), None)
        if first is None:
            continue
        out["MRR@10"] += 1.0 / (first + 1)
        for k in (1, 5, 10):
            if first < k:
                out[f"R@{k}"] += 1
    return {k: v / n for k, v in out.items()} if n else out


def open_store(root: Path, embedder: MiniLMEmbedder, *, keywords: bool = True) -> Recall:
    recall = Recall.open(
        settings=Settings(root=root, environ={}, embedder_factory=lambda _config: embedder)
    )
    recall.init()
    if keywords:  # as the daemon and the MCP server do: full-text candidates in process
        recall.searcher.keep_keywords()
    return recall


def run(
    data: Path,
    modes: Iterable[str],
    corpora: Iterable[str],
    workdir: Path | None,
    *,
    prompt: bool = False,
    keywords: bool = True,
) -> dict[str, Any]:
    """`prompt`: search as the prompt hook does (`SearchQuery(prompt=True)`), not as `search`
    does; the two differ in `text` mode only (a kept keyword index answers a prompt's, LanceDB
    a text search). `keywords=False`: no in-process keyword index, LanceDB's full-text query
    for every mode, as a process without the daemon searches."""
    embedder = MiniLMEmbedder()
    embedder.load()
    results: dict[str, Any] = {"per_conversation": {}, "timings": {}}
    modes, corpora = list(modes), list(corpora)
    ranked: dict[tuple[str, str], list[Sequence[frozenset[str]]]] = {}
    wanted: dict[str, list[frozenset[str]]] = {c: [] for c in corpora}
    timing: dict[str, float] = {
        "write": 0.0,
        "index": 0.0,
        "search": 0.0,
        "searches": 0,
        "memories": 0,
    }
    base = workdir or Path(tempfile.mkdtemp(prefix="locomo-"))
    for path in sorted(data.glob("conv-*.json")):
        conv = json.loads(path.read_text(encoding="utf-8"))
        qs = questions(conv)
        for kind in corpora:
            root = base / f"{path.stem}-{kind}"
            fresh = not (root / "local-recall").is_dir()
            root.mkdir(parents=True, exist_ok=True)
            recall = open_store(root, embedder, keywords=keywords)
            items = corpus(conv, kind)
            started = time.perf_counter()
            labels = load(recall, items) if fresh else _labels(recall, items)
            timing["write"] += time.perf_counter() - started
            started = time.perf_counter()
            recall.sync_index()
            timing["index"] += time.perf_counter() - started
            timing["memories"] += len(items)
            wanted[kind].extend(q.evidence for q in qs)
            for mode in modes:
                started = time.perf_counter()
                got = [
                    [
                        labels[h.id]
                        for h in recall.search(
                            SearchQuery(q.text, limit=10, mode=mode, min_score=0.0, prompt=prompt),
                            sync=False,
                        )
                    ]
                    for q in qs
                ]
                timing["search"] += time.perf_counter() - started
                timing["searches"] += len(qs)
                ranked.setdefault((kind, mode), []).extend(got)
                results["per_conversation"][f"{path.stem}/{kind}/{mode}"] = score(
                    got, [q.evidence for q in qs]
                )
    results["overall"] = {
        f"{kind}/{mode}": score(ranked[(kind, mode)], wanted[kind])
        for kind in corpora
        for mode in modes
    }
    results["questions"] = len(wanted[corpora[0]]) if corpora else 0
    results["timings"] = {
        "write_s": round(timing["write"], 2),
        "index_s": round(timing["index"], 2),
        "memories": int(timing["memories"]),
        "search_ms_mean": round(1000 * timing["search"] / max(1, timing["searches"]), 2),
    }
    return results


def _labels(recall: Recall, items: Sequence[Item]) -> dict[str, frozenset[str]]:
    return {locomo_memory_id(n): item.labels for n, item in enumerate(items)}


def locomo_memory_id(number: int) -> str:
    """A fixed id per observation that looks like the random ids the product writes: the
    prompt hook's pointers name memories by their first 8 hex digits (a unique prefix)."""
    return str(uuid.uuid5(_ID_NAMESPACE, f"locomo/{number}"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="default: $LOCOMO_DATA, else "
        "benchmarks/data/locomo-dev/ (python benchmarks/locomo_data.py)",
    )
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--corpora", default=",".join(CORPORA))
    parser.add_argument("--json", type=Path, default=None, help="Also write the results here.")
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="Keep (and reuse) the repositories and indexes here.",
    )
    parser.add_argument(
        "--prompt",
        action="store_true",
        help="Search as the prompt hook does, not as `search` (they differ in text mode).",
    )
    parser.add_argument(
        "--lancedb-text",
        action="store_true",
        help="No in-process keyword index: full text from LanceDB's query in every mode, "
        "as a process without the daemon searches.",
    )
    args = parser.parse_args(argv)
    data = data_dir(args.data)
    modes, corpora = args.modes.split(","), args.corpora.split(",")
    results = run(
        data, modes, corpora, args.workdir, prompt=args.prompt, keywords=not args.lancedb_text
    )
    print(f"LoCoMo dev: {results['questions']} questions per corpus")
    print(f"{'corpus/mode':<16} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR@10':>7}")
    for name, s in results["overall"].items():
        print(f"{name:<16} {s['R@1']:6.3f} {s['R@5']:6.3f} {s['R@10']:6.3f} {s['MRR@10']:7.3f}")
    print("timings:", json.dumps(results["timings"]))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
