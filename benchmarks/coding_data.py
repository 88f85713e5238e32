"""The coding benchmark's data: hand-written memories and prompts per project, the padding from
each project's history, the stores built from them (coding_bench.py runs the benchmark).

    projects = load_projects()                       # benchmarks/coding/*.toml
    prompts = prompts_in(project, "user")            # style: "commit" or "user"
    padding = project_padding(project, repos, cache) # None when the clone is absent
    items = store_items(project, padding, size)      # the core, then history newest first
    recall, ids = build_store(root, items, embedder) # memory files, indexed

Data locations come from the command line or the environment, never from a path in the code:
`$CODING_BENCH_REPOS` holds one `git clone` per project, named after it (`pip/`, `celery/`...).
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tomllib
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
DATA = HERE / "coding"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(PROJECT))

import coding_history  # noqa: E402

from local_recall.memory.drafts import make_draft  # noqa: E402
from local_recall.memory.format import render_memory  # noqa: E402
from local_recall.memory.model import Memory, content_hash  # noqa: E402
from local_recall.recall import Recall, Settings  # noqa: E402
from local_recall.repo.files import write_text_atomic  # noqa: E402
from local_recall.search.embedders import MiniLMEmbedder  # noqa: E402

SPLITS = ("tune", "held-out")
# "commit": prompts written from the projects' commit subjects (the project's split applies);
# "user": a second set in the words of bug reports and questions (coding/user/), held out for
# every project: nothing that fits a constant may read it (fit_prompts, tier_fit.py).
STYLES = ("commit", "user")
USER = DATA / "user"
_ID_NAMESPACE = uuid.UUID("6f1c1d1e-8a55-4b8e-9d8e-2b3c0c0de222")


@dataclass(frozen=True, slots=True)
class Item:
    """One memory of a store: hand-written (key = its id) or from history (key = its source)."""

    key: str
    subject: str
    body: str
    keywords: tuple[str, ...]
    scope: str
    date: str
    refs: tuple[str, ...] = ()
    hand: bool = False


@dataclass(frozen=True, slots=True)
class Prompt:
    project: str
    text: str
    kind: str  # positive / negative (in-domain, no answer) / generic
    answers: frozenset[str] = frozenset()  # item keys
    style: str = "commit"


@dataclass(frozen=True, slots=True)
class ProjectData:
    name: str
    repository: str
    commit: str
    changelogs: tuple[tuple[str, str], ...]
    split: str
    memories: tuple[Item, ...]
    prompts: tuple[Prompt, ...] = field(default=())  # commit style
    user_prompts: tuple[Prompt, ...] = field(default=())  # user style (always held out)


def load_projects(names: Sequence[str] = (), data: Path = DATA) -> list[ProjectData]:
    found = []
    for path in sorted(data.glob("*.toml")):
        if path.stem == "generic" or (names and path.stem not in names):
            continue
        found.append(load_project(path))
    return found


def prompt_split(project: ProjectData, prompt: Prompt) -> str:
    """The split a prompt is reported under: user-style prompts are held out everywhere."""
    return "held-out" if prompt.style == "user" else project.split


def prompts_in(project: ProjectData, style: str) -> tuple[Prompt, ...]:
    """The project's prompts of one style ("commit", "user") or of both ("both")."""
    if style not in (*STYLES, "both"):
        raise ValueError(f"style must be one of {STYLES} or 'both'")
    return (project.prompts if style != "user" else ()) + (
        project.user_prompts if style != "commit" else ()
    )


def fit_prompts(project: ProjectData) -> tuple[Prompt, ...]:
    """What a fit (decision_fit.py) may read: commit-style prompts of a `tune` project."""
    if project.split != "tune":
        return ()
    return tuple(p for p in project.prompts if p.style == "commit")


