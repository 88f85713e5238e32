"""UserPromptSubmit: which memories answer this prompt, and how they fill its budget. Pure.

A prompt gets the full text of the memories the decision is sure of, in order, filled into a
token budget, and, when it asks something of this repository, a one-line pointer to the best
others by rank (context/selection.py, docs/hooks.md#full-text-pointers-nothing); within a
session (a span of it: compaction starts a new one) a memory is shown in full once (`Shown`).
`PromptAsk` is the question itself, the same wherever `ContextService` runs: in the daemon, the
MCP server or the hook's own process. Light: a hook's own process imports this on a prompt
no daemon answers.
"""

# No `from __future__ import annotations` here: NamedTuple turns string annotations into
# ForwardRefs, compiling each one at import (~0.25 ms a field) on every prompt.

from collections.abc import Iterable
from typing import Any, NamedTuple

from local_recall.context.envelope import CLOSE_TAG, MAX_CONTEXT_CHARS, OPEN_TAG
from local_recall.context.notes import Note, char_budget, wrap
from local_recall.context.prompt_lines import (
    NO_TOOLS_YET,
    POINTER_HEADER,
    POINTER_HEADER_NO_TOOLS,
    POINTERS_ONLY_NO_TOOLS,
    POINTERS_ONLY_NOTICE,
    PROMPT_HEADER,
    hit_block,
    pointer_line,
    short_id,
)
from local_recall.context.selection import (
    FULL_TOKENS,
    POINTER_GAP,
    POINTER_MIN_SCORE,
    Selection,
    Tiers,
    fill_budget,
    select,
)
from local_recall.search.limits import MAX_QUERY_CHARS

# What callers import from here: the prompt's question, its selection (context/selection.py)
# and its lines (context/prompt_lines.py), rendered.
__all__ = [
    "FULL_TOKENS",
    "NO_TOOLS_YET",
    "POINTER_GAP",
    "POINTER_MIN_SCORE",
    "PromptAsk",
    "Selection",
    "Tiers",
    "fill_budget",
    "hit_block",
    "pointer_line",
    "prompt_context",
    "prompt_query",
    "render_prompt_context",
    "render_selection",
    "select",
    "short_id",
]

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
    at_least: int = 0  # the best this many whatever their score: pointers by rank


def render_prompt_context(selection: Selection, *, tools: bool = True) -> str:
    """The block a prompt gets. `tools` False: no MCP tool can open a pointer yet (Claude
    Code's first request), so the pointer block names the CLI."""
    if not selection.shown and not selection.pointers:
        return ""
    lines = [
        pointer_line(note, repeated=note.id in selection.repeated) for note in selection.pointers
    ]
    if not selection.shown:
        notice = POINTERS_ONLY_NOTICE if tools else POINTERS_ONLY_NO_TOOLS
        return "\n".join([OPEN_TAG, notice, *lines, CLOSE_TAG])
    parts = [PROMPT_HEADER]
    for note in selection.shown:
        parts += ["", hit_block(note)]
    if lines:
        parts += ["", POINTER_HEADER if tools else POINTER_HEADER_NO_TOOLS, *lines]
    return wrap(parts)


def prompt_context(hits: Iterable[Note], **options: Any) -> str:
    """The UserPromptSubmit context of `hits` (fill_budget's options), or "" when nothing
    relevant fits."""
    limit = {"max_chars": options.get("max_chars", MAX_CONTEXT_CHARS)}
    selection = fill_budget(hits, **options)
    return render_selection(selection, budget_tokens=options["budget_tokens"], **limit)


def render_selection(
    selection: Selection,
    *,
    budget_tokens: int,
    max_chars: int = MAX_CONTEXT_CHARS,
    tools: bool = True,
) -> str:
    """`selection` rendered, or "" should it not fit (fill_budget measured it; without
    `tools` the one line saying how to open a pointer is dropped rather than the answer)."""
    limit = char_budget(budget_tokens, max_chars)
    text = render_prompt_context(selection, tools=tools)
    if len(text) > limit and not tools:
        text = render_prompt_context(selection)
    return text if len(text) <= limit else ""
