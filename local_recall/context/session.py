"""SessionStart: the session summaries and an index of memories, and how they fit the budget.
Pure functions over plain values (docs/hooks.md#sessionstart).

The index is one line per memory (date, id, subject) so the model knows what exists and fetches
details on demand (progressive disclosure). Before it come the last session summaries:

- startup / resume: the newest summaries of the checked-out branch (the story so far);
- compact / clear: the summary of the session being continued first — the same session id
  after /compact; after /clear the session id is new, so the newest summary of the branch —
  then the other recent ones.

`SessionAsk` is the question, `SessionNotes` the answer, the same wherever `ContextService`
runs: in the daemon, the MCP server or the hook's own process.
"""

# No `from __future__ import annotations` here: NamedTuple turns string annotations into
# ForwardRefs, compiling each one at import (~0.25 ms a field) on every session start.

from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple, Protocol, TypeVar

from local_recall.context.duplicates import FactWords, fact_words, same_words
from local_recall.context.envelope import CLOSE_TAG, MAX_CONTEXT_CHARS, OPEN_TAG
from local_recall.context.notes import (
    HOW_TO_FETCH,
    NOTICE,
    POINTER_GUIDE,
    Note,
    SummaryNote,
    char_budget,
    defang_wrapper,
    one_line,
    wrap,
    wrapped_size,
)

# The session index never needs more candidates than fit in MAX_CONTEXT_CHARS.
SESSION_CANDIDATES = 300
SESSION_SOURCES = ("startup", "resume", "clear", "compact")
CONTINUED_SOURCES = ("compact", "clear")
MIN_CUT_CHARS = 200  # a continued session's summary cut shorter than this is not worth showing
MAX_SUMMARIES = 20  # whatever a caller asks for
MAX_HEALTH_CHARS = 600


# --- the question and its answer -----------------------------------------------------------


class SessionAsk(NamedTuple):
    """What a starting session asks for: up to `limit` memories for the index, ranked for
    `source`, and `summaries` session summaries (`branch` None: unknown or detached)."""

    source: str = "startup"
    limit: int = SESSION_CANDIDATES
    summaries: int = 0
    session_id: str = ""
    branch: str | None = None


class SessionNotes(NamedTuple):
    """The answer: how many memories the repository holds, the best `notes` for the index
    (ranked), and the summaries in the order they are shown."""

    total: int
    notes: list[Note]
    summaries: list[SummaryNote]
    health: str = ""  # one line when extraction has been failing a while (capture/health.py)


# --- the index of what exists --------------------------------------------------------------


class SessionPlan(NamedTuple):
    """How much of the index a SessionStart `source` gets, and how it is introduced."""

    budget_tokens: int
    heading: str


