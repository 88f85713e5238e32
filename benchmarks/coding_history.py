"""A project's real history turned into memories, deterministically: the coding benchmark's padding.

    .venv/bin/python benchmarks/coding_history.py CLONE --commit SHA [--changelog PATH:FORMAT]
        [--limit 5000] [--jsonl OUT]

CLONE is a `git clone` of the public repository; SHA the commit the benchmark pins (its data file
names it). Two sources, merged newest first:

* **commits** reachable from SHA (no merges, no bots, no version bumps or dependency updates, at
  least four words): subject = the commit's subject without its trailing `(#123)`; body = its
  message without trailers (Signed-off-by, Change-Id, ...) — or the subject when there is none —
  then the files it changed; keywords = identifiers it names; scope = `file:<path>` when it
  changed one source file, else `global`.
* **changelog entries** (one bullet or `.. change::` block of the file at SHA): subject = the
  first sentence; body = the entry and the release it shipped in; keywords = the ``literals``
  it names.

Nothing is invented: every word comes from the repository. Issue / PR numbers and commit ids
are kept as `refs`, so an item that a hand-written memory was written from (its `refs`) can be
left out of the padding (coding_bench.py does this): the right memory stays the only answer.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

MAX_SUBJECT = 120
# Memories are concise (the extractor asks for "a few sentences"): a commit message or changelog
# entry is cut after the sentence that crosses MAX_BODY characters.
MAX_BODY = 400
RECIPE = 2  # bump when what an item holds changes (cached histories are keyed by it)
MAX_KEYWORDS = 8
MAX_FILES = 5

_BOT = re.compile(r"\[bot\]|pre-commit-ci|dependabot|renovate|github-actions", re.IGNORECASE)
_SKIP_SUBJECT = re.compile(
    r"^(merge\b|bump\b|release\b|releasing\b|prepare release|start version|version \d|"
    r"update (dev )?(dependencies|requirements|deps|pins)\b|\[pre-commit\.ci\]|"
    r"pre-commit autoupdate|"
    r"chore\(deps|build\(deps|update changelog|changelog\b|revert \"?bump)"
    r"|\bbump(s|ed)? .* from .* to\b",
    re.IGNORECASE,
)
_TRAILER = re.compile(
    r"^(signed-off-by|co-authored-by|change-id|reviewed-by|reviewed-on|tested-by|"
    r"acked-by|cc|pr-url|closes|fixes|fix|references|see-also|ref|refs|related)\s*:",
    re.IGNORECASE,
)
_PR_SUFFIX = re.compile(r"\s*\((?:#\d+(?:,\s*)?)+\)\s*$")
_REF = re.compile(r"(?:#|issues?/|pull/|:(?:issue|pr|gh|ticket|tickets):`)(\d{2,6})")
_TICKETS = re.compile(r":tickets?:\s*([\d,\s]+)")
_LITERAL = re.compile(r"``([^`]{2,60})``|`([^`]{2,60})`")
_IDENTIFIER = re.compile(
    r"\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\(?\)?"  # dotted.names
    r"|\b[a-z][a-z0-9]*_[a-z0-9_]+\b"  # snake_case
    r"|\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b"  # CamelCase
    r"|--[a-z][a-z0-9-]+"  # --options
)
_ROLE = re.compile(r":(?:[a-z]+:)?[a-z]+:`~?\.?([^`<]+?)(?:\s*<[^>]+>)?`")
_TEST_OR_DOC = re.compile(r"(^|/)(tests?|t|docs?|doc|examples?|news|changes?)(/|$)|\.(rst|md|txt)$")


@dataclass(frozen=True, slots=True)
class HistoryMemory:
    key: str  # "commit:<sha12>" or "changelog:<file>:<n>"
    subject: str
    body: str
    keywords: tuple[str, ...]
    scope: str
    date: str  # ISO 8601 UTC
    refs: tuple[str, ...]  # issue / PR numbers and the commit id it came from


def git(clone: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(clone), *args], capture_output=True, check=True)
    return done.stdout.decode("utf-8", "replace")  # old commits in latin-1


# --- text helpers ---------------------------------------------------------------------------


def plain(text: str) -> str:
    """reStructuredText / Markdown markup dropped: roles, literals, links, emphasis."""
    text = re.sub(r"`([^`<]+?)\s*<[^>]+>`_+", r"\1", text)  # `label <url>`_
    text = re.sub(r":(?:issue|pr|gh|ticket|ghsa|bpo|user):`([^`]+)`", r"#\1", text)
    text = _ROLE.sub(r"\1", text)
    text = re.sub(r"``([^`]+)``", r"\1", text)
    text = re.sub(r"\*\*([^*]+)\*\*|\*([^*]+)\*", lambda m: m.group(1) or m.group(2), text)
    text = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text)
    return text


def fold(text: str) -> str:
    return " ".join(text.split())


def concise(text: str, limit: int = MAX_BODY) -> str:
    """`text` up to the end of the sentence that crosses `limit` characters (at most 2x)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    end = re.search(r"[.!?](\s|$)", text[limit:])
    cut = limit + end.end() if end and end.end() < limit else limit
    head = text[:cut].rstrip()
    return head if head.endswith((".", "!", "?")) else head + "…"


