"""What an extractor sends and what it accepts back, pure and tested with literals: the
prompt and schema (`build_prompt`, `MEMORY_SCHEMA`), the values (`CandidateMemory`,
`ExtractionResult`, `ModelAnswer`, `AttemptFailure`), per-item validation
(`validate_candidates`), reading a JSON answer (`read_json_answer`) and backoff. The backends
(`claude_cli`, `ollama_chat`) only run a model and carry these decisions out.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeGuard

from local_recall.errors import InvalidInput
from local_recall.learning.signals import Verdicts
from local_recall.memory.model import parse_scope

MAX_SUBJECT_CHARS = 200  # accepted; the prompt asks for 120
MAX_KEYWORDS = 20  # accepted; the prompt asks for 1-8
# Existing memories shown so the model can say a new one supersedes one of them: a few, in a
# small budget (~150 tokens) on top of the ~900-token fixed prompt.
MAX_EXISTING = 5
MAX_EXISTING_CHARS = 600
MAX_REASON_CHARS = 200


# ---------------------------------------------------------------------------------------------
# Values


@dataclass(frozen=True, slots=True)
class ExistingMemory:
    """A memory already in the store, shown to the model by id and subject."""

    id: str
    subject: str


@dataclass(frozen=True, slots=True)
class Supersedes:
    """The model says the new memory replaces a shown one (the code or a decision changed)."""

    id: str
    reason: str  # one line


@dataclass(frozen=True, slots=True)
class CandidateMemory:
    subject: str
    body: str
    keywords: tuple[str, ...]
    applies_to: str  # normalised by memory.parse_scope
    supersedes: Supersedes | None = None  # only ever an id that was shown


@dataclass(frozen=True, slots=True)
class ExtractionResult:
    memories: tuple[CandidateMemory, ...]
    dropped: tuple[str, ...]  # why each rejected item was rejected (no memory text)
    input_tokens: int  # incl. cache reads/writes, summed over all attempts of this call
    output_tokens: int
    cost_usd: float | None  # as reported by the CLI (list price; None if absent)
    # what the answer said of the memories the session was shown (extraction/verdicts.py)
    verdicts: Verdicts = field(default_factory=Verdicts)


class Extractor(Protocol):
    """What a pass needs from an extractor (`ClaudeCliExtractor`, `OllamaChatExtractor`)."""

    def extract(
        self,
        condensed: str,
        *,
        context: str = "",
        repo_name: str = "",
        existing: Sequence[ExistingMemory] = (),
    ) -> ExtractionResult: ...


class ReadsShown(Protocol):
    """An extractor that can also say, in the same call, what a session did with the memories
    it was shown (`claude -p`: extraction/verdicts.py). The pass asks it only then."""

    reads_shown: bool

    def extract(
        self,
        condensed: str,
        *,
        context: str = "",
        repo_name: str = "",
        existing: Sequence[ExistingMemory] = (),
        shown_memories: Sequence[ExistingMemory] = (),
    ) -> ExtractionResult: ...


def positive_int(value: object) -> int:
    """A token count as reported: a positive int, anything else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


# ---------------------------------------------------------------------------------------------
# The prompt

_INSTRUCTIONS = """\
You extract durable memories from a condensed transcript of a Claude Code session in a software \
repository. Memories are saved as files in the repository and shown to future coding sessions, \
so only knowledge that will still matter weeks from now belongs in them.

Extract only durable knowledge:
- decisions and why they were made (and alternatives that were rejected, with the reason);
- root causes of bugs and how they were fixed;
- conventions of this codebase (structure, naming, testing, tooling, workflow);
- gotchas: surprising behaviour, traps, environment quirks, commands that must be run a \
particular way;
- preferences the user stated about how to work in this repository.

Never extract:
- transient chatter, greetings, progress reports, plans that were not carried out, one-off task \
details;
- what is obvious from reading the code, its comments or the git history;
- anything from the earlier turns given as context: they were already processed;
- secrets of any kind: API keys, tokens, passwords, credentials, private keys, personal data. \
Describe the fact without the secret value.

Each memory must stand alone: a reader who never saw this transcript must understand it. Name \
files, functions, commands, versions and error messages explicitly; never write "the bug above" \
or "as discussed".

Fields of each memory:
- subject: one line of at most 120 characters saying what the memory is about;
- body: concise markdown (a few sentences or bullet points): the fact and why it matters;
- keywords: 1 to 8 short search terms (identifiers, tool names, concepts);
- applies_to: "global" (the whole repository), "file:<repo-relative path>" (one file or \
directory, e.g. "file:src/db/pool.py") or "area:<name>" (a subsystem, e.g. "area:build").

Prefer few, high-value memories; merge related facts into one. If nothing durable happened \
(the common case), return an empty list.

When existing memories are listed, do not write their facts again: a memory that says what a \
listed one says, in other words or with a detail of its own added (an example command, the \
version you happened to run), is a repeat; leave it out. When a new memory makes a listed one \
wrong (the code or a decision changed since), set its "supersedes" to that memory's id and a \
one-line reason. Only for a real contradiction, never for a memory that merely adds detail."""