def plan_session(source: str, budget_tokens: int) -> SessionPlan:
    """startup / clear: a fresh context, the full index budget.
    compact: the summary dropped the earlier index, so inject it again in full.
    resume: the earlier conversation (with its index) is back; half the budget, newest first,
    is enough to surface what was added since. Unknown sources are treated like startup."""
    if source == "resume":
        return SessionPlan(budget_tokens // 2, "Newest memories (session resumed):")
    if source == "compact":
        return SessionPlan(budget_tokens, "Repository memories (re-listed after compaction):")
    return SessionPlan(budget_tokens, "Repository memories worth knowing now:")


def rank_for_session(notes: Iterable[Note], source: str = "startup") -> list[Note]:
    """Which memories are worth knowing before any prompt: newest first, and (except on resume,
    where recency is the point) global ones before those scoped to a file or area — scoped ones
    reach the model through the prompt hook when the work touches them."""
    return session_order(notes, source, lambda note: (note.occurred_at, note.id))


class HasScope(Protocol):
    @property
    def applies_to(self) -> str: ...


Scoped = TypeVar("Scoped", bound=HasScope)


def session_order(
    items: Iterable[Scoped], source: str, newest: Callable[[Scoped], Any]
) -> list[Scoped]:
    """rank_for_session's order for notes or memories: `newest` gives each its sort key (the
    newest is the greatest; ties go by id), so that a long list is ranked before its few
    shown items become notes."""
    by_date = sorted(items, key=newest, reverse=True)
    if source == "resume":
        return by_date
    return [n for n in by_date if n.applies_to == "global"] + [
        n for n in by_date if n.applies_to != "global"
    ]


def index_line(note: Note) -> str:
    scope = "" if note.applies_to == "global" else f" [{one_line(note.applies_to)}]"
    return f"- {note.date or '????-??-??'} {note.id} {one_line(note.subject)}{scope}{note.flags}"


def render_session_context(
    ranked: Sequence[Note],
    *,
    total: int,
    source: str,
    budget_tokens: int,
    max_chars: int = MAX_CONTEXT_CHARS,
) -> str:
    """The SessionStart index: as many of `ranked` (best first) as fit, shown newest first.
    `total` is how many memories the repository holds. Empty string when nothing fits."""
    plan = plan_session(source, budget_tokens)
    total = max(total, len(ranked))
    limit = char_budget(plan.budget_tokens, max_chars)
    if not ranked or limit <= 0:
        return ""
    chosen: list[Note] = []

    def header(shown: int) -> list[str]:
        more = f" ({total - shown} more: search them)" if total > shown else ""
        return [f"{plan.heading} {shown} of {total} listed{more}.", HOW_TO_FETCH, POINTER_GUIDE]

    # header(0) carries the longest "N more" clause; the shown count adds at most its digits
    used = wrapped_size(header(0)) + len(str(total))
    taken: list[FactWords] = []
    for note in ranked:
        line = index_line(note)
        if used + len(line) + 1 > limit:
            continue  # a long subject does not stop shorter ones after it
        words = fact_words(note.subject, note.body)
        if any(same_words(words, other) for other in taken):
            continue  # one fact listed once (context/duplicates.py)
        chosen.append(note)
        taken.append(words)
        used += len(line) + 1
    if not chosen:
        return ""
    chosen.sort(key=lambda note: (note.occurred_at, note.id), reverse=True)
    text = wrap([*header(len(chosen)), *map(index_line, chosen)])
    return text if len(text) <= limit else ""


# --- session summaries ---------------------------------------------------------------------


def pick_summaries(
    notes: Sequence[SummaryNote],
    *,
    source: str,
    session_id: str,
    branch: str | None,
    count: int,
) -> list[SummaryNote]:
    """At most `count` summaries in the order they are shown. `branch` None (unknown or
    detached): summaries of every branch. A summary saying word for word what one shown before
    it says (sessions that asked and did the same) is left out: it would only cost tokens."""
    if count <= 0:
        return []
    newest = sorted(notes, key=lambda n: (n.occurred_at, n.id), reverse=True)
    on_branch = [n for n in newest if branch is None or n.branch == branch]
    if source not in CONTINUED_SOURCES:
        return _distinct(on_branch)[:count]
    continued = [n for n in newest if session_id and n.id == session_id]
    if not continued and source == "clear":
        continued = on_branch[:1]
    rest = [n for n in on_branch if n not in continued]
    return _distinct(continued + rest)[:count]


def _distinct(notes: Iterable[SummaryNote]) -> list[SummaryNote]:
    """The first of each body (whitespace and case aside)."""
    seen: set[str] = set()
    kept = []
    for note in notes:
        body = " ".join(note.body.split()).casefold()
        if body not in seen:
            seen.add(body)
            kept.append(note)
    return kept


def summary_block(note: SummaryNote) -> str:
    where = f"branch {note.branch}" if note.branch else "branch unknown"
    if note.commit:
        where += f" @ {note.commit[:10]}"
    lines = [f"### {note.occurred_at[:16].replace('T', ' ')} session {note.id} ({where})"]
    for line in note.body.splitlines():
        lines.append(line[3:] + ":" if line.startswith("## ") else line)
    # a summary cannot close (or reopen) the wrapper and talk outside it
    return defang_wrapper("\n".join(line for line in lines if line.strip()))


def render_summaries(
    picked: Sequence[SummaryNote],
    *,
    source: str,
    branch: str | None,
    budget_tokens: int,
    max_chars: int,
) -> str:
    """The summaries block: whole summaries while they fit, newest first (the continued one
    first on compact/clear, cut to fit if it must be). Empty string when none fits."""
    limit = char_budget(budget_tokens, max_chars)
    if not picked or limit <= 0:
        return ""
    where = f" on branch {branch}" if branch else ""
    if source in CONTINUED_SOURCES:
        heading = f"The session being continued, then earlier sessions{where}, newest first:"
    else:
        heading = f"Recent sessions{where}, newest first (what was asked, done and left to do):"
    lines = [OPEN_TAG, NOTICE, heading]
    used = sum(len(line) + 1 for line in lines) + len(CLOSE_TAG)
    for position, note in enumerate(picked):
        block = summary_block(note)
        room = limit - used - 1
        if len(block) > room:
            if position > 0 or source not in CONTINUED_SOURCES or room < MIN_CUT_CHARS:
                continue
            block = block[: room - 12] + "\n[... cut]"
        lines.append(block)
        used += len(block) + 1
    if len(lines) == 3:
        return ""
    return "\n".join([*lines, CLOSE_TAG])


# --- the whole SessionStart context --------------------------------------------------------


def session_context(
    found: SessionNotes,
    *,
    source: str,
    branch: str | None,
    index_tokens: int,
    summary_tokens: int,
) -> str:
    """A warning when extraction fails, the summaries (at most half of Claude Code's cut),
    then the index in what is left."""
    # A file in state/ may be planted: the line is data in the wrapper like any memory.
    health = wrap([one_line(found.health)[:MAX_HEALTH_CHARS]]) if found.health else ""
    summaries = render_summaries(
        found.summaries,
        source=source,
        branch=branch,
        budget_tokens=summary_tokens,
        max_chars=MAX_CONTEXT_CHARS // 2,
    )
    index = render_session_context(
        found.notes,
        total=found.total,
        source=source,
        budget_tokens=index_tokens,
        max_chars=MAX_CONTEXT_CHARS - len(summaries) - len(health) - 2,
    )
    return "\n".join(part for part in (health, summaries, index) if part)
