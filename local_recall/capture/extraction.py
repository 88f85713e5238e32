"""Turning a condensed transcript into candidate memories with `claude -p` (and the daily budget).

Pure parts, tested with literals: the prompt (`build_prompt`), the reading of the CLI's JSON
(`read_cli_output`), per-item validation (`validate_candidates`), backoff (`backoff_delay`) and
the budget (`budget_allows`, `record_spend`). `ClaudeCliExtractor` only runs the process and
carries these decisions out; `OllamaChatExtractor` does the same over a local Ollama.

Facts about the CLI (checked with Claude Code 2.1.197):

* every failure still prints one JSON result; API errors carry `"is_error": true` and the HTTP
  status in `api_error_status` (429, 500, 529, 401...), with `subtype` still "success";
  connection failures have `api_error_status: null`;
* the CLI retries 429/5xx/401 itself, 10 times by default (~3 minutes, honouring `retry-after`);
  we cap that with `CLAUDE_CODE_MAX_RETRIES` so our own backoff and timeout stay in charge;
* with `--json-schema` the answer is in `structured_output`; a model that never calls the
  `StructuredOutput` tool yields exit 0, `is_error: false` and no `structured_output`; an
  answer the CLI finds invalid against the schema ends in `subtype: "error_max_turns"`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any, Literal

from local_recall.errors import (
    ExtractionFailed,
    ExtractorUnavailable,
    InvalidInput,
    RateLimited,
    StorageError,
)
from local_recall.memory.model import parse_scope
from local_recall.redaction.secrets import redact

NOT_FOUND_MESSAGE = (
    "`claude` CLI not found: install Claude Code (npm install -g @anthropic-ai/claude-code) "
    "or set [extraction] claude_path"
)
MAX_SUBJECT_CHARS = 200  # accepted; the prompt asks for 120
MAX_KEYWORDS = 20  # accepted; the prompt asks for 1-8
# Retries inside one CLI run. Its default (10, ~3 min of backoff) would outlast our timeout and
# hide rate limits from us; extra_env may override it.
CLI_MAX_RETRIES = "2"


# ---------------------------------------------------------------------------------------------
# Values


@dataclass(frozen=True, slots=True)
class CandidateMemory:
    subject: str
    body: str
    keywords: tuple[str, ...]
    applies_to: str  # normalised by memory.parse_scope


@dataclass(frozen=True, slots=True)
class ExtractionResult:
    memories: tuple[CandidateMemory, ...]
    dropped: tuple[str, ...]  # why each rejected item was rejected (no memory text)
    input_tokens: int  # incl. cache reads/writes, summed over all attempts of this call
    output_tokens: int
    cost_usd: float | None  # as reported by the CLI (list price; None if absent)


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
(the common case), return an empty list."""

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
                },
                "required": ["subject", "body", "keywords", "applies_to"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["memories"],
    "additionalProperties": False,
}


def build_prompt(condensed: str, *, context: str = "", repo_name: str = "") -> str:
    """The user message (sent on stdin). Tags delimit the parts; a closing tag inside the
    transcript itself is defused so it cannot end the block early."""
    parts: list[str] = []
    if repo_name:
        parts.append(f"Repository: {_one_line(repo_name)}\n")
    if context.strip():
        parts.append(
            "<context>\n"
            "Earlier turns of the session, already processed. Context only: do not extract "
            "memories from this part.\n\n"
            f"{_defuse(context, 'context')}\n"
            "</context>\n"
        )
    parts.append(
        "<transcript>\n"
        "Condensed transcript. If it opens with turns marked as earlier / already processed, "
        "those are context only.\n\n"
        f"{_defuse(condensed, 'transcript')}\n"
        "</transcript>\n"
    )
    parts.append(
        "Extract the durable memories from the transcript above (an empty list if there are none)."
    )
    return "\n".join(parts)


