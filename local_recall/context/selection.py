"""Which of a prompt's memories are shown, and how: the sure ones in full, in order, within the
budget; the best others as pointer lines by rank, when the prompt asks something of this
repository; none the session was already shown. Pure: notes in, a `Selection` out, with every
candidate's reason (what `local-recall why` prints) (docs/hooks.md#full-text-pointers-nothing).
"""

# No `from __future__ import annotations` here: NamedTuple turns string annotations into
# ForwardRefs, compiling each one at import (~0.25 ms a field) on every prompt.

import math
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from local_recall.context.duplicates import FactWords, fact_words, same_words
from local_recall.context.envelope import MAX_CONTEXT_CHARS
from local_recall.context.notes import CHARS_PER_TOKEN, Note, char_budget, wrapped_size
from local_recall.context.prompt_lines import (
    POINTER_HEADER,
    POINTERS_ONLY_SIZE,
    PROMPT_HEADER,
    hit_block,
    pointer_line,
    short_id,
)
from local_recall.learning.shown import Shown

# sure      -> the memory in full (the store-aware decision's score >= hooks.prompt_min_score),
#              best first, until the full-text cap or the budget stops it
# by rank   -> on a prompt that asks something of this repository (query_intent.py
#              `asks_of_repository`), the best candidates not shown in full get one line each
#              (short id, subject, scope, flags) the agent opens when it bears on the task: the
#              first always, the next ones while within hooks.prompt_pointer_gap (logits) of
#              it, at most hooks.prompt_pointers
# otherwise -> nothing.
# The decision score cannot tell an in-domain question with an answer from one without, and
# search ranks the answer first for most answered prompts: the model already paying for the
# session judges a one-line pointer better than any cut-off on that score
# (docs/hooks.md#full-text-pointers-nothing).
POINTER_MIN_SCORE = 0.0  # hooks.prompt_pointer_min_score: no floor on a pointer's score
# How far (logits of the score) a runner-up may trail the first pointer and still get a line
# of its own: one line when the best clearly leads, up to three when they are close.
POINTER_GAP = 0.25
# With pointers on, the full text a prompt gets by default (hooks.prompt_full_tokens; the best
# sure hit always): other sure ones are pointed at. In 500-memory stores an answered prompt had
# ~5 hits over the full-text threshold, most of them neighbours of the answer
# (benchmarks/README.md, "Three tiers"): their text doubled the tokens and rarely held the
# answer. A cap in tokens, not in memories: two of a coding store's (~150 tokens each), several
# of LoCoMo's one-line observations, whose answers spread over many.
FULL_TOKENS = 400


class Tiers(NamedTuple):
    """How a prompt's hits fill its context: the [hooks] prompt_* settings, one value for
    every caller (the hooks, `why`, the benchmarks)."""

    budget_tokens: int  # hooks.prompt_tokens
    min_score: float  # hooks.prompt_min_score: full text at or over it
    pointers: int = 0  # hooks.prompt_pointers (0: full text or nothing)
    pointer_min_score: float = POINTER_MIN_SCORE  # hooks.prompt_pointer_min_score
    full_tokens: int = FULL_TOKENS  # hooks.prompt_full_tokens
    pointer_gap: float = POINTER_GAP  # hooks.prompt_pointer_gap

    @property
    def floor(self) -> float:
        """The lowest score either tier may show."""
        return min(self.min_score, self.pointer_min_score) if self.pointers > 0 else self.min_score

    @property
    def at_least(self) -> int:
        """How many of a search's best the pointers by rank need whatever their score: one a
        line (a candidate this session was pointed at already leaves its line empty)."""
        return self.pointers

    @property
    def search_floor(self) -> float:
        """What a prompt's search asks for past its `at_least` best: the lowest score either
        tier may show, the full-text threshold when pointers come by rank alone (scoring
        every candidate in full for the rank would cost a prompt ~2 ms at 5,000 memories)."""
        return self.min_score if self.pointer_min_score <= 0 else self.floor


class Selection(NamedTuple):
    shown: tuple[Note, ...]  # injected in full
    pointers: tuple[Note, ...]  # one line each: by rank, sure but past the full-text cap, or
    # (the best match again) already shown in full earlier in the session
    repeated: frozenset[str] = frozenset()  # pointers to memories shown in full before
    # every candidate's tier and why, in rank order, as the selection decided it (`why`)
    reasons: tuple[tuple[str, str], ...] = ()


