"""The memory file format: YAML frontmatter + markdown body, parsed and rendered with
python-frontmatter (a handler on PyYAML's C loader: ~10x faster than the pure-Python one, and
every memory file is parsed on a hook's cold path).

Format reference: docs/memory-format.md. Parsing is tolerant of what people do by hand (unquoted
timestamps, CRLF, numeric-looking hashes, missing optional keys); anything it cannot understand is
an `InvalidMemoryFile`, which callers report and skip — never rewrite.

The handler's `split`/`load` are called directly rather than `frontmatter.loads`: that one
strips the whole text and the body, which would accept text before the opening `---`, turn a
file without frontmatter into empty metadata, and drop a body's leading indentation (changing
its content hash).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

import frontmatter
import yaml
from frontmatter.default_handlers import YAMLHandler

from local_recall.errors import InvalidInput, InvalidMemoryFile
from local_recall.memory.dispute import parse_dispute
from local_recall.memory.model import (
    KNOWN_KEYS,
    UNREVIEWED,
    Memory,
    conflict_line,
    normalise_body,
    normalised_hash,
    parse_commit,
    parse_files,
    parse_memory_id,
    parse_provenance_name,
    parse_scope,
    validate_keywords,
    validate_subject,
)
from local_recall.memory.timestamps import format_timestamp, written_time
from local_recall.memory.yaml_guard import FrontmatterRefused, load_frontmatter, yaml_error_reason

_FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)


# A file's time when its frontmatter has no `occurred_at` (what a person writing one by hand
# leaves out): the store gives the commit that added it, else its mtime (repo/git_added.py).
WrittenAt = Callable[[Path], datetime]


def parse_memory_text(
    text: str, path: Path, *, kind: str = "episodic", written_at: WrittenAt | None = None
) -> Memory:
    """Parse one memory file's text. Raises InvalidMemoryFile with the reason. `written_at`:
    the time of a file without `occurred_at` (None: such a file is refused)."""
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    block = _FRONTMATTER.match(normalised)
    conflict = conflict_line(normalised, fenced_from=block.end() if block else None)
    if conflict is not None:
        raise InvalidMemoryFile(
            path,
            f"unresolved merge conflict (git conflict markers from line {conflict}): "
            "edit the file to keep one version, then `git add` it",
        )
    if block is None:
        raise InvalidMemoryFile(path, "no YAML frontmatter (the file must start with '---')")
    header, body = block.group(1), normalised[block.end() :]  # what _HANDLER.split returns
    try:
        data = _HANDLER.load(header)
    except FrontmatterRefused as exc:  # a bomb, a deep nest, a tag: this one file is skipped
        raise InvalidMemoryFile(path, str(exc)) from None
    except yaml.YAMLError as exc:
        reason = yaml_error_reason(exc)
        raise InvalidMemoryFile(path, f"frontmatter is not valid YAML: {reason}") from None
    if not isinstance(data, dict):
        raise InvalidMemoryFile(path, "frontmatter is not a mapping of keys to values")
    try:
        return _memory_from_fields(data, body, path, kind, written_at)
    except InvalidInput as exc:
        raise InvalidMemoryFile(path, str(exc)) from None


def _memory_from_fields(
    data: dict[Any, Any], body: str, path: Path, kind: str, written_at: WrittenAt | None
) -> Memory:
    file_id = parse_memory_id(path.stem)
    raw_id = data.get("id")
    if raw_id is not None and raw_id != file_id and parse_memory_id(str(raw_id)) != file_id:
        raise InvalidInput(f"frontmatter id {raw_id} does not match the file name")
    if "subject" not in data or data["subject"] is None:
        raise InvalidInput("missing 'subject'")
    subject = validate_subject(str(data["subject"]))
    keywords = _keywords_field(data.get("keywords"))
    applies_to = parse_scope(str(data.get("applies_to") or "global"))
    occurred_at = written_time(data["occurred_at"]) if data.get("occurred_at") is not None else None
    text = normalise_body(body)  # once: a first scan does this for every file
    if not text:
        raise InvalidInput("body is empty")
    if occurred_at is None:  # last: only what is a memory pays for git's answer
        if written_at is None:
            raise InvalidInput("missing 'occurred_at'")
        occurred_at = written_at(path)
    actual = normalised_hash(text)  # content_hash(body), without normalising it again
    stored = data.get("content_hash")
    stored_text = None if stored is None else str(stored)  # YAML may read an all-digit hash as int
    source = data.get("source")
    extra = {str(k): v for k, v in data.items() if k not in KNOWN_KEYS}
    commit, branch, session = (_optional_text(data, key) for key in ("commit", "branch", "session"))
    replaced_by, reason = (_optional_text(data, k) for k in ("superseded_by", "superseded_reason"))
    return Memory(
        id=file_id,
        subject=subject,
        body=text,
        keywords=keywords,
        applies_to=applies_to,
        occurred_at=occurred_at,
        content_hash=actual,
        source=None if source is None else str(source),
        kind=kind,
        commit=None if commit is None else parse_commit(commit),
        branch=None if branch is None else parse_provenance_name(branch, "branch"),
        session=None if session is None else parse_provenance_name(session, "session"),
        files=parse_files(data.get("files")),
        unreviewed=str(data.get("review") or "").strip().lower() == UNREVIEWED,
        superseded_by=None if replaced_by is None else parse_memory_id(replaced_by),
        superseded_reason=None
        if reason is None
        else parse_provenance_name(reason, "superseded_reason", fold=True),
        disputed=parse_dispute(data.get("disputed")),
        extra=MappingProxyType(extra),
        path=path,
        stale_hash=stored_text if stored_text not in (None, actual) else None,
    )


def _optional_text(data: dict[Any, Any], key: str) -> str | None:
    """An optional scalar key as text (YAML may read an all-digit commit id as a number)."""
    value = data.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise InvalidInput(f"'{key}' must be a single value")
    return str(value)


def _keywords_field(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):  # "a, b, c" written by hand
        return validate_keywords([part for part in value.split(",")])
    if isinstance(value, list | tuple):
        return validate_keywords([str(item) for item in value if item is not None])
    raise InvalidInput("'keywords' must be a list")


def render_memory(memory: Memory) -> str:
    """The file text. Known keys first in a fixed order, then the person's own keys."""
    fields: dict[str, Any] = {
        "id": memory.id,
        "subject": memory.subject,
        "keywords": list(memory.keywords),
        "applies_to": memory.applies_to,
        "occurred_at": format_timestamp(memory.occurred_at),
        "content_hash": memory.content_hash,
    }
    if memory.source:
        fields["source"] = memory.source
    provenance = {"commit": memory.commit, "branch": memory.branch, "session": memory.session}
    fields.update({key: value for key, value in provenance.items() if value})
    if memory.files:
        fields["files"] = list(memory.files)
    if memory.unreviewed:
        fields["review"] = UNREVIEWED
    if memory.superseded_by:
        fields["superseded_by"] = memory.superseded_by
        if memory.superseded_reason:
            fields["superseded_reason"] = memory.superseded_reason
    if memory.disputed:
        fields["disputed"] = memory.disputed.to_json()
    for key, value in memory.extra.items():
        if key not in fields:
            fields[key] = _plain(value)
    post = frontmatter.Post(normalise_body(memory.body), _HANDLER)
    post.metadata.update(fields)  # not Post(**fields): a person's key may be named "content"
    return frontmatter.dumps(post) + "\n"


