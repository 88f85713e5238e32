"""UserPromptSubmit: which memories answer this prompt, and how they fill its budget. Pure.

A prompt gets the full text of the few memories that match it, best first, filled into a token
budget; those that do not fit are listed by id. `PromptAsk` is the question itself, the same on
every path: asked of the daemon over its socket (`to_request`) or of `ContextService` in the
hook's own process. Light: the prompt hook imports this on every prompt.
"""

# No `from __future__ import annotations` here: NamedTuple turns string annotations into
# ForwardRefs, compiling each one at import (~0.25 ms a field) on every prompt.

from collections.abc import Iterable
from typing import Any, NamedTuple

from local_recall.context.duplicates import without_near_duplicates
from local_recall.context.notes import (
    HOW_TO_FETCH,
    MAX_CONTEXT_CHARS,
    Note,
    char_budget,
    defang_wrapper,
    one_line,
    wrap,
    wrapped_size,
)
from local_recall.search.limits import MAX_QUERY_CHARS

# --- the prompt as a query -----------------------------------------------------------------

# MAX_QUERY_CHARS (search/limits.py): the embedder reads ~256 tokens; more only costs time.


def prompt_query(prompt: str) -> str | None:
    """The search text for a prompt, or None when searching is pointless: empty prompts, and
    slash commands (`/clear`, `/compact`), which Claude Code handles itself. Context blocks an
    agent put into the prompt (Gemini: the SessionStart context) are not the user's words."""
    from local_recall.context.prompt_text import user_words

    text = user_words(prompt)
    if len(text) < 3 or (text.startswith("/") and len(text.split()) == 1):
        return None
    return text[:MAX_QUERY_CHARS]


class PromptAsk(NamedTuple):
    """The memories a prompt asks for: a search, with the hits' whole bodies."""

    query: str
    limit: int
    min_score: float

    def to_request(self) -> dict[str, Any]:
        """As the daemon's socket takes it (daemon/query_client.py)."""
        return {
            "op": "search",
            "query": self.query,
            "limit": self.limit,
            "min_score": self.min_score,
            "with_body": True,
        }


# --- the memories that match this prompt ---------------------------------------------------


class Selection(NamedTuple):
    shown: tuple[Note, ...]  # injected in full
    pointers: tuple[Note, ...]  # relevant but too large for what was left: listed by id


def hit_block(note: Note) -> str:
    scope = "" if note.applies_to == "global" else f" · {one_line(note.applies_to)}"
    meta = f"id {note.id} · {note.date or 'undated'}{scope} · score {note.score:.2f}"
    body = defang_wrapper(note.body.strip())
    title = f"## {one_line(note.subject)}{note.flags}"
    return "\n".join(part for part in (title, meta, body) if part)


_PROMPT_HEADER = "Memories that may bear on this prompt (best match first). " + HOW_TO_FETCH
_POINTER_HEADER = "Also relevant, too long to include here:"


def pointer_line(note: Note) -> str:
    return f"- {note.id} {one_line(note.subject)} (score {note.score:.2f}){note.flags}"


def fill_budget(
    hits: Iterable[Note],
    *,
    budget_tokens: int,
    min_score: float,
    max_chars: int = MAX_CONTEXT_CHARS,
) -> Selection:
    """Best score first; hits under `min_score` are dropped, and so is a hit stating the fact
    of a better one (context/duplicates.py); a hit whose text does not fit in what is left is
    skipped (the next, smaller one may) and listed as a pointer if that fits.
    The rendered result (wrapper included) never exceeds the token budget nor `max_chars`."""
    limit = char_budget(budget_tokens, max_chars)
    # the threshold is on relevance; the order also weighs staleness and branches
    ranked = without_near_duplicates(
        sorted((h for h in hits if h.score >= min_score), key=lambda h: -h.score * h.order)
    )
    seen: set[str] = set()
    used = wrapped_size([_PROMPT_HEADER])
    shown: list[Note] = []
    skipped: list[Note] = []
    for note in ranked:
        if note.id in seen:
            continue
        seen.add(note.id)
        size = len(hit_block(note)) + 2  # blank line between blocks
        if used + size <= limit:
            shown.append(note)
            used += size
        else:
            skipped.append(note)
    pointers: list[Note] = []
    if skipped:
        used += len(_POINTER_HEADER) + 2
        for note in skipped:
            size = len(pointer_line(note)) + 1
            if used + size <= limit:
                pointers.append(note)
                used += size
    return Selection(tuple(shown), tuple(pointers))


def render_prompt_context(selection: Selection) -> str:
    if not selection.shown and not selection.pointers:
        return ""
    parts = [_PROMPT_HEADER]
    for note in selection.shown:
        parts += ["", hit_block(note)]
    if selection.pointers:
        parts += ["", _POINTER_HEADER, *map(pointer_line, selection.pointers)]
    return wrap(parts)


def prompt_context(
    hits: Iterable[Note],
    *,
    budget_tokens: int,
    min_score: float,
    max_chars: int = MAX_CONTEXT_CHARS,
) -> str:
    """The UserPromptSubmit context, or "" when nothing relevant fits."""
    selection = fill_budget(
        hits, budget_tokens=budget_tokens, min_score=min_score, max_chars=max_chars
    )
    text = render_prompt_context(selection)
    return text if len(text) <= char_budget(budget_tokens, max_chars) else ""