def by_rank(candidates: Sequence[Note], *, most: int, gap: float, lead: float | None = None) -> int:
    """How many of `candidates` (best first, none shown in full) get a pointer: the first,
    then each next while its score trails the first's (or `lead`'s, the best shown in full)
    by at most `gap` logits; at most `most`."""
    if not candidates or most <= 0:
        return 0
    top = logit(candidates[0].score if lead is None else lead)
    count = 0 if lead is not None else 1
    for note in candidates[count:most]:
        if top - logit(note.score) > gap:
            break
        count += 1
    return count


def logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def fill_budget(
    hits: Iterable[Note],
    *,
    budget_tokens: int,
    min_score: float,
    max_chars: int = MAX_CONTEXT_CHARS,
    pointers: int = 0,
    pointer_min_score: float = POINTER_MIN_SCORE,
    shown_before: Shown = Shown(),  # noqa: B008 - an immutable NamedTuple
    full_tokens: int = FULL_TOKENS,
    pointer_gap: float = POINTER_GAP,
    asks: bool = True,
) -> Selection:
    """Best score first; a hit stating the fact of a better one is dropped
    (context/duplicates.py). A hit at or over `min_score` is *sure*: shown in full, in order,
    until one does not fit what is left (the budget, or with pointers on `full_tokens`; the
    first is shown regardless) — from there on full text stops, so a better sure hit is never
    passed over for a worse one that fits. Pointers on (`pointers` > 0): the best candidates
    not shown in full get a line each (`by_rank`) when the prompt `asks` something of this
    repository, or when they are sure; none to a memory the session was already pointed at,
    nor to an org hit. Off: only sure hits that did not fit are listed, as before tiers. A
    memory this session saw in full is not shown again (one line when it is the best match
    again); a disputed hit is never shown in full. The rendered result (wrapper included)
    never exceeds the token budget nor `max_chars`."""
    limit = char_budget(budget_tokens, max_chars)
    tiers = pointers > 0
    floor = min(min_score, pointer_min_score) if tiers else min_score
    reasons: dict[str, str] = {}
    # with pointers on, no more than `pointers` hits under full text can point: the rest are
    # not weighed (their words not compared: the prompt's path stays cheap at any limit)
    ranked = _once(hits, floor, reasons, min_score, shown_before, pointers if tiers else None)
    full = _full_text(ranked, min_score, limit, full_tokens if tiers else 0, shown_before, reasons)
    if tiers:
        lead = full.shown[0].score if full.shown else None
        plain = [n for n in full.candidates if n.score < min_score]
        count = by_rank(plain, most=pointers, gap=pointer_gap, lead=lead) if asks else 0
        pointed = ([n for n in full.candidates if n.score >= min_score] + plain[:count])[:pointers]
        for note in plain[count:]:
            reasons[note.id] = (
                "the prompt asks nothing of this repository"
                if not asks
                else f"the pointer lines are full ({pointers})"
                if len(pointed) >= pointers
                else f"more than {pointer_gap:g} logits under the best"
            )
    else:
        pointed = [n for n in full.candidates if n.score >= min_score]
        for note in full.candidates:
            if note.score < min_score:
                reasons[note.id] = f"score {note.score:.2f} under {min_score:.2f}"
    kept = _fit_lines(full, pointed, ranked, min_score, limit, reasons)
    return Selection(
        full.shown,
        tuple(kept),
        frozenset(n.id for n in full.repeated) & {n.id for n in kept},
        tuple(reasons.items()),
    )


def _once(
    hits: Iterable[Note],
    floor: float,
    reasons: dict[str, str],
    min_score: float,
    shown_before: Shown,
    may_point: int | None,
) -> list[Note]:
    """The hits at or over `floor` (and with any evidence), best first, each fact once; of
    those under `min_score` that could point, at most `may_point` (None: all)."""
    ordered: list[Note] = []
    for hit in hits:
        if hit.score > 0 and hit.score >= floor:
            ordered.append(hit)
        else:
            reasons.setdefault(hit.id, f"score {hit.score:.2f}: no evidence, or under {floor:.2f}")
    # the threshold is on relevance; the order also weighs staleness and branches
    ordered.sort(key=lambda h: -h.score * h.order)
    ranked: list[Note] = []
    taken: list[FactWords] = []
    plain = 0  # hits under full text that could point, kept so far
    for note in ordered:
        if note.id in reasons:
            continue
        could_point = note.score < min_score and not note.repo
        could_point = (
            could_point and note.id not in shown_before.full and note.id not in shown_before.pointed
        )
        if could_point and may_point is not None and plain >= may_point:
            reasons[note.id] = "below the ranks that may point"
            continue
        words = fact_words(note.subject, note.body)
        twin = next((i for i, other in enumerate(taken) if same_words(other, words)), None)
        if twin is not None:
            better = ranked[twin]
            reasons[note.id] = f"states the fact of {short_id(better.id, better.id_chars)}"
            continue
        taken.append(words)
        ranked.append(note)
        plain += could_point
        reasons[note.id] = ""
    return ranked