def load_project(path: Path) -> ProjectData:
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    name = raw["project"]
    if raw.get("split") not in SPLITS:
        raise ValueError(f"{path.name}: split must be one of {SPLITS}")
    memories = tuple(
        Item(
            key=m["id"],
            subject=m["subject"],
            body=m["body"].strip(),
            keywords=tuple(m.get("keywords", ())),
            scope=m.get("scope", "global"),
            date=m["date"],
            refs=tuple(str(r) for r in m.get("refs", ())),
            hand=True,
        )
        for m in raw.get("memory", [])
    )
    ids = [m.key for m in memories]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path.name}: duplicate memory ids")
    prompts = _prompts(path.name, name, raw, ("prompt", "negative"), ids, "commit")
    user_path = path.parent / "user" / path.name
    user: list[Prompt] = []
    if user_path.exists():
        extra = tomllib.loads(user_path.read_text(encoding="utf-8"))
        keys = ("user_prompt", "user_negative")
        user = _prompts(user_path.name, name, extra, keys, ids, "user")
    changelogs = tuple(tuple(c.rsplit(":", 1)) for c in raw.get("changelogs", ()))
    return ProjectData(
        name,
        raw["repository"],
        raw["commit"],
        changelogs,
        raw["split"],
        memories,
        tuple(prompts),  # type: ignore[arg-type]
        tuple(user),
    )


def _prompts(
    where: str,
    project: str,
    raw: dict[str, Any],
    keys: tuple[str, str],
    ids: Sequence[str],
    style: str,
) -> list[Prompt]:
    """The answered (`keys[0]`) and no-answer (`keys[1]`) prompts of one table."""
    prompts = []
    for p in raw.get(keys[0], []):
        answers = frozenset(p["answers"])
        unknown = {a for a in answers if a not in ids and ":" not in a}
        if not answers or unknown:
            raise ValueError(f"{where}: prompt {p['text']!r} answers {sorted(unknown)}")
        prompts.append(Prompt(project, p["text"], "positive", answers, style))
    prompts += [Prompt(project, n["text"], "negative", style=style) for n in raw.get(keys[1], [])]
    return prompts


def generic_prompts(split: str, data: Path = DATA, style: str = "commit") -> list[str]:
    """Generic prompts of a split; the user-style ones (key `user`) are held out, always."""
    raw = tomllib.loads((data / "generic.toml").read_text(encoding="utf-8"))
    if style == "user":
        return list(raw["user"])
    return list(raw["tune" if split == "tune" else "held_out"])


def shared_run(text: str, other: str, words: int = 4) -> str | None:
    """The first run of `words` consecutive words `text` shares with `other` (case, punctuation
    and markup ignored), None when there is none: a user-style prompt must not echo the
    subject of the memory that answers it."""

    def runs(value: str) -> list[tuple[str, ...]]:
        tokens = re.findall(r"[a-z0-9_]+", value.lower())
        return [tuple(tokens[i : i + words]) for i in range(len(tokens) - words + 1)]

    theirs = set(runs(other))
    return next((" ".join(run) for run in runs(text) if run in theirs), None)


# --- padding ------------------------------------------------------------------------------


def clone_status(project: ProjectData, repos: Path | None) -> str | None:
    """None when the clone is usable, else what to do to get it."""
    how = (
        f"git clone {project.repository} $CODING_BENCH_REPOS/{project.name} "
        f"(the benchmark reads commit {project.commit[:12]})"
    )
    if repos is None:
        return f"no $CODING_BENCH_REPOS: {how}"
    clone = repos / project.name
    if not clone.exists():
        return f"{clone} is missing: {how}"
    done = subprocess.run(
        ["git", "-C", str(clone), "cat-file", "-e", f"{project.commit}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        return f"{clone} lacks commit {project.commit[:12]}: git -C {clone} fetch origin"
    return None


def project_padding(
    project: ProjectData, repos: Path | None, cache: Path
) -> list[coding_history.HistoryMemory] | None:
    """The project's history as memories (cached as JSON lines), None without a clone."""
    if clone_status(project, repos) is not None:
        return None
    assert repos is not None
    path = cache / f"history-{project.name}-{project.commit[:12]}-r{coding_history.RECIPE}.jsonl"
    if path.exists():
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        return [
            coding_history.HistoryMemory(
                **{**r, "keywords": tuple(r["keywords"]), "refs": tuple(r["refs"])}
            )
            for r in rows
        ]
    items = coding_history.history(repos / project.name, project.commit, project.changelogs)
    cache.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(asdict(i)) + "\n" for i in items), encoding="utf-8")
    return items


