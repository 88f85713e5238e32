"""`doctor --fix`: a memory file a person wrote that the store skips — named `notes.md`
instead of `<id>.md`, or missing `subject`/`occurred_at`/the frontmatter itself — made a memory,
losing nothing.

The fix edits the text, never re-renders it: the missing keys are added as lines at the top of
the frontmatter (comments, key order and the body stay byte for byte), and a misnamed file is
renamed to its id (the `id:` it states when that is a free UUID, else a new one). The fixed text
must parse as a memory before anything is written; the new file is written atomically before
the old name is removed. What cannot be fixed this way — a symlink, broken YAML, a YAML bomb,
conflict markers, an empty body, another file already holding the id — is left untouched and
said why.

Not every stray file is a memory: a README or index of the folder is left alone; a
file whose text a memory already holds is a copy, not a second memory; and `<id> 2.md`,
`<id> (conflicted copy …).md`, `<id>.sync-conflict-….md` — a Finder, Dropbox or Syncthing copy
of a memory — would become a second, perhaps contradicting, live memory: --fix says so and
leaves the person to merge it, or to rename it to adopt it on purpose.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Collection, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import yaml

from local_recall.errors import InvalidMemoryFile, InvalidMemoryId, StorageError
from local_recall.memory.format import parse_memory_text
from local_recall.memory.model import (
    MAX_SUBJECT_CHARS,
    Memory,
    normalise_body,
    parse_memory_id,
)
from local_recall.memory.store import MemoryStore
from local_recall.memory.store_files import MAX_FILE_BYTES, is_folder_note
from local_recall.memory.timestamps import format_timestamp
from local_recall.memory.yaml_guard import FrontmatterRefused, load_frontmatter
from local_recall.repo.files import read_bytes_nofollow, write_text_atomic
from local_recall.repo.locks import held_lock

_BLOCK = re.compile(r"\A(\ufeff?---[ \t]*\n)(.*?\n)?((?:---|\.\.\.)[ \t]*(?:\n|\Z))", re.DOTALL)
_ID_LINE = re.compile(r"^id[ \t]*:.*$", re.MULTILINE)
# A memory's name followed by something: a copy a file manager or a sync tool made.
_COPY_NAME = re.compile(
    r"\A([0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12})(.+)\Z", re.DOTALL
)


def is_fixable(reason: str) -> bool:
    """Is a skipped file's reason one --fix may cure: a wrong name, a missing key or
    frontmatter (whether it can is decided by `plan_repair`)."""
    return "not named" in reason or "missing '" in reason or "no YAML frontmatter" in reason


@dataclass(frozen=True, slots=True)
class Repair:
    """How one skipped file becomes a memory: `text` written to `target`, `source` removed
    when it is another name. `changes` says what was done, for the person."""

    source: Path
    target: Path
    text: str
    changes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Unfixable:
    source: Path
    reason: str


@dataclass(frozen=True, slots=True)
class _Parts:
    opening: str  # the opening `---` line (added when the file had no frontmatter)
    header: str  # the frontmatter's lines as written
    rest: str  # the closing `---` line and the body
    body: str
    data: dict[object, object]


def _split(path: Path, text: str) -> _Parts | Unfixable:
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    block = _BLOCK.match(normalised)
    if block is None:  # plain markdown: all of it is the body
        return _Parts("---\n", "", "---\n\n" + normalised, normalised, {})
    try:
        loaded = load_frontmatter(block.group(2) or "")
    except FrontmatterRefused as exc:
        return Unfixable(path, f"not fixed: {exc}")
    except yaml.YAMLError as exc:
        return Unfixable(path, f"not fixed: the frontmatter is not valid YAML ({exc})")
    if not isinstance(loaded, dict):
        return Unfixable(path, "not fixed: the frontmatter is not a mapping")
    rest, body = normalised[block.start(3) :], normalised[block.end() :]
    return _Parts(block.group(1), block.group(2) or "", rest, body, loaded)


def not_a_memory(name: str) -> str | None:
    """Why a file of this name is left alone by --fix (pure), or None. `name`: with `.md`."""
    stem = name.rsplit(".", 1)[0] if name.lower().endswith(".md") else name
    if is_folder_note(name):
        return f"left alone: {name} is a note about the folder, not a memory"
    copy = _COPY_NAME.match(stem)
    if copy is None:
        return None
    original, suffix = copy.group(1).lower(), copy.group(2)
    try:
        parse_memory_id(stem)
        return None  # another spelling of one id (`_choose_id`), not a copy
    except InvalidMemoryId:
        pass
    kind = "a sync conflict copy" if "conflict" in suffix.lower() else "a copy"
    return (
        f"not fixed: {kind} of memory {original}; merge what differs into it "
        f"(`local-recall edit {original}`) and delete this file, or rename this file to adopt "
        "it as a memory of its own"
    )


def plan_repair(
    path: Path,
    text: str,
    *,
    modified: datetime,
    taken: Collection[str],
    new_id: Callable[[], str],
    held: Mapping[str, str] | None = None,
) -> Repair | Unfixable:
    """The repair of one skipped file (pure). `modified`: the file's mtime (the memory's
    `occurred_at` when it has none); `taken`: ids other files already hold; `held`: the
    normalised bodies the store's memories hold, to the id holding each."""
    parts = _adoptable(path, text, held or {})
    if isinstance(parts, Unfixable):
        return parts
    data, header = parts.data, parts.header
    changes: list[str] = []
    added: list[str] = []
    memory_id = _choose_id(path, data.get("id"), taken)
    if isinstance(memory_id, Unfixable):
        return memory_id
    if memory_id is None:
        memory_id = new_id()
        changes.append(f"given the new id {memory_id}")
    stated = data.get("id")
    if stated is None:
        added.append(f"id: {memory_id}")
    elif str(stated).strip() != memory_id:
        header = _ID_LINE.sub(f"id: {memory_id}", header, count=1)
        changes.append(f"its id {str(stated)[:40]!r} was not usable: now {memory_id}")
    if data.get("subject") in (None, ""):
        subject = _subject_from(parts.body, path)
        added.append(f"subject: {json.dumps(subject, ensure_ascii=False)}")
        changes.append(f"subject taken from the text: {subject!r}")
    if data.get("occurred_at") in (None, ""):
        added.append(f'occurred_at: "{format_timestamp(modified)}"')
        changes.append("occurred_at set to the file's modification time")
    fixed = parts.opening + "".join(f"{line}\n" for line in added) + header + parts.rest
    target = path.with_name(f"{memory_id}.md")
    if target != path:
        changes.insert(0, f"renamed to {target.name}")
    try:
        parse_memory_text(fixed, target)
    except InvalidMemoryFile as exc:
        return Unfixable(path, f"not fixed: {exc.reason}")
    if not changes:
        return Unfixable(path, "not fixed: nothing --fix knows how to change")
    return Repair(path, target, fixed, tuple(changes))