SYSTEM_PROMPT = _INSTRUCTIONS + "\n\nAnswer only by calling the StructuredOutput tool once."
OLLAMA_SYSTEM_PROMPT = _INSTRUCTIONS + '\n\nAnswer only with the JSON object {"memories": [...]}.'

MEMORY_SCHEMA: dict[str, Any] = {
    # Structure is enforced here (the CLI re-asks the model on a mismatch, costing a turn);
    # soft limits (lengths, counts) are only described, and checked item by item afterwards so
    # one long subject does not cost the whole answer.
    "type": "object",
    "properties": {
        "memories": {
            "type": "array",
            "description": "Durable memories; empty when nothing durable happened.",
            "items": {
                "type": "object",
                "properties": {
                    "subject": {
                        "type": "string",
                        "description": "One line, at most 120 characters.",
                    },
                    "body": {"type": "string", "description": "Concise markdown."},
                    "keywords": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "1 to 8 short search terms.",
                    },
                    "applies_to": {
                        "type": "string",
                        "description": 'Scope: "global", "file:<repo-relative path>" '
                        'or "area:<name>".',
                    },
                    "supersedes": {
                        "type": "object",
                        "description": "Only when this memory makes a listed existing memory "
                        "wrong; omit otherwise.",
                        "properties": {
                            "id": {"type": "string", "description": "The existing memory's id."},
                            "reason": {"type": "string", "description": "One line: what changed."},
                        },
                        "required": ["id", "reason"],
                        "additionalProperties": False,
                    },
                },
                "required": ["subject", "body", "keywords", "applies_to"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["memories"],
    "additionalProperties": False,
}


def build_prompt(
    condensed: str,
    *,
    context: str = "",
    repo_name: str = "",
    existing: Sequence[ExistingMemory] = (),
) -> str:
    """The user message (sent on stdin). Tags delimit the parts; a closing tag inside the
    transcript itself is defused so it cannot end the block early. `existing`: memories most
    similar to the transcript, listed (within budget) so the model can say one is superseded."""
    parts: list[str] = []
    if repo_name:
        parts.append(f"Repository: {fold(repo_name)}\n")
    shown = existing_lines(existing)
    if shown:
        parts.append(
            "<existing-memories>\n"
            "Memories already saved (id: subject). Do not repeat them, not even in other words "
            "or with a detail added (such a copy is dropped); a new memory that makes one "
            "wrong names it in supersedes.\n"
            + defuse("\n".join(shown), "existing-memories")
            + "\n</existing-memories>\n"
        )
    if context.strip():
        parts.append(
            "<context>\n"
            "Earlier turns of the session, already processed. Context only: do not extract "
            "memories from this part.\n\n"
            f"{defuse(context, 'context')}\n"
            "</context>\n"
        )
    parts.append(
        "<transcript>\n"
        "Condensed transcript. If it opens with turns marked as earlier / already processed, "
        "those are context only.\n\n"
        f"{defuse(condensed, 'transcript')}\n"
        "</transcript>\n"
    )
    parts.append(
        "Extract the durable memories from the transcript above (an empty list if there are none)."
    )
    return "\n".join(parts)


def existing_lines(
    existing: Sequence[ExistingMemory],
    *,
    max_items: int = MAX_EXISTING,
    max_chars: int = MAX_EXISTING_CHARS,
) -> list[str]:
    """`<id>: <subject>` lines, most similar first, at most `max_items` and `max_chars` in all
    (a long subject is cut; a line that no longer fits ends the list)."""
    lines: list[str] = []
    used = 0
    for memory in existing[:max_items]:
        line = f"{memory.id}: {fold(memory.subject)[:120]}"
        if used + len(line) + 1 > max_chars:
            break
        lines.append(line)
        used += len(line) + 1
    return lines


def shown_ids(existing: Sequence[ExistingMemory]) -> frozenset[str]:
    """The ids `build_prompt` lists: the only ones a `supersedes` may name."""
    return frozenset(line.partition(":")[0] for line in existing_lines(existing))


def defuse(text: str, tag: str) -> str:
    return text.replace(f"</{tag}>", f"</ {tag}>")


def fold(text: str) -> str:
    """`text` on one line: every run of whitespace becomes one space."""
    return " ".join(text.split())


# ---------------------------------------------------------------------------------------------
# Reading what the CLI printed

# rate_limited / transient: try again after a backoff; unavailable: not usable now (missing
# model, bad credentials); permanent: this request would fail again; unreachable: no answer
# from the API at all (offline, connection refused): not retried seconds later, the pass's
# own backoff is.
FailureKind = Literal["rate_limited", "transient", "unavailable", "permanent", "unreachable"]


@dataclass(frozen=True, slots=True)
class ModelAnswer:
    structured: Mapping[str, Any]
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


@dataclass(frozen=True, slots=True)
class AttemptFailure:
    kind: FailureKind
    reason: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None


# ---------------------------------------------------------------------------------------------
# Validating what the model returned


def validate_candidates(
    items: list[Any], shown: Collection[str] = ()
) -> tuple[tuple[CandidateMemory, ...], tuple[str, ...]]:
    """Check each item on its own: a bad one is dropped with a reason, the rest are kept.
    `shown`: the existing memories' ids the prompt listed; a `supersedes` naming any other id
    (or malformed) is ignored, the memory kept."""
    kept: list[CandidateMemory] = []
    dropped: list[str] = []
    for number, item in enumerate(items, start=1):
        try:
            kept.append(_candidate(item, shown))
        except InvalidInput as exc:
            dropped.append(f"memory {number}: {exc}")
    return tuple(kept), tuple(dropped)


def _supersedes(value: object, shown: Collection[str]) -> Supersedes | None:
    if not isinstance(value, dict):
        return None
    memory_id, reason = value.get("id"), value.get("reason")
    if not isinstance(memory_id, str) or memory_id.strip().lower() not in shown:
        return None  # an id the model invented, or one it was not shown
    text = fold(reason)[:MAX_REASON_CHARS] if isinstance(reason, str) else ""
    return Supersedes(memory_id.strip().lower(), text or "superseded by a newer memory")


def _candidate(item: object, shown: Collection[str] = ()) -> CandidateMemory:
    if not isinstance(item, dict):
        raise InvalidInput("not an object")
    subject = item.get("subject")
    if not isinstance(subject, str) or not subject.strip():
        raise InvalidInput("subject is missing or empty")
    subject = subject.strip()
    if "\n" in subject or "\r" in subject:
        raise InvalidInput("subject is not a single line")
    if len(subject) > MAX_SUBJECT_CHARS:
        raise InvalidInput(f"subject is longer than {MAX_SUBJECT_CHARS} characters")
    body = item.get("body")
    if not isinstance(body, str) or not body.strip():
        raise InvalidInput("body is missing or empty")
    keywords = item.get("keywords", [])
    if not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
        raise InvalidInput("keywords is not a list of strings")
    cleaned = _unique(k.strip() for k in keywords if k.strip())
    if len(cleaned) > MAX_KEYWORDS:
        raise InvalidInput(f"more than {MAX_KEYWORDS} keywords")
    scope = item.get("applies_to")
    if not isinstance(scope, str):
        raise InvalidInput("applies_to is missing")
    supersedes = _supersedes(item.get("supersedes"), shown)
    return CandidateMemory(subject, body.strip(), cleaned, parse_scope(scope), supersedes)


def _unique(values: Any) -> tuple[str, ...]:
    seen: set[str] = set()
    out: list[str] = []
    for value in values:
        if value.casefold() not in seen:
            seen.add(value.casefold())
            out.append(value)
    return tuple(out)


def backoff_delay(failed_attempts: int, base_seconds: float) -> float:
    """Wait after the n-th failed attempt: base, 2*base, 4*base, ..."""
    return float(base_seconds * (2 ** max(0, failed_attempts - 1)))


def has_answer(structured: object, answer_key: str) -> TypeGuard[dict[str, Any]]:
    """A JSON object holding the answer: a `memories` list, or the `answer_key` field."""
    if not isinstance(structured, dict):
        return False
    if answer_key == "memories":
        return isinstance(structured.get("memories"), list)
    return answer_key in structured


def read_json_answer(
    content: str,
    input_tokens: int,
    output_tokens: int,
    *,
    answer_key: str = "memories",
    what: str = "memories",
) -> ModelAnswer | AttemptFailure:
    """A chat answer constrained by a schema (MEMORY_SCHEMA by default): the JSON object as
    text, holding `answer_key`; `what` names the object in the failure."""
    try:
        structured = json.loads(content)
    except ValueError:
        structured = None
    if not has_answer(structured, answer_key):
        return AttemptFailure(
            "transient", f"malformed output: not a {what} object", input_tokens, output_tokens
        )
    return ModelAnswer(structured, input_tokens, output_tokens, None)
