"""What a session did with each memory it was shown, decided from its transcript's tool calls
and the extraction pass's answer (docs/hooks.md#what-is-learned). Pure: values in, `Outcome`s
out; capture/executor.py carries it out after each chunk it sends.

No extra model call: "followed" is read off the tool calls (get_memories, `local-recall show`,
a read of the memory's file, each naming the memory by its id or an 8-character prefix);
"relied" and "disputed" come from the answer of the extraction call the pass makes anyway.
"""

import re
from collections.abc import Collection, Iterable, Mapping
from typing import NamedTuple

from local_recall.learning.outcomes import (
    AT_PATTERN,
    MAX_REASON_CHARS,
    USE_RANK,
    UUID_PATTERN,
    Outcome,
    Use,
)
from local_recall.learning.shown import FirstShown
from local_recall.text import one_line

MIN_PREFIX_CHARS = 8  # the short ids pointers show (context/prompt.py SHORT_ID_CHARS)
_ID_TOKEN = re.compile(r"(?<![0-9a-z])[0-9a-f]{8}(?:-?[0-9a-f])*")
_READS_MEMORY = re.compile(r"local-recall\s+(show|get)\b|episodic-memory/", re.IGNORECASE)
_GET_TOOL = re.compile(r"(^|[^a-z0-9])get_memories$", re.IGNORECASE)


class Verdicts(NamedTuple):
    """What the extraction answer said about the shown memories (full ids, shown ones only)."""

    relied: frozenset[str] = frozenset()
    disputed: Mapping[str, str] = {}  # id -> one-line reason
    # the model was asked and answered about what was shown: without that (not asked, or the
    # call failed) nothing says a memory shown in full or pointed at went unused
    judged: bool = False


def reads_memories(tool_name: str, argument: str) -> bool:
    """A call that opens memories: the MCP tool, or a command or read naming one."""
    return _GET_TOOL.search(tool_name) is not None or _READS_MEMORY.search(argument) is not None


def followed(calls: Iterable[tuple[str, str]], shown: Collection[str]) -> frozenset[str]:
    """The shown memories a (tool name, key argument) call opened by id or unique prefix."""
    opened: set[str] = set()
    for name, argument in calls:
        if not reads_memories(name, argument):
            continue
        for token in _ID_TOKEN.findall(argument.lower()):
            matches = [memory_id for memory_id in shown if memory_id.startswith(token)]
            if len(matches) == 1:  # an ambiguous prefix opened nothing for sure
                opened.add(matches[0])
    return frozenset(opened)


def use_of(memory_id: str, opened: Collection[str], verdicts: Verdicts) -> Use:
    if memory_id in verdicts.disputed:
        return "disputed"
    if memory_id in verdicts.relied:
        return "relied"
    return "followed" if memory_id in opened else "ignored"


def session_outcomes(
    session: str,
    shown: Mapping[str, FirstShown],
    opened: Collection[str],
    verdicts: Verdicts = Verdicts(),  # noqa: B008 (immutable)
) -> list[Outcome]:
    """One Outcome per memory the session was shown (ids and times the record holds that are
    not well-formed are left out: the record sits in state/, which may be planted). Without a
    judgement (`verdicts.judged`) only what the tool calls show is noted: no "ignored"."""
    outcomes = []
    for memory_id, first in shown.items():
        if not UUID_PATTERN.fullmatch(memory_id) or not AT_PATTERN.fullmatch(first.at):
            continue
        use = use_of(memory_id, opened, verdicts)
        if use == "ignored" and not verdicts.judged:
            continue
        why = verdicts.disputed.get(memory_id, "") if use == "disputed" else ""
        reason = one_line(why, MAX_REASON_CHARS, mark="")
        outcomes.append(Outcome(memory_id, session, first.at, first.tier, use, reason))
    return sorted(outcomes, key=lambda o: (-USE_RANK[o.use], o.at, o.memory_id))