def _defuse(text: str, tag: str) -> str:
    return text.replace(f"</{tag}>", f"</ {tag}>")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def build_command(
    claude: str, *, model: str, max_turns: int, system_prompt: str = SYSTEM_PROMPT
) -> list[str]:
    """The argument list (no shell). No hooks, MCP servers, tools, session file or CLAUDE.md
    (the last via CLAUDE_CODE_DISABLE_CLAUDE_MDS in the environment)."""
    return [
        claude,
        "-p",
        "--output-format",
        "json",
        "--no-session-persistence",
        "--settings",
        '{"disableAllHooks": true}',
        "--strict-mcp-config",
        "--tools",
        "",
        "--max-turns",
        str(max_turns),
        "--model",
        model,
        "--system-prompt",
        system_prompt,
        "--json-schema",
        json.dumps(MEMORY_SCHEMA, separators=(",", ":")),
    ]


# ---------------------------------------------------------------------------------------------
# Reading what the CLI printed

# rate_limited / transient: try again after a backoff; unavailable: not usable now (missing
# model, bad credentials); permanent: this request would fail again.
FailureKind = Literal["rate_limited", "transient", "unavailable", "permanent"]


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


def read_cli_output(returncode: int, stdout: str) -> ModelAnswer | AttemptFailure:
    """Classify one finished run from its exit code and JSON result — error fields only
    (`is_error`, `api_error_status`, `subtype`, `result`), never the memories."""
    doc = _last_json_object(stdout)
    if doc is None or doc.get("type") != "result":
        shown = _one_line(stdout)[:200] or "(no output)"
        return AttemptFailure(
            "transient", f"unreadable output from claude (exit {returncode}): {shown}"
        )
    input_tokens, output_tokens = usage_tokens(doc.get("usage"))
    cost = doc.get("total_cost_usd")
    cost_usd = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
    if doc.get("is_error") is True or returncode != 0:
        status = doc.get("api_error_status")
        message = _one_line(str(doc.get("result") or doc.get("errors") or doc.get("subtype")))
        kind = _failure_kind(status if isinstance(status, int) else None)
        detail = f"API status {status}: " if isinstance(status, int) else ""
        if kind == "unavailable":
            detail = "cannot authenticate: " + detail
        if doc.get("subtype") == "error_max_turns":
            message = "no valid structured output within --max-turns"
        return AttemptFailure(
            kind,
            f"claude -p failed (exit {returncode}): {detail}{message}",
            input_tokens,
            output_tokens,
            cost_usd,
        )
    structured = doc.get("structured_output")
    if not isinstance(structured, dict) or not isinstance(structured.get("memories"), list):
        return AttemptFailure(
            "transient",
            "malformed output: no structured_output with a memories list",
            input_tokens,
            output_tokens,
            cost_usd,
        )
    return ModelAnswer(structured, input_tokens, output_tokens, cost_usd)


def _failure_kind(status: int | None) -> FailureKind:
    if status == 429:
        return "rate_limited"
    if status in (401, 403):
        return "unavailable"  # credentials: nothing a retry can fix
    if status is None or status in (408, 409) or status >= 500:
        return "transient"  # connection errors have no status; 529 is "overloaded"
    return "permanent"  # 400, 404 (unknown model), 413: the same call would fail again


def _last_json_object(stdout: str) -> dict[str, Any] | None:
    # One JSON document is expected; tolerate stray lines (warnings) before it.
    for candidate in (stdout, *reversed(stdout.strip().splitlines())):
        try:
            doc = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(doc, dict):
            return doc
    return None


def usage_tokens(usage: object) -> tuple[int, int]:
    """(input incl. cache creation and cache reads, output) from the CLI's `usage`."""
    if not isinstance(usage, dict):
        return 0, 0

    def count(key: str) -> int:
        value = usage.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    inputs = (
        count("input_tokens")
        + count("cache_creation_input_tokens")
        + count("cache_read_input_tokens")
    )
    return inputs, count("output_tokens")


# ---------------------------------------------------------------------------------------------
# Validating what the model returned


