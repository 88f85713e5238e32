"""What a session-summary request sends and accepts back, pure and tested with literals: the
prompt and schema (`build_summary_prompt`, `SUMMARY_SCHEMA`), the values (`SummaryFields`,
`SummaryResult`) and the validation of an answer (`validate_summary`).

A summary is a separate request from memory extraction: memories keep what stays true for
weeks; a summary tells the next session what this one was about and where it stopped. One
summary per session, updated as the session goes on: each request gets the previous summary
and only the turns that came after it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from local_recall.capture.extraction.prompt import fold
from local_recall.errors import InvalidInput
from local_recall.redaction.secrets import redact_for_storage

MAX_FIELD_CHARS = 2_000  # per field, after validation (the prompt asks for far less)
MAX_ITEMS = 12  # list entries kept per field


@dataclass(frozen=True, slots=True)
class SummaryFields:
    request: str  # what the user asked for, one or two sentences
    done: tuple[str, ...]
    learned: tuple[str, ...]
    next_steps: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "request": self.request,
            "done": list(self.done),
            "learned": list(self.learned),
            "next_steps": list(self.next_steps),
        }


@dataclass(frozen=True, slots=True)
class SummaryResult:
    summary: SummaryFields
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


@runtime_checkable
class Summariser(Protocol):
    """What a pass needs to write session summaries (`ClaudeCliExtractor`,
    `OllamaChatExtractor`)."""

    def summarise(
        self, condensed: str, *, previous: str = "", repo_name: str = ""
    ) -> SummaryResult: ...


_INSTRUCTIONS = """\
You summarise a Claude Code session in a software repository for the developer (and the agent) \
who will continue the work in a later session. You get the summary written so far (if any) and \
the condensed turns that came after it; return the updated summary of the WHOLE session.

Fields:
- request: what the user asked for in this session, one or two sentences (keep the earlier \
request if the new turns only continue it; add a new goal if the user changed course);
- done: what was actually done (files changed, commands run, results), short items, most \
important first;
- learned: facts discovered that matter for the next steps (causes found, constraints, \
surprises), short items; empty if none;
- next_steps: what is left to do or was proposed but not done, short items; empty if the work \
is finished.

Be concrete: name files, functions, commands, errors and test names. No greetings, no \
speculation beyond what the transcript shows. Never include secrets (API keys, tokens, \
passwords, personal data): describe the fact without the value. Keep each item under 200 \
characters and each list under 8 items."""

SUMMARY_SYSTEM_PROMPT = _INSTRUCTIONS + "\n\nAnswer only by calling the StructuredOutput tool once."
OLLAMA_SUMMARY_SYSTEM_PROMPT = (
    _INSTRUCTIONS
    + '\n\nAnswer only with the JSON object {"request": ..., "done": [...], "learned": [...], '
    '"next_steps": [...]}.'
)

_LIST = {"type": "array", "items": {"type": "string"}}
SUMMARY_SCHEMA: dict[str, Any] = {
    # Structure only, as MEMORY_SCHEMA: lengths are described, then checked by validate_summary.
    "type": "object",
    "properties": {
        "request": {"type": "string", "description": "What the user asked for."},
        "done": {**_LIST, "description": "What was done, short items."},
        "learned": {**_LIST, "description": "What was found out, short items."},
        "next_steps": {**_LIST, "description": "What is left to do, short items."},
    },
    "required": ["request", "done", "learned", "next_steps"],
    "additionalProperties": False,
}


def build_summary_prompt(condensed: str, *, previous: str = "", repo_name: str = "") -> str:
    """The user message: the summary so far (JSON) and the new turns, each in its own block."""
    parts: list[str] = []
    if repo_name:
        parts.append(f"Repository: {fold(repo_name)}\n")
    if previous.strip():
        parts.append(
            "<summary-so-far>\n"
            f"{previous.replace('</summary-so-far>', '</ summary-so-far>')}\n"
            "</summary-so-far>\n"
        )
    parts.append(
        "<transcript>\n"
        "Condensed turns of the session"
        + (" since the summary above" if previous.strip() else "")
        + ". Turns marked as earlier / already processed are context only.\n\n"
        f"{condensed.replace('</transcript>', '</ transcript>')}\n"
        "</transcript>\n"
    )
    parts.append("Return the summary of the whole session.")
    return "\n".join(parts)


def validate_summary(structured: Mapping[str, Any]) -> SummaryFields:
    """The answer as SummaryFields; InvalidInput when it has no usable request and nothing done.
    Items are redacted, folded to one line, cut at MAX_FIELD_CHARS, empty ones dropped."""
    request = structured.get("request")
    request_text = _clean(request) if isinstance(request, str) else ""
    fields = {key: _items(structured.get(key)) for key in ("done", "learned", "next_steps")}
    if not request_text and not fields["done"]:
        raise InvalidInput("summary has neither a request nor anything done")
    return SummaryFields(request_text, fields["done"], fields["learned"], fields["next_steps"])


def _items(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    kept: list[str] = []
    for item in value[: 4 * MAX_ITEMS]:
        cleaned = _clean(item) if isinstance(item, str) else ""
        if cleaned and cleaned not in kept:
            kept.append(cleaned)
    return tuple(kept[:MAX_ITEMS])


def _clean(value: str) -> str:
    """Secrets are redacted before the text is folded and cut: a secret cut in two is no longer
    recognisable, and its visible half would reach the summary (docs/security.md)."""
    return fold(redact_for_storage(value).text)[:MAX_FIELD_CHARS]


def summary_json(fields: SummaryFields) -> str:
    """The previous summary as the next request shows it."""
    return json.dumps(fields.to_json(), ensure_ascii=False, indent=1)
