"""Loading a memory file's YAML frontmatter without trusting it.

A memory file may come from anyone who can push. PyYAML's safe loader is safe from code
execution but not from cost or odd types: a 385-byte alias bomb ("billion laughs") expands to
billions of nodes in whatever walks the result, a few thousand nested `[` crash libyaml's
recursive composer (a segfault, not an exception), and `!!set` / `!!binary` produce values the
rest of the program cannot store. So before the (fast, C) loader builds anything, the header is
checked on libyaml's event stream, which is produced iteratively: bounded size, depth, expanded
node count (aliases counted at the size of what they repeat) and only the plain tags.
Whatever the parser itself raises during that walk (a syntax error, or a limit of its own: PyYAML
6.0.4's scanner stops at 1,000 open brackets before our depth check sees the 21st) refuses the
file the same way, with a one-line reason: which error class a PyYAML release raises is not part
of the contract.

Most headers hold none of `& * ! [ {` beyond a few brackets, and no deep indentation: those are
loaded directly (the event pass costs about half a load). A header in the shape local-recall
writes (plain_header.py) is not handed to PyYAML at all: it is read line by line, with the
loader's own typing rules, and anything else comes here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import yaml

from local_recall.memory.plain_header import plain_header

MAX_FRONTMATTER_BYTES = 100_000
MAX_DEPTH = 20
MAX_NODES = 10_000  # after expanding aliases; a typical header has ~30
PLAIN_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}"
    for name in ("str", "int", "float", "bool", "null", "timestamp", "seq", "map")
)

# libyaml's loader is ~10x faster than the pure-Python one; both are safe loaders.
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# A header that may hold an anchor, alias or tag, or nest deeper than a plain one does.
_NEEDS_CHECK = re.compile(r"[&*!]|^[ \t\-?:]{12,}", re.MULTILINE)


class FrontmatterRefused(ValueError):
    """The header is valid YAML, or might be, but is not loaded: the reason is user-facing."""


def load_frontmatter(header: str) -> Any:
    """The header's value, like `yaml.safe_load`, or FrontmatterRefused (refused by the guard,
    or unparseable while it walked the events) / yaml.YAMLError (invalid YAML the guard did not
    need to walk)."""
    if len(header) > MAX_FRONTMATTER_BYTES:
        raise FrontmatterRefused(f"frontmatter is larger than {MAX_FRONTMATTER_BYTES} bytes")
    if (written := plain_header(header)) is not None:
        return written  # the shape the renderer writes: PyYAML's constructor is most of a scan
    brackets = header.count("[") + header.count("{")
    if brackets > MAX_DEPTH or _NEEDS_CHECK.search(header):
        check_events(header)
    try:
        return yaml.load(header, Loader=_Loader)  # noqa: S506 - a SafeLoader
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        # e.g. an integer of more than 4300 digits: a value the constructor refuses
        raise FrontmatterRefused(f"frontmatter has a value that cannot be read: {exc}") from None


def check_events(header: str) -> None:
    """Walk libyaml's events: refuse depth > MAX_DEPTH, more than MAX_NODES nodes with aliases
    expanded, and any tag but the plain ones (str, int, float, bool, null, timestamp, seq,
    map). Costs time linear in the header; an alias costs one step whatever it repeats."""
    try:
        _walk(yaml.parse(header, Loader=_Loader))
    except yaml.YAMLError as exc:
        reason = yaml_error_reason(exc)
        raise FrontmatterRefused(f"frontmatter cannot be parsed: {reason}") from None


def yaml_error_reason(exc: yaml.YAMLError) -> str:
    """One line for any PyYAML error: the problem, what the parser was doing, and where."""
    if not isinstance(exc, yaml.MarkedYAMLError) or not exc.problem:
        return " ".join(str(exc).split()) or type(exc).__name__
    mark = exc.problem_mark or exc.context_mark
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    context = f", {exc.context}" if exc.context else ""
    return " ".join(f"{exc.problem}{context}{where}".split())


def _walk(events: Iterator[yaml.Event]) -> None:
    sizes: dict[str, int] = {}  # anchor -> expanded node count of what it names
    # one entry per open collection: [its anchor, its expanded node count so far]
    open_nodes: list[tuple[str | None, int]] = [(None, 0)]
    for event in events:
        _check_tag(event)
        if isinstance(event, yaml.CollectionStartEvent):
            if len(open_nodes) > MAX_DEPTH:
                raise FrontmatterRefused(f"frontmatter nests deeper than {MAX_DEPTH} levels")
            open_nodes.append((event.anchor, 1))
            continue
        if isinstance(event, yaml.CollectionEndEvent):
            anchor, added = open_nodes.pop()
        elif isinstance(event, yaml.AliasEvent):
            anchor, added = None, _alias_size(sizes, event.anchor)
        elif isinstance(event, yaml.ScalarEvent):
            anchor, added = event.anchor, 1
        else:
            continue
        if anchor is not None:
            sizes[anchor] = added
        open_nodes[-1] = (open_nodes[-1][0], open_nodes[-1][1] + added)
        if sum(size for _, size in open_nodes) > MAX_NODES:
            raise FrontmatterRefused(
                f"frontmatter expands to more than {MAX_NODES} values (aliases repeat others)"
            )


def _check_tag(event: yaml.Event) -> None:
    tag = getattr(event, "tag", None)
    if tag is not None and tag != "!" and tag not in PLAIN_TAGS:
        raise FrontmatterRefused(f"frontmatter uses the YAML tag {tag!r}")


def _alias_size(sizes: dict[str, int], anchor: str | None) -> int:
    size = sizes.get(anchor or "")
    if size is None:
        raise FrontmatterRefused(f"frontmatter alias *{anchor} names no anchor")
    return size
