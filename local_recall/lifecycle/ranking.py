"""How a memory's life changes its rank: stale, superseded and unmerged memories go below fresh
ones of similar relevance. Pure: the facts come from the lifecycle cache, never from git on a hot
path."""

# No `from __future__ import annotations` and a NamedTuple, not a slotted dataclass: the prompt
# hook imports this module (context/notes.py orders notes with rank_factor) on every prompt.

from typing import NamedTuple

# Multipliers on the relevance score used for ORDER only: whether a memory is worth injecting is
# still decided on its relevance, so a stale memory that answers the prompt is shown, marked.
STALE_FACTOR = 0.8
SUPERSEDED_FACTOR = 0.6
ELSEWHERE_FACTOR = 0.9  # made on a commit HEAD does not contain (a branch merged nowhere here)


class LifeFacts(NamedTuple):
    """What the lifecycle knows of one memory at the current HEAD."""

    stale: str | None = None  # the reason, one line; None = fresh or unknown
    superseded_by: str | None = None
    elsewhere_branch: str | None = None  # set when HEAD does not contain the memory's commit
    unreviewed: bool = False


def rank_factor(facts: LifeFacts) -> float:
    factor = 1.0
    if facts.stale:
        factor *= STALE_FACTOR
    if facts.superseded_by:
        factor *= SUPERSEDED_FACTOR
    if facts.elsewhere_branch is not None:
        factor *= ELSEWHERE_FACTOR
    return factor


def is_elsewhere(
    commit: str | None, branch: str | None, *, ancestors: frozenset[str], current_branch: str | None
) -> bool:
    """A memory is 'here' when HEAD contains its commit or it was made on the current branch
    (a commit since amended or rebased away still counts); unknown provenance counts as here."""
    if not commit or commit in ancestors:
        return False
    return not (branch is not None and branch == current_branch)