def store_items(
    project: ProjectData, padding: Sequence[coding_history.HistoryMemory] | None, size: int
) -> list[Item]:
    """The hand-written memories, then history newest first up to `size` memories. History that
    a hand-written memory was written from (a shared issue / PR number or commit) is left out."""
    items = list(project.memories)
    claimed = {r for m in project.memories for r in m.refs}
    for entry in padding or ():
        if len(items) >= size:
            break
        if claimed.intersection(entry.refs):
            continue
        items.append(
            Item(
                entry.key,
                entry.subject,
                entry.body,
                entry.keywords,
                entry.scope,
                entry.date,
                entry.refs,
            )
        )
    return items


# --- stores -------------------------------------------------------------------------------


def memory_id(project: str, key: str) -> str:
    return str(uuid.uuid5(_ID_NAMESPACE, f"{project}/{key}"))


class CachingEmbedder(MiniLMEmbedder):
    """MiniLM with every document vector kept on disk by text: the three store sizes share
    most memories, and re-running after a change to the decision embeds nothing again."""

    def __init__(self, cache: Path) -> None:
        super().__init__()
        self._path = cache
        self._vectors: dict[str, Any] = {}
        self._dirty = False
        if cache.exists():
            import numpy as np

            with np.load(cache) as loaded:
                self._vectors = dict(zip(loaded["keys"].tolist(), loaded["vectors"], strict=True))

    def embed_documents(self, texts: Sequence[str]) -> Any:
        import numpy as np

        keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        missing = sorted(
            {k: t for k, t in zip(keys, texts, strict=True) if k not in self._vectors}.items()
        )
        if missing:
            fresh = super().embed_documents([t for _, t in missing])
            self._vectors.update({k: v for (k, _), v in zip(missing, fresh, strict=True)})
            self._dirty = True
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vectors[k] for k in keys])

    def save(self) -> None:
        if not self._dirty:
            return
        import numpy as np

        self._path.parent.mkdir(parents=True, exist_ok=True)
        keys = np.array(list(self._vectors))
        vectors = np.stack(list(self._vectors.values())) if self._vectors else np.zeros((0, 384))
        temporary = self._path.with_suffix(".tmp.npz")
        np.savez(temporary, keys=keys, vectors=vectors)
        temporary.replace(self._path)
        self._dirty = False


def open_store(root: Path, embedder: MiniLMEmbedder) -> Recall:
    recall = Recall.open(
        settings=Settings(root=root, environ={}, embedder_factory=lambda _config: embedder)
    )
    recall.init()
    recall.searcher.keep_keywords()  # as the daemon does: full-text candidates in process
    return recall


def build_store(
    root: Path, project: str, items: Sequence[Item], embedder: MiniLMEmbedder
) -> tuple[Recall, dict[str, str]]:
    """A git repository at `root` whose memory files are `items`, indexed. Returns the Recall
    and item key → memory id. An existing store with the same items is reused as it is."""
    manifest = root / "benchmark-items.json"
    wanted = [asdict(i) for i in items]
    ids = {i.key: memory_id(project, i.key) for i in items}
    fresh = not manifest.exists() or json.loads(manifest.read_text()) != wanted
    root.mkdir(parents=True, exist_ok=True)
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    recall = open_store(root, embedder)
    if fresh:
        folder = recall.layout.episodic_dir
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.md"):
            old.unlink()
        for item in items:
            draft = make_draft(
                subject=item.subject,
                body=item.body,
                keywords=list(item.keywords) or None,
                applies_to=item.scope,
                occurred_at=datetime.fromisoformat(item.date.replace("Z", "+00:00")),
                source="coding-bench",
            )
            memory_id_ = ids[item.key]
            path = recall.memories.path_of(memory_id_)
            memory = Memory(
                id=memory_id_,
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
    recall.sync_index()
    if fresh:
        manifest.write_text(json.dumps(wanted), encoding="utf-8")
    return recall, ids
