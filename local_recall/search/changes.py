"""What changed between two loads of the memories, by object identity (for a save at
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
    (by identity). The store's list is in date order, so a save changes its end: the part it
    shares with the list held (found by tuple compares, in C) keeps the held mapping (copied,
    in C) and only the rest is looked at, instead of a Python step per memory (~0.5 s profiled
    at 100,000). Equal memories there keep the held objects (a `Memory` compares by all its
    fields)."""
    now = tuple(memories)
    if held is not None:
        before, by_key = held
        same = _shared_head(now, before)
        if same >= len(before) // 2:  # else a whole pass costs about as much
            found = dict(by_key)
            rest = {key(memory): memory for memory in now[same:]}
            for memory in before[same:]:
                if (name := key(memory)) not in rest:
                    found.pop(name, None)
            changed = [name for name, memory in rest.items() if found.get(name) is not memory]
            found.update(rest)
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


def _shared_head(a: tuple[Memory, ...], b: tuple[Memory, ...]) -> int:
    """How many leading memories `a` and `b` share: a binary search of tuple compares (each
    in C: an identity check per pair first), ~17 at 100,000 memories."""
    low, high = 0, min(len(a), len(b))
    if a[:high] == b[:high]:
        return high
    while high - low > 1:  # a[:low] == b[:low], a[:high] != b[:high]
        middle = (low + high) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle
    return low