def _plain(value: Any) -> Any:
    """MappingProxy/tuple → dict/list so the safe dumper accepts them."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


class _QuotingDumper(yaml.SafeDumper):
    """Quotes the timestamp and hash so YAML never reads them back as datetime or number."""


def _str_representer(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    needs_quotes = bool(re.match(r"^\d{4}-\d\d-\d\d(T|$)", data)) or bool(
        re.fullmatch(r"[0-9a-f]{7,64}", data)  # a hash or commit id (all digits: a number)
    )
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar(
        "tag:yaml.org,2002:str", data, style='"' if needs_quotes else None
    )


_QuotingDumper.add_representer(str, _str_representer)


class _MemoryHandler(YAMLHandler):
    """python-frontmatter's YAML handler with the memory file's rules: the block must open the
    file (an optional BOM aside) and may close with `...`; libyaml's safe loader; our dumper."""

    FM_BOUNDARY = _FRONTMATTER

    def split(self, text: str) -> tuple[str, str]:
        match = _FRONTMATTER.match(text)
        if match is None:
            raise ValueError("no frontmatter")
        return match.group(1), text[match.end() :]

    def load(self, fm: str, **kwargs: object) -> Any:
        return load_frontmatter(fm)  # libyaml's safe loader behind a guard (yaml_guard.py)

    def export(self, metadata: dict[str, object], **kwargs: object) -> str:
        text: str = yaml.dump(
            metadata,
            Dumper=_QuotingDumper,
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
            width=1000,
        )
        return text.strip()


_HANDLER = _MemoryHandler()
