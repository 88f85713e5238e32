"""What changed between two loads of the memories, by object identity (issue 36, the save at
100,000 memories).

    changes = changes_between(before, after)       # one pointer compare per memory
    changes = changes_since(seen, after, known)    # `known` reused when it starts at `seen`

The stores hand back the same `Memory` object for a file that did not change between scans
(memory/store.py keeps them by stat key), so a memory that is another object than last time is
new or re-read; one that is the same object is unchanged. A pointer compare costs ~50x less
than a fingerprint or the memory's terms, so each consumer of the memories (the keyword index,
the term statistics, the index's fingerprints, the fuzzy vocabulary) does work in proportion
to what changed, not to the store. Equal but re-read objects count as changed: consumers
compare their contents where it matters (a re-read memory costs its own work, never a wrong
answer). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from local_recall.memory.model import Memory


@dataclass(frozen=True, slots=True)
class Changes:
    """From `before` to `after` (both held, never mutated): keys new or of another object
    (`changed`), keys gone (`removed`)."""

    before: Mapping[str, Memory]
    after: Mapping[str, Memory]
    changed: tuple[str, ...]
    removed: tuple[str, ...]

    @property
    def keys(self) -> tuple[str, ...]:
        """Every key whose memory may differ: what a consumer looks at again."""
        return self.changed + self.removed


def changes_between(before: Mapping[str, Memory], after: Mapping[str, Memory]) -> Changes:
    if before is after:
        return Changes(before, after, (), ())
    get = before.get
    return changes_of(
        before, after, [key for key, memory in after.items() if get(key) is not memory]
    )


def changes_of(
    before: Mapping[str, Memory], after: Mapping[str, Memory], changed: Sequence[str]
) -> Changes:
    """The changes when the keys of `after` whose memory is another object than in `before`
    are known (the searcher finds them while it builds `after`)."""
    changed = tuple(dict.fromkeys(changed))  # a key met twice in a load counts once
    # `before` holds the unchanged keys, the changed ones it had, and the gone ones
    edited = sum(1 for key in changed if key in before)
    gone = len(before) - (len(after) - len(changed)) - edited
    removed = tuple(before.keys() - after.keys()) if gone else ()
    return Changes(before, after, changed, removed)


def changes_since(
    seen: Mapping[str, Memory], after: Mapping[str, Memory], known: Changes | None
) -> Changes:
    """`known` when it is exactly the step from `seen` to `after` (the searcher computed it
    once for every consumer), else the changes computed here."""
    if known is not None and known.before is seen and known.after is after:
        return known
    return changes_between(seen, after)


# A store's memories as last loaded: the list (as a tuple: the store may reuse its list) and
# the same memories by key.
Loaded = tuple[tuple[Memory, ...], dict[str, Memory]]


def load_kind(
    memories: Sequence[Memory], held: Loaded | None, key: Callable[[Memory], str]
) -> tuple[Loaded, list[str]]:
    """One store's memories by key, and the keys of those that are not the memory `held` had
    (by identity). When the store's list starts with the list held (a save adds its file at
    the end), the held mapping is copied and only the rest looked at: a tuple compare and a
    dict copy in C instead of a Python step per memory (~0.5 s profiled at 100,000). Equal
    memories there keep the held objects (a `Memory` compares by all its fields)."""
    now = tuple(memories)
    if held is not None:
        before, by_key = held
        if len(now) >= len(before) and now[: len(before)] == before:
            found = dict(by_key)
            changed = []
            for memory in now[len(before) :]:
                name = key(memory)
                if found.get(name) is not memory:
                    changed.append(name)
                found[name] = memory
            return (now, found), changed
    previous: dict[str, Memory] = held[1] if held is not None else {}
    had = previous.get
    found = {}
    changed = []
    for memory in now:
        name = key(memory)
        found[name] = memory
        if had(name) is not memory:
            changed.append(name)
    return (now, found), changed