def validate_candidates(
    items: list[Any],
) -> tuple[tuple[CandidateMemory, ...], tuple[str, ...]]:
    """Check each item on its own: a bad one is dropped with a reason, the rest are kept."""
    kept: list[CandidateMemory] = []
    dropped: list[str] = []
    for number, item in enumerate(items, start=1):
        try:
            kept.append(_candidate(item))
        except InvalidInput as exc:
            dropped.append(f"memory {number}: {exc}")
    return tuple(kept), tuple(dropped)


def _candidate(item: object) -> CandidateMemory:
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
    return CandidateMemory(subject, body.strip(), cleaned, parse_scope(scope))


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


# ---------------------------------------------------------------------------------------------
# Attempts


def run_attempts(
    attempt: Callable[[], ModelAnswer | AttemptFailure],
    *,
    max_attempts: int,
    backoff_seconds: float,
    sleep: Callable[[float], None],
) -> ExtractionResult:
    """Call `attempt` until it answers, sleeping `backoff_delay` between transient failures.
    Token usage is summed over every attempt that reported some."""
    spent_in, spent_out, cost, costed = 0, 0, 0.0, False
    failure: AttemptFailure | None = None
    for number in range(1, max(1, max_attempts) + 1):
        if number > 1:
            sleep(backoff_delay(number - 1, backoff_seconds))
        outcome = attempt()
        spent_in += outcome.input_tokens
        spent_out += outcome.output_tokens
        if outcome.cost_usd is not None:
            cost, costed = cost + outcome.cost_usd, True
        if isinstance(outcome, ModelAnswer):
            memories, dropped = validate_candidates(list(outcome.structured["memories"]))
            return ExtractionResult(
                memories, dropped, spent_in, spent_out, cost if costed else None
            )
        # An API error or the model's own text can quote what it was sent; the reason ends up
        # in the log, the pipeline state file and command output.
        failure = replace(outcome, reason=redact(outcome.reason).text)
        if failure.kind == "unavailable":
            raise ExtractorUnavailable(failure.reason)
        if failure.kind == "permanent":
            raise ExtractionFailed(failure.reason)
    assert failure is not None
    summary = f"{failure.reason} (after {max(1, max_attempts)} attempts)"
    if failure.kind == "rate_limited":
        raise RateLimited(summary)  # neither the CLI nor Ollama reports a retry-after
    raise ExtractionFailed(summary)


# ---------------------------------------------------------------------------------------------
# The extractor


class ClaudeCliExtractor:
    """Runs `claude -p` once per attempt, in a fresh empty directory, prompt on stdin."""

    def __init__(
        self,
        claude_path: str | None,
        model: str = "haiku",
        timeout_seconds: float = 180,
        max_attempts: int = 3,
        backoff_seconds: float = 2.0,
        extra_env: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        max_turns: int = 3,
    ) -> None:
        # max_turns 3: `--json-schema` adds a turn, and one more lets the CLI re-ask a model
        # whose first answer did not match the schema.
        self.claude_path = claude_path
        self.model = model
        self.timeout_seconds = timeout_seconds
        self.max_attempts = max(1, max_attempts)
        self.backoff_seconds = backoff_seconds
        self.extra_env = dict(extra_env or {})
        self.max_turns = max_turns
        self._sleep = sleep

    def extract(
        self, condensed: str, *, context: str = "", repo_name: str = ""
    ) -> ExtractionResult:
        if not condensed.strip():
            return ExtractionResult((), (), 0, 0, None)  # nothing to read: no call, no cost
        claude = resolve_claude(self.claude_path)
        command = build_command(claude, model=self.model, max_turns=self.max_turns)
        prompt = build_prompt(condensed, context=context, repo_name=repo_name)
        return run_attempts(
            lambda: self._run_once(command, prompt),
            max_attempts=self.max_attempts,
            backoff_seconds=self.backoff_seconds,
            sleep=self._sleep,
        )

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env["CLAUDE_CODE_MAX_RETRIES"] = CLI_MAX_RETRIES
        # Extraction is summarising, not reasoning: without this the CLI enables extended
        # thinking with a ~32k-token budget for haiku, billed as output tokens.
        env["MAX_THINKING_TOKENS"] = "0"
        env.update(self.extra_env)
        # our hooks see this and stay silent; user/project CLAUDE.md files stay out
        env["LOCAL_RECALL_EXTRACTOR"] = "1"
        env["CLAUDE_CODE_DISABLE_CLAUDE_MDS"] = "1"
        return env

    def _run_once(self, command: list[str], prompt: str) -> ModelAnswer | AttemptFailure:
        with tempfile.TemporaryDirectory(prefix="local-recall-extract-") as neutral_dir:
            try:
                proc = subprocess.Popen(
                    command,
                    cwd=neutral_dir,
                    env=self._environment(),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    encoding="utf-8",
                    errors="replace",
                    start_new_session=True,  # its own process group, killed as a whole
                )
            except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
                raise ExtractorUnavailable(f"{NOT_FOUND_MESSAGE} ({exc})") from exc
            try:
                stdout, _ = proc.communicate(prompt, timeout=self.timeout_seconds)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                return AttemptFailure(
                    "transient", f"claude -p timed out after {self.timeout_seconds:g} s"
                )
            except BaseException:
                _kill_group(proc)
                raise
        return read_cli_output(proc.returncode, stdout)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.communicate(timeout=5)


