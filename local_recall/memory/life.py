"""What the repository's history says of one memory at HEAD (docs/team.md): why it is stale,
the branch of a commit HEAD does not contain, the memory that superseded it, and the factor its
score is multiplied by for ORDER only (the score shown and the inject threshold stay its
relevance). lifecycle/ computes it from its cache (never git on a hot path); search/ ranks by it
and context/ shows it — siblings that may not import lifecycle/, hence this value lives here."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Life:
    stale: str | None = None
    branch: str | None = None
    superseded_by: str | None = None
    order: float = 1.0