class _Full(NamedTuple):
    shown: tuple[Note, ...]  # in full, in rank order
    repeated: tuple[Note, ...]  # the best match, already shown in full this session
    candidates: tuple[Note, ...]  # the others that may point, in rank order
    used: int  # characters of the block so far


def _full_text(
    ranked: Sequence[Note],
    min_score: float,
    limit: int,
    full_tokens: int,
    shown_before: Shown,
    reasons: dict[str, str],
) -> _Full:
    """The sure hits in full, in order, until one does not fit (`full_tokens` > 0: the cap
    on full text, the first regardless); what may point instead."""
    used = wrapped_size([PROMPT_HEADER])
    shown: list[Note] = []
    repeated: list[Note] = []
    candidates: list[Note] = []
    full = 0  # characters of full text
    stopped = ""  # why full text stopped (a sure hit did not fit)
    for rank, note in enumerate(ranked):
        sure = note.score >= min_score
        if note.id in shown_before.full:
            if sure and rank == 0:  # the best match again: one line saying it is there
                repeated.append(note)
            reasons[note.id] = "shown in full earlier in this session"
            continue
        if sure and note.disputed:
            reasons[note.id] = "sure, but disputed: a pointer at most"
        elif sure and not stopped:
            size = len(hit_block(note)) + 2  # blank line between blocks
            capped = full_tokens > 0 and shown and full + size > full_tokens * CHARS_PER_TOKEN
            if not capped and used + size <= limit:
                shown.append(note)
                used, full = used + size, full + size
                reasons[note.id] = f"sure: score {note.score:.2f} >= {min_score:.2f}"
                continue
            stopped = "the full-text cap" if capped else "the budget"
            reasons[note.id] = f"sure, but past {stopped}"
        elif sure:
            reasons[note.id] = f"sure, but past {stopped} (full text stays in order)"
        if note.repo:
            reasons[note.id] = "an org hit: shown in full or not at all"
        elif note.id in shown_before.pointed:
            reasons[note.id] = "pointed at earlier in this session"
        else:
            candidates.append(note)
    return _Full(tuple(shown), tuple(repeated), tuple(candidates), used)


def _fit_lines(
    full: _Full,
    pointed: Sequence[Note],
    ranked: Sequence[Note],
    min_score: float,
    limit: int,
    reasons: dict[str, str],
) -> list[Note]:
    """The pointer lines that fit what is left of the budget, the repeated best first."""
    kept: list[Note] = []
    # pointers alone come in the short wrapper (render_prompt_context)
    used = full.used + len(POINTER_HEADER) + 2 if full.shown else POINTERS_ONLY_SIZE
    for note in (*full.repeated, *pointed):
        again = note in full.repeated
        size = len(pointer_line(note, repeated=again)) + 1
        if used + size > limit:
            if not again:
                reasons[note.id] = "a pointer, but past the budget"
            continue
        kept.append(note)
        used += size
        if again:
            reasons[note.id] = "the best match, shown in full earlier in this session: one line"
        elif note.score >= min_score:
            reasons[note.id] += "; a pointer"
        else:
            reasons[note.id] = f"a pointer: rank {ranked.index(note) + 1}"
    return kept


def select(
    hits: Iterable[Note],
    tiers: Tiers,
    shown_before: Shown = Shown(),  # noqa: B008 - an immutable NamedTuple
    *,
    asks: bool = True,
) -> Selection:
    """`fill_budget` with the settings of `tiers`."""
    return fill_budget(
        hits,
        budget_tokens=tiers.budget_tokens,
        min_score=tiers.min_score,
        pointers=tiers.pointers,
        pointer_min_score=tiers.pointer_min_score,
        shown_before=shown_before,
        full_tokens=tiers.full_tokens,
        pointer_gap=tiers.pointer_gap,
        asks=asks,
    )