def first_sentence(text: str, limit: int = MAX_SUBJECT) -> str:
    flat = fold(text)
    match = re.search(r"(?<=[a-z0-9)`'\"])\.\s", flat)
    head = flat[: match.start() + 1] if match else flat
    if len(head) <= limit:
        return head.rstrip(".") if head.endswith(".") and " " not in head[-3:] else head
    cut = head.rfind(" ", 0, limit - 1)
    return head[: cut if cut > limit // 2 else limit - 1] + "…"


def keywords_of(text: str) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for match in _LITERAL.finditer(text):
        word = (match.group(1) or match.group(2)).strip().strip("~.")
        if word and len(word) <= 40 and "\n" not in word and not word.startswith("http"):
            found.setdefault(word, None)
    for match in _IDENTIFIER.finditer(text):
        found.setdefault(match.group(0).rstrip("()"), None)
    return tuple(list(found)[:MAX_KEYWORDS])


def refs_of(text: str) -> list[str]:
    refs = [m.group(1) for m in _REF.finditer(text)]
    for match in _TICKETS.finditer(text):
        refs.extend(t for t in re.split(r"[,\s]+", match.group(1)) if t)
    return refs


# --- commits --------------------------------------------------------------------------------

_SEP = "\x1e"  # between commits
_FIELD = "\x1f"  # between fields


def commits(clone: Path, commit: str) -> Iterator[HistoryMemory]:
    log = git(
        clone,
        "log",
        "--no-merges",
        "--no-renames",
        f"--format={_SEP}%H{_FIELD}%an{_FIELD}%aI{_FIELD}%B{_FIELD}",
        "--name-only",
        commit,
    )
    seen: set[str] = set()
    for chunk in log.split(_SEP)[1:]:
        sha, author, when, message, files_text = chunk.split(_FIELD)
        if _BOT.search(author):
            continue
        lines = message.strip().splitlines()
        if not lines:
            continue
        subject = _PR_SUFFIX.sub("", lines[0]).strip()
        if _SKIP_SUBJECT.search(subject) or len(subject.split()) < 2:
            continue
        body_lines = [line for line in lines[1:] if not _TRAILER.match(line.strip())]
        body = "\n".join(body_lines).strip()
        if body.startswith("---") or "updated-dependencies" in body:
            continue
        if len(f"{subject} {body}".split()) < 4:
            continue
        files = [f for f in files_text.strip().splitlines() if f.strip()]
        text_key = fold(f"{subject} {body}").lower()
        if text_key in seen:
            continue
        seen.add(text_key)
        source = [f for f in files if not _TEST_OR_DOC.search(f)]
        scope = f"file:{source[0]}" if len(source) == 1 else "global"
        shown = ", ".join(files[:MAX_FILES]) + (
            f" (+{len(files) - MAX_FILES} more)" if len(files) > MAX_FILES else ""
        )
        text = plain(body) if body else subject + "."
        text = concise(text)
        if shown:
            text += f"\n\nFiles: {shown}."
        yield HistoryMemory(
            key=f"commit:{sha[:12]}",
            subject=first_sentence(plain(subject)),
            body=text,
            keywords=keywords_of(f"{subject}\n{body}"),
            scope=scope,
            date=_utc(when),
            refs=tuple(dict.fromkeys([*refs_of(message), sha[:7]])),
        )


def _utc(iso: str) -> str:
    return datetime.fromisoformat(iso).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- changelogs -----------------------------------------------------------------------------

_UNDERLINE = re.compile(r"^([=\-~^*#])\1{2,}\s*$")
_DATE_WORDS = re.compile(
    r"(\d{4}-\d{2}-\d{2})|((?:January|February|March|April|May|June|July|August|September|"
    r"October|November|December) \d{1,2}, \d{4})|(\d{1,2} (?:January|February|March|April|May|"
    r"June|July|August|September|October|November|December),? \d{4})"
)


def _date(text: str) -> str | None:
    match = _DATE_WORDS.search(text)
    if not match:
        return None
    value = match.group(0).replace(",", "")
    for layout in ("%Y-%m-%d", "%B %d %Y", "%d %B %Y"):
        try:
            return (
                datetime.strptime(value, layout).replace(tzinfo=UTC).strftime("%Y-%m-%dT12:00:00Z")
            )
        except ValueError:
            continue
    return None


_RELEASED = re.compile(r"^\s*(:?released?[-_ ]?(date|on)?:?|\()", re.IGNORECASE)


@dataclass
class _Release:
    title: str
    date: str | None


def bullet_entries(text: str) -> Iterator[tuple[_Release, str]]:
    """Top-level bullets (`-`/`*` at the section's indentation) under release headings."""
    lines = text.splitlines()
    release = _Release("", None)
    entry: list[str] = []
    indent = -1

    def flush() -> Iterator[tuple[_Release, str]]:
        if entry:
            yield release, "\n".join(entry)
        entry.clear()

    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        markdown = re.match(r"^#{1,4}\s+(.*)$", line)
        if markdown or (line.strip() and _UNDERLINE.match(nxt) and not _UNDERLINE.match(line)):
            yield from flush()
            indent = -1
            title = markdown.group(1) if markdown else line
            if re.search(r"\d+\.\d+", title):
                release = _Release(fold(title), _date(title))
            continue
        if release.title and release.date is None and _RELEASED.match(line):
            release.date = _date(line)
        bullet = re.match(r"^(\s*)[-*]\s+(.*)$", line)
        if bullet and (indent < 0 or len(bullet.group(1)) <= indent):
            yield from flush()
            indent = len(bullet.group(1))
            entry.append(bullet.group(2))
        elif entry and (not line.strip() or len(line) - len(line.lstrip()) > indent):
            entry.append(line.strip())
        elif entry:
            yield from flush()
    yield from flush()


def change_blocks(text: str) -> Iterator[tuple[_Release, str]]:
    """SQLAlchemy's `.. change::` blocks under `.. changelog::` / `:version:` / `:released:`."""
    release = _Release("", None)
    block: list[str] | None = None
    for line in [*text.splitlines(), ".. end::"]:
        stripped = line.strip()
        if stripped.startswith((".. change::", ".. changelog::", ".. end::")):
            if block is not None:
                yield release, "\n".join(block)
            block = [] if stripped.startswith(".. change::") else None
            continue
        if stripped.startswith(":version:") and block is None:
            release = _Release(f"version {stripped.split(':', 2)[2].strip()}", None)
        elif stripped.startswith(":released:") and block is None:
            release.date = _date(stripped)
        elif block is not None:
            block.append(stripped)
    return


def tag_dates(clone: Path) -> dict[str, str]:
    """Release version ("2.0.1") → the date of its tag ("v2.0.1", "rel_2_0_1", "2.0.1")."""
    out: dict[str, str] = {}
    listed = git(clone, "for-each-ref", "--format=%(refname:short) %(creatordate:iso-strict)")
    for line in listed.splitlines():
        name, _, when = line.partition(" ")
        if not name.startswith(("v", "rel_", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9")):
            continue
        version = re.sub(r"^(v|rel_)", "", name.rsplit("/", 1)[-1]).replace("_", ".")
        if when and re.match(r"^\d+(\.\d+)+", version):
            out.setdefault(version, _utc(when))
    return out


def _version(title: str) -> str | None:
    match = re.search(r"\d+(?:\.\d+)+(?:[a-z]+\d*)?", title)
    return match.group(0) if match else None


def changelog(clone: Path, commit: str, path: str, layout: str) -> Iterator[HistoryMemory]:
    """Entries of the changelog file (or folder of files) at `commit`. A release's date is the
    one its heading or `:released:` gives, else its tag's, else the next older release's."""
    paths = [path]
    if path.endswith("/"):
        listed = git(clone, "ls-tree", "--name-only", f"{commit}:{path}").split()
        paths = [path + name for name in sorted(listed) if name.endswith((".rst", ".md"))]
    head = _utc(git(clone, "log", "-1", "--format=%aI", commit).strip())
    tags = tag_dates(clone)
    found: list[tuple[str, int, _Release, str]] = []
    for file in paths:
        text = git(clone, "show", f"{commit}:{file}")
        entries = change_blocks(text) if layout == "change-blocks" else bullet_entries(text)
        for number, (release, raw) in enumerate(entries):
            version = _version(release.title)
            when = release.date or (tags.get(version) if version else None)
            found.append((file, number, _Release(release.title, when), raw))
    # an undated release (no heading date, no tag): the date of the next older dated entry
    later: str | None = None
    dates: list[str] = []
    for _file, _number, release, _raw in reversed(found):
        later = release.date or later
        dates.append(release.date or later or head)
    for (file, number, release, raw), when in zip(found, reversed(dates), strict=True):
        fields = [line for line in raw.splitlines() if not re.match(r"^:\w+:", line)]
        entry = plain("\n".join(fields)).strip()
        if len(entry.split()) < 5:
            continue
        title = release.title or "unreleased"
        body = concise(fold(entry)) + f"\n\nChangelog: {title}."
        yield HistoryMemory(
            key=f"changelog:{file}:{number}",
            subject=first_sentence(entry),
            body=body,
            keywords=keywords_of(raw),
            scope="global",
            date=when,
            refs=tuple(dict.fromkeys(refs_of(raw))),
        )


def history(
    clone: Path, commit: str, changelogs: Sequence[tuple[str, str]] = (), limit: int | None = None
) -> list[HistoryMemory]:
    """Every memory of the project's history at `commit`, newest first (ties: by key)."""
    items = list(commits(clone, commit))
    for path, layout in changelogs:
        items.extend(changelog(clone, commit, path, layout))
    seen: set[str] = set()
    unique = []
    for item in items:
        text_key = fold(item.body).lower()
        if text_key not in seen:
            seen.add(text_key)
            unique.append(item)
    unique.sort(key=lambda m: (m.date, m.key), reverse=True)
    return unique[:limit] if limit is not None else unique


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("clone", type=Path)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--changelog", action="append", default=[], metavar="PATH:FORMAT")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--jsonl", type=Path, default=None)
    args = parser.parse_args(argv)
    specs = [tuple(item.rsplit(":", 1)) for item in args.changelog]
    items = history(args.clone, args.commit, specs, args.limit)  # type: ignore[arg-type]
    out = args.jsonl.open("w", encoding="utf-8") if args.jsonl else sys.stdout
    for item in items:
        out.write(json.dumps(asdict(item)) + "\n")
    print(f"{len(items)} memories", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