def resolve_claude(claude_path: str | None) -> str:
    """The executable to run: a configured path (with `~`), a bare name looked up on PATH, or
    `claude` on PATH when nothing is configured."""
    configured = os.path.expanduser(claude_path) if claude_path else "claude"
    if os.sep in configured or (os.altsep and os.altsep in configured):
        if os.path.isfile(configured) and os.access(configured, os.X_OK):
            return configured
        raise ExtractorUnavailable(f"{NOT_FOUND_MESSAGE} (no executable at {configured})")
    found = shutil.which(configured)
    if found is None:
        raise ExtractorUnavailable(NOT_FOUND_MESSAGE)
    return found


# ---------------------------------------------------------------------------------------------
# Ollama (optional local extractor)


class OllamaChatExtractor:
    """One `ollama.Client.chat` call per attempt, constrained to MEMORY_SCHEMA with `format`.
    `host` None uses $OLLAMA_HOST or the client's default (localhost:11434)."""

    def __init__(
        self,
        model: str,
        host: str | None = None,
        timeout_seconds: float = 180,
        max_attempts: int = 3,
        backoff_seconds: float = 2.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.model = model
        self.host = host
        self.timeout_seconds = timeout_seconds
        self.max_attempts = max(1, max_attempts)
        self.backoff_seconds = backoff_seconds
        self._sleep = sleep

    def extract(
        self, condensed: str, *, context: str = "", repo_name: str = ""
    ) -> ExtractionResult:
        try:
            import ollama
        except ImportError:
            raise ExtractorUnavailable(
                "the Ollama extractor needs the ollama client; run `pip install ollama`"
            ) from None
        if not condensed.strip():
            return ExtractionResult((), (), 0, 0, None)
        client = ollama.Client(host=self.host, timeout=self.timeout_seconds)
        messages = [
            {"role": "system", "content": OLLAMA_SYSTEM_PROMPT},
            {
                "role": "user",
                "content": build_prompt(condensed, context=context, repo_name=repo_name),
            },
        ]
        return run_attempts(
            lambda: self._chat_once(client, messages),
            max_attempts=self.max_attempts,
            backoff_seconds=self.backoff_seconds,
            sleep=self._sleep,
        )

    def _chat_once(
        self, client: Any, messages: list[dict[str, str]]
    ) -> ModelAnswer | AttemptFailure:
        import httpx
        import ollama

        try:
            response = client.chat(
                model=self.model,
                messages=messages,
                format=MEMORY_SCHEMA,
                stream=False,
                options={"temperature": 0},
            )
        except ollama.ResponseError as exc:
            return ollama_status_failure(self.model, exc.status_code, str(exc.error))
        except httpx.TimeoutException:
            return AttemptFailure(
                "transient", f"Ollama did not answer within {self.timeout_seconds:g} s"
            )
        except (ConnectionError, httpx.ConnectError):
            return AttemptFailure(
                "unavailable", "Ollama is not reachable; is `ollama serve` running?"
            )
        except httpx.HTTPError as exc:
            detail = _one_line(str(exc))[:200]
            return AttemptFailure("transient", f"Ollama: {type(exc).__name__}: {detail}")
        return read_json_answer(
            response.message.content or "",
            _count(response.prompt_eval_count),
            _count(response.eval_count),
        )


def ollama_status_failure(model: str, status: int, error: str) -> AttemptFailure:
    detail = _one_line(error)[:200]
    if status == 404:
        return AttemptFailure(
            "unavailable", f"Ollama model {model!r} not found; run `ollama pull {model}`"
        )
    kind: FailureKind = "permanent"
    if status == 429:
        kind = "rate_limited"
    elif status >= 500:
        kind = "transient"
    return AttemptFailure(kind, f"Ollama: HTTP {status}: {detail}")


def read_json_answer(
    content: str, input_tokens: int, output_tokens: int
) -> ModelAnswer | AttemptFailure:
    """A chat answer constrained by MEMORY_SCHEMA: the JSON object as text."""
    try:
        structured = json.loads(content)
    except ValueError:
        structured = None
    if not isinstance(structured, dict) or not isinstance(structured.get("memories"), list):
        return AttemptFailure(
            "transient", "malformed output: not a memories object", input_tokens, output_tokens
        )
    return ModelAnswer(structured, input_tokens, output_tokens, None)


# ---------------------------------------------------------------------------------------------
# Daily budget (UTC days; the caller passes `today`)


@dataclass(frozen=True, slots=True)
class BudgetLimits:
    """Mirrors `[extraction] daily_max_calls` / `daily_max_tokens`; 0 means no limit."""

    max_calls: int = 0
    max_tokens: int = 0  # input + output


@dataclass(frozen=True, slots=True)
class DailySpend:
    date: date
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


def budget_allows(spent: DailySpend, limits: BudgetLimits, today: date) -> bool:
    """Whether one more extraction call may start today. Spend of another day counts as 0."""
    if spent.date != today:
        return True
    if limits.max_calls and spent.calls >= limits.max_calls:
        return False
    return not (limits.max_tokens and spent.input_tokens + spent.output_tokens >= limits.max_tokens)


def calls_left(spent: DailySpend, limits: BudgetLimits, today: date) -> int | None:
    """Calls still allowed today (None: unlimited); 0 when the token budget is spent."""
    if not budget_allows(spent, limits, today):
        return 0
    if not limits.max_calls:
        return None
    used = spent.calls if spent.date == today else 0
    return limits.max_calls - used


def record_spend(
    spent: DailySpend, today: date, *, calls: int = 1, input_tokens: int = 0, output_tokens: int = 0
) -> DailySpend:
    """Add one call's usage; a new day starts from zero."""
    base = spent if spent.date == today else DailySpend(today)
    return replace(
        base,
        calls=base.calls + calls,
        input_tokens=base.input_tokens + input_tokens,
        output_tokens=base.output_tokens + output_tokens,
    )


def load_daily_spend(path: Path, today: date) -> DailySpend:
    """The stored spend; a missing or unreadable file counts as nothing spent today (the file
    is a soft guard and is rewritten whole on the next save)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return DailySpend(
            date=date.fromisoformat(str(data["date"])),
            calls=_count(data.get("calls")),
            input_tokens=_count(data.get("input_tokens")),
            output_tokens=_count(data.get("output_tokens")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return DailySpend(today)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def save_daily_spend(path: Path, spent: DailySpend) -> None:
    """Atomic: a temp file in the same directory, fsync, then os.replace."""
    data = {
        "date": spent.date.isoformat(),
        "calls": spent.calls,
        "input_tokens": spent.input_tokens,
        "output_tokens": spent.output_tokens,
    }
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc}") from exc
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