def _adoptable(path: Path, text: str, held: Mapping[str, str]) -> _Parts | Unfixable:
    """The file's parts, unless it is no memory to adopt: a note about the folder, a copy of
    a memory (by its name, or by the text a memory holds), an empty body, broken YAML."""
    refused = not_a_memory(path.name)
    if refused is not None:
        return Unfixable(path, refused)
    parts = _split(path, text)
    if isinstance(parts, Unfixable):
        return parts
    body = normalise_body(parts.body)
    if not body:
        return Unfixable(path, "not fixed: the body is empty (nothing to remember)")
    holder = held.get(body)
    if holder is not None:
        return Unfixable(
            path, f"not fixed: memory {holder} holds the same text (a copy): delete this file"
        )
    return parts


def _choose_id(path: Path, stated: object, taken: Collection[str]) -> str | Unfixable | None:
    """The id the file should have: the UUID its name spells (another spelling of an id is one
    memory in two files: not ours to merge), else the one it states when that is free; None:
    it needs a new one (a copied file stating its original's id gets its own)."""
    try:
        named = parse_memory_id(path.stem)
    except InvalidMemoryId:
        named = None
    if named is not None:
        if named in taken and path.name != f"{named}.md":
            return Unfixable(path, f"not fixed: {named}.md holds this id already")
        return named
    try:
        memory_id = None if stated is None else parse_memory_id(str(stated))
    except InvalidMemoryId:
        return None
    return memory_id if memory_id is not None and memory_id not in taken else None


def _subject_from(body: str, path: Path) -> str:
    """The first heading or line of the body, else the file's name."""
    for line in normalise_body(body).splitlines():
        words = " ".join(line.lstrip("#>*- \t").split())
        if words:
            return words[:MAX_SUBJECT_CHARS]
    return path.stem.replace("-", " ").replace("_", " ")[:MAX_SUBJECT_CHARS] or "Untitled"


def modified_at(path: Path) -> datetime:
    return datetime.fromtimestamp(path.lstat().st_mtime, UTC)


