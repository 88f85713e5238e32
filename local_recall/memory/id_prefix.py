"""Memory ids by unique prefix, as git takes commit ids: `show 09394837` instead of the
36-character UUID. Pure: the caller gives the ids there are."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence

from local_recall.errors import AmbiguousMemoryId, InvalidMemoryId, MemoryNotFound
from local_recall.memory.model import Memory, parse_memory_id

MIN_PREFIX = 4  # as git: shorter prefixes match too much to be meant
SHOWN_PREFIX = 8  # what a pointer prints at least, as git's short commit ids
_PREFIX = re.compile(r"^[0-9a-f][0-9a-f-]{3,35}$")


def looks_like_prefix(text: str) -> bool:
    """Hex digits (dashes allowed where a UUID has them), at least MIN_PREFIX of them."""
    value = text.strip().lower()
    return bool(_PREFIX.match(value)) and len(value.replace("-", "")) >= MIN_PREFIX


def ids_with_prefix(prefix: str, ids: Iterable[str]) -> list[str]:
    """The ids that start with `prefix`, dashes aside (`0939483712` matches `09394837-12…`)."""
    wanted = prefix.strip().lower().replace("-", "")
    return sorted({i for i in ids if i.replace("-", "").startswith(wanted)})


def resolve_id(memory_id: str, memories: Callable[[], Sequence[Memory]]) -> str:
    """The full id a person means: a UUID as it is, else a unique prefix of one of
    `memories()` (asked only for a prefix). MemoryNotFound when none starts with it,
    AmbiguousMemoryId (listing them) when several do; anything else is InvalidMemoryId."""
    try:
        return parse_memory_id(memory_id)
    except InvalidMemoryId:
        if not looks_like_prefix(memory_id):  # `show 29`: say what a short id needs
            raise InvalidMemoryId(
                memory_id, f"a UUID, or at least {MIN_PREFIX} of its first hex digits"
            ) from None
    listed = memories()
    found = ids_with_prefix(memory_id, (m.id for m in listed))
    if not found:
        raise MemoryNotFound(memory_id.strip())
    if len(found) > 1:
        subjects = {m.id: m.subject for m in listed}
        raise AmbiguousMemoryId(memory_id.strip(), [(i, subjects[i]) for i in found])
    return found[0]


def digits_of(memory_id: str) -> str:
    """An id as its prefixes are compared: lower case, dashes aside."""
    return memory_id.lower().replace("-", "")


def unique_prefix_length(digits: str, ordered: Sequence[str], least: int = SHOWN_PREFIX) -> int:
    """How many leading digits of `digits` (an id, `digits_of`) no other id of `ordered` (every
    id's digits, sorted) starts with: at least `least`, at most all of them. A committed memory
    whose id shares a real one's first 8 digits makes both longer, so a pointer always names
    one memory."""
    below, above = bisect_left(ordered, digits), bisect_right(ordered, digits)
    common = 0
    for other in (*ordered[max(0, below - 1) : below], *ordered[above : above + 1]):
        shared = 0
        for a, b in zip(digits, other, strict=False):
            if a != b:
                break
            shared += 1
        common = max(common, shared)
    return min(len(digits), max(least, common + 1))


class PrefixLengths:
    """`unique_prefix_length` for a few ids of a store at a time, the store's ids sorted once
    per loaded store (the daemon's and the MCP server's searcher keep theirs while unchanged)."""

    def __init__(self) -> None:
        self._source: object = None
        self._ordered: list[str] = []

    def of(self, ids: Iterable[str], memories: Mapping[str, Memory]) -> dict[str, int]:
        """Each of `ids`' prefix length among `memories` (session summaries aside: a pointer
        never names one)."""
        if self._source is not memories:
            kept = (m.id for m in memories.values() if m.kind != "session")
            self._ordered, self._source = sorted(digits_of(i) for i in kept), memories
        return {i: unique_prefix_length(digits_of(i), self._ordered) for i in ids}
