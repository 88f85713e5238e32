"""The commit-time check (`local-recall check`, the `local-recall-check` pre-commit hook): a
memory file about to be committed must parse, hold no unresolved merge conflict, and hold no
secret or `<private>` span. One line per bad file; docs/team.md#ci.

Without paths it checks what is staged — the blobs in git's index, which is what the commit
will hold, whatever the working tree says — read with one `git diff --cached` and one
`git cat-file --batch`.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from local_recall.errors import InvalidMemoryFile, RecallError
from local_recall.lifecycle.git_env import git_environment
from local_recall.memory.format import parse_memory_text
from local_recall.memory.store_files import claimed_id
from local_recall.redaction.private import private_tags
from local_recall.redaction.secrets import find_secrets

RECALL_FOLDER = "local-recall"
MAX_FILE_BYTES = 2_000_000
GIT_TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class Checked:
    path: str
    problems: tuple[str, ...]  # empty: the file may be committed

    @property
    def line(self) -> str:
        return f"{self.path}: {'; '.join(self.problems)}"


def is_memory_path(path: str) -> bool:
    """`local-recall/<folder>/<name>.md`: where memory files live (any kind of memory)."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    return (
        len(parts) >= 3
        and parts[-3] == RECALL_FOLDER
        and parts[-1].endswith(".md")
        and not parts[-1].startswith(".")
    )


def name_problem(path: str, *, canonical_exists: bool) -> str | None:
    """Why a memory file's name is wrong: the id spelled otherwise than `<lowercase dashed
    uuid>.md` is never read, and beside the canonical file it is a second file for one id."""
    name = PurePosixPath(path.replace("\\", "/")).name
    memory_id = claimed_id(name)
    if memory_id is None or name == f"{memory_id}.md":
        return None
    problem = f"named {name!r}: local-recall reads only {memory_id}.md (rename it)"
    if canonical_exists:
        problem += "; another file claims this id: delete one of them"
    return problem


def check_text(path: str, text: str, *, canonical_exists: bool = False) -> Checked:
    """Everything wrong with one memory file's text (it is never printed: a secret stays put).
    `canonical_exists`: the `<id>.md` its name claims exists beside it."""
    problems: list[str] = []
    misnamed = name_problem(path, canonical_exists=canonical_exists)
    if misnamed is not None:
        problems.append(misnamed)
    try:
        parse_memory_text(text, Path(path))
    except InvalidMemoryFile as exc:
        problems.append(exc.reason)
    for finding in find_secrets(text):
        problems.append(f"line {finding.line}: looks like a secret ({finding.kind})")
    for at in private_tags(text):
        problems.append(f"line {text.count(chr(10), 0, at) + 1}: a <private> span")
    return Checked(path, tuple(dict.fromkeys(problems)))


def check_paths(paths: Iterable[str]) -> list[Checked]:
    """Check files in the working tree; a folder is searched for memory files."""
    results = []
    for path in _expand(paths):
        try:
            with open(path, "rb") as handle:
                raw = handle.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            results.append(Checked(path, (f"cannot read: {exc.strerror or exc}",)))
            continue
        results.append(_check_bytes(path, raw, _canonical_exists(Path(path))))
    return results


def _canonical_exists(path: Path) -> bool:
    memory_id = claimed_id(path.name)
    return memory_id is not None and os.path.lexists(path.parent / f"{memory_id}.md")


def check_staged(root: Path, environ: Mapping[str, str] | None = None) -> list[Checked]:
    """Check the memory files staged for the next commit (added, copied, modified, renamed)."""
    listed = _git(
        root,
        ["diff", "--cached", "--name-only", "--relative", "--diff-filter=ACMR", "-z"],
        environ,
    )
    paths = [p for p in listed.decode("utf-8", "surrogateescape").split("\0") if is_memory_path(p)]
    if not paths:
        return []
    request = "".join(f":./{p}\n" for p in paths).encode("utf-8", "surrogateescape")
    out = _git(root, ["cat-file", "--batch"], environ, stdin=request)
    results = []
    at = 0
    for path in paths:
        header_end = out.index(b"\n", at)
        header = out[at:header_end].split()
        if len(header) != 3 or header[1] != b"blob":
            results.append(Checked(path, ("not a regular file in the index",)))
            at = header_end + 1
            continue
        size = int(header[2])
        blob = out[header_end + 1 : header_end + 1 + size]
        at = header_end + 1 + size + 1  # the blob is followed by a newline
        results.append(_check_bytes(path, blob, _canonical_exists(root / path)))
    return results


def _check_bytes(path: str, raw: bytes, canonical_exists: bool = False) -> Checked:
    if len(raw) > MAX_FILE_BYTES:
        return Checked(path, (f"larger than {MAX_FILE_BYTES} bytes",))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Checked(path, ("not UTF-8 text",))
    return check_text(path, text, canonical_exists=canonical_exists)


def _expand(paths: Iterable[str]) -> Iterator[str]:
    for raw in paths:
        if os.path.isdir(raw):
            found = (str(p) for p in Path(raw).rglob("*.md") if p.is_file() and not p.is_symlink())
            yield from sorted(p for p in found if is_memory_path(p))
        else:
            yield raw


def _git(
    root: Path, args: list[str], environ: Mapping[str, str] | None, stdin: bytes | None = None
) -> bytes:
    env = git_environment(environ)
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            input=stdin,
            capture_output=True,
            timeout=GIT_TIMEOUT_SECONDS,
            env=env,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise RecallError(f"cannot run git: {exc}") from None
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RecallError(f"git {args[0]} failed: {detail[0] if detail else done.returncode}")
    return done.stdout