def repair_files(
    problems: Sequence[Path],
    *,
    taken: set[str],
    new_id: Callable[[], str],
    lock_path: Path,
    held: MutableMapping[str, str] | None = None,
) -> list[Repair | Unfixable]:
    """Carry out `plan_repair` for each skipped file, under the store's lock (`lock_path`):
    the fixed text is written atomically under its id, then the old name is removed. `taken`
    (the ids files already hold) and `held` (their bodies) grow with each fix."""
    results: list[Repair | Unfixable] = []
    bodies: MutableMapping[str, str] = {} if held is None else held
    with held_lock(lock_path, timeout=60.0, what="the store lock"):
        for path in problems:
            results.append(_repair_one(path, taken, new_id, bodies))
    return results


def _repair_one(
    path: Path, taken: set[str], new_id: Callable[[], str], held: MutableMapping[str, str]
) -> Repair | Unfixable:
    try:
        text = read_bytes_nofollow(path, MAX_FILE_BYTES).decode("utf-8")
    except UnicodeDecodeError:
        return Unfixable(path, "not fixed: not UTF-8 text")
    except OSError as exc:  # a symlink, a FIFO, too large: never followed or rewritten
        return Unfixable(path, f"not fixed: {exc.strerror or exc}")
    plan = plan_repair(
        path, text, modified=modified_at(path), taken=taken, new_id=new_id, held=held
    )
    if isinstance(plan, Unfixable):
        return plan
    if plan.target != plan.source and os.path.lexists(plan.target):
        return Unfixable(path, f"not fixed: {plan.target.name} exists already")
    try:
        write_text_atomic(plan.target, plan.text)
        if plan.target != plan.source:
            plan.source.unlink()
    except (OSError, StorageError) as exc:
        return Unfixable(path, f"not fixed: {exc}")
    taken.add(plan.target.stem)
    # a second copy of the same new note is a copy of this one now
    held.setdefault(parse_memory_text(plan.text, plan.target).body, plan.target.stem)
    return plan


def plan_complete(path: Path, text: str, memory: Memory) -> Repair | None:
    """A memory read without `occurred_at` or `content_hash` (written by hand: its time from
    git or the file, its hash computed) with both written down, as lines at the top of its
    frontmatter (pure); None when both are there."""
    parts = _split(path, text)
    if isinstance(parts, Unfixable) or not _BLOCK.match(text.replace("\r\n", "\n")):
        return None
    added, changes = [], []
    if parts.data.get("occurred_at") in (None, ""):
        added.append(f'occurred_at: "{format_timestamp(memory.occurred_at)}"')
        changes.append("occurred_at written down (from git, else the file's time)")
    if parts.data.get("content_hash") in (None, ""):
        added.append(f'content_hash: "{memory.content_hash}"')
        changes.append("content_hash written down")
    if not added:
        return None
    fixed = parts.opening + "".join(f"{line}\n" for line in added) + parts.header + parts.rest
    try:
        same = parse_memory_text(fixed, path, kind=memory.kind)
    except InvalidMemoryFile:
        return None
    if same.occurred_at != memory.occurred_at or same.content_hash != memory.content_hash:
        return None
    return Repair(path, path, fixed, tuple(changes))


def complete_memories(store: MemoryStore, memories: Sequence[Memory]) -> list[Repair]:
    """Write down what `plan_complete` adds, under the store's lock; each file read again."""
    done: list[Repair] = []
    with held_lock(store.lock_path, timeout=60.0, what="the store lock"):
        for memory in memories:
            if memory.path is None:
                continue
            try:
                text = read_bytes_nofollow(memory.path, MAX_FILE_BYTES).decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if "occurred_at" in text and "content_hash" in text:  # nearly every file: no YAML
                continue
            plan = plan_complete(memory.path, text, memory)
            if plan is None:
                continue
            try:
                write_text_atomic(plan.target, plan.text)
            except (OSError, StorageError):
                continue
            done.append(plan)
    return done


def repair_store(store: MemoryStore, new_id: Callable[[], str]) -> list[Repair | Unfixable]:
    """`doctor --fix` on one store: the files its scan skips for a wrong name or a missing
    subject or frontmatter, renamed and completed; then the memories read without their
    occurred_at or content_hash get both written down."""
    scan, folder = store.scan(), store.directory
    skipped = [p.path for p in scan.problems if p.path.parent == folder and p.path.suffix]
    taken = {m.id for m in scan.memories} | {p.path.stem for p in scan.problems}
    held = {normalise_body(m.body): m.id for m in scan.memories}
    fixed = repair_files(skipped, taken=taken, new_id=new_id, lock_path=store.lock_path, held=held)
    return [*fixed, *complete_memories(store, scan.memories)]
