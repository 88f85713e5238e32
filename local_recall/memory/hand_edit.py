"""A memory written or edited by a person in their editor (`local-recall new`, `edit ID` with
no flags): the file they are shown and what their saved text means. The text is the memory
file format itself (docs/memory-format.md), so what they learn here is what they can write by
hand. Reading it goes through the same parser as every memory file; writing it back goes
through the one write path (validated, redacted, deduplicated) like any other write."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from local_recall.errors import InvalidMemoryFile
from local_recall.memory.format import parse_memory_text
from local_recall.memory.model import Memory
from local_recall.memory.repair import Unfixable, is_fixable, plan_repair
from local_recall.memory.timestamps import format_timestamp

# The name the edited text is parsed under: the file name is a memory's identity, and a new
# memory gets its id when it is saved.
_PARSE_AS = Path("00000000-0000-4000-8000-000000000000.md")

# Plain YAML as it stands (no ": "), so a subject left in place is parsed and refused by name.
PLACEHOLDER_SUBJECT = "One line that says what to know"
PLACEHOLDER_BODY = (
    "What a teammate (or the agent) should know, and why: the decision and its reason, the root\n"
    "cause, the convention, the gotcha. Markdown. Replace this text, save and quit to add the\n"
    "memory; quit without changing anything to cancel.\n"
    "\n"
    "applies_to above: global, file:<path in the repo> or area:<name>."
)


def new_memory_text(now: datetime, scope: str = "global") -> str:
    """The file `new` opens: a valid memory whose subject and body are placeholders."""
    return (
        "---\n"
        f"subject: {PLACEHOLDER_SUBJECT}\n"
        "keywords: []\n"
        f"applies_to: {scope}\n"
        f'occurred_at: "{format_timestamp(now)}"\n'
        "---\n\n"
        f"{PLACEHOLDER_BODY}\n"
    )


def read_edited(text: str, shown_as: Path, now: datetime, memory_id: str | None = None) -> Memory:
    """The memory a person's saved text describes: what `doctor --fix` would complete is
    completed (a missing occurred_at is `now`, a missing subject the body's first line).
    InvalidMemoryFile names `shown_as` (the file they edited) and the reason; a placeholder
    left in place is refused too. `memory_id`: the memory being edited (its `id:` must stay)."""
    name = Path(f"{memory_id}.md") if memory_id else _PARSE_AS
    try:
        memory = parse_memory_text(text, name)
    except InvalidMemoryFile as exc:
        if not is_fixable(exc.reason):
            raise InvalidMemoryFile(shown_as, exc.reason) from None
        completed = plan_repair(name, text, modified=now, taken=(), new_id=lambda: "")
        if isinstance(completed, Unfixable) or completed.target != name:
            raise InvalidMemoryFile(shown_as, exc.reason) from None
        memory = parse_memory_text(completed.text, name)
    if memory.subject == PLACEHOLDER_SUBJECT or PLACEHOLDER_BODY.partition("\n")[0] in memory.body:
        raise InvalidMemoryFile(shown_as, "the subject or body is still the placeholder")
    return memory
