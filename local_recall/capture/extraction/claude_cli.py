"""The `claude -p` backend: `ClaudeCliExtractor` runs the Claude Code CLI once per attempt, in a
fresh empty directory, prompt on stdin; `read_cli_output` classifies what it printed (pure).

Facts about the CLI (checked with Claude Code 2.1.197):

* every failure still prints one JSON result; API errors carry `"is_error": true` and the HTTP
  status in `api_error_status` (429, 500, 529, 401...), with `subtype` still "success";
  connection failures have `api_error_status: null` ("Unable to connect to API
  (ConnectionRefused)"; "Not logged in" too): no HTTP answer, read as "unreachable";
* the CLI retries 429/5xx/401 and connection failures itself, 10 times by default (~3 minutes,
  honouring `retry-after`); we turn that off with `CLAUDE_CODE_MAX_RETRIES` so our own backoff
  and timeout are the only ones (offline, 2 retries inside the CLI cost 2 s of every attempt);
* with `--json-schema` the answer is in `structured_output`; a model that never calls the
  `StructuredOutput` tool yields exit 0, `is_error: false` and no `structured_output`; an
  answer the CLI finds invalid against the schema ends in `subtype: "error_max_turns"`.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from local_recall.capture.extraction.attempts import (
    DEFAULT_RETRY,
    RetryPolicy,
    run_attempts,
    run_summary_attempts,
)
from local_recall.capture.extraction.cli_run import Failed, run_cli
from local_recall.capture.extraction.prompt import (
    MEMORY_SCHEMA,
    SYSTEM_PROMPT,
    AttemptFailure,
    ExistingMemory,
    ExtractionResult,
    FailureKind,
    ModelAnswer,
    build_prompt,
    fold,
    has_answer,
    positive_int,
    shown_ids,
)
from local_recall.capture.extraction.summary_prompt import (
    SUMMARY_SCHEMA,
    SUMMARY_SYSTEM_PROMPT,
    SummaryResult,
    build_summary_prompt,
)
from local_recall.capture.extraction.verdicts import shown_block, with_shown
from local_recall.errors import ExtractorUnavailable

Which = Callable[[str], str | None]

NOT_FOUND_MESSAGE = (
    "`claude` CLI not found: install Claude Code (npm install -g @anthropic-ai/claude-code) "
    "or set [extraction] claude_path"
)
# Retries inside one CLI run. Its default (10, ~3 min of backoff) would outlast our timeout and
# hide rate limits from us; any retry there also delays an offline session end (2 retries:
# +2 s), while `RetryPolicy` retries what a retry can fix. extra_env may override it.
CLI_MAX_RETRIES = "0"
# What one run may print: far above any answer (memories are <= 1 MB each, a few per chunk).


def build_command(
    claude: str,
    *,
    model: str,
    max_turns: int,
    system_prompt: str = SYSTEM_PROMPT,
    schema: Mapping[str, Any] = MEMORY_SCHEMA,
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
        json.dumps(schema, separators=(",", ":")),
    ]


def read_cli_output(
    returncode: int, stdout: str, *, answer_key: str = "memories", stderr: str = ""
) -> ModelAnswer | AttemptFailure:
    """Classify one finished run from its exit code and JSON result — error fields only
    (`is_error`, `api_error_status`, `subtype`, `result`), never the memories. `answer_key`:
    the key a structured answer must hold ("memories": a list; "request" for a summary).
    Without a JSON result the CLI's own reason is on stderr: its last lines are the reason
    (what a person needs to fix it: "Invalid API key", "Unable to connect to API")."""
    doc = _last_json_object(stdout)
    if doc is None or doc.get("type") != "result":
        said = fold(" ".join(stderr.strip().splitlines()[-3:]))[-300:]
        if said:
            return AttemptFailure("transient", f"claude -p failed (exit {returncode}): {said}")
        shown = fold(stdout)[:200] or "(no output)"
        size = f"{len(stdout)} characters"
        return AttemptFailure(
            "transient", f"unreadable output from claude (exit {returncode}, {size}): {shown}"
        )
    input_tokens, output_tokens = usage_tokens(doc.get("usage"))
    cost = doc.get("total_cost_usd")
    cost_usd = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
    if doc.get("is_error") is True or returncode != 0:
        status = doc.get("api_error_status")
        message = fold(str(doc.get("result") or doc.get("errors") or doc.get("subtype")))
        kind = _failure_kind(status if isinstance(status, int) else None)
        detail = f"API status {status}: " if isinstance(status, int) else ""
        if kind == "unavailable":
            detail = "cannot authenticate: " + detail
        if doc.get("subtype") == "error_max_turns":
            message = "no valid structured output within --max-turns"
        elif doc.get("is_error") is True and status is None:
            # an API error with no HTTP status: no answer (offline, refused, not logged in)
            kind, detail = "unreachable", "no answer from the API: "
        return AttemptFailure(
            kind,
            f"claude -p failed (exit {returncode}): {detail}{message}",
            input_tokens,
            output_tokens,
            cost_usd,
        )
    structured = doc.get("structured_output")
    if not has_answer(structured, answer_key):
        return AttemptFailure(
            "transient",
            f"malformed output: no structured_output with a {answer_key} field",
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
        return positive_int(usage.get(key))

    inputs = (
        count("input_tokens")
        + count("cache_creation_input_tokens")
        + count("cache_read_input_tokens")
    )
    return inputs, count("output_tokens")


# ---------------------------------------------------------------------------------------------
# The extractor


class ClaudeCliExtractor:
    """Runs `claude -p` once per attempt, in a fresh empty directory, prompt on stdin."""

    reads_shown = True  # extract(shown_memories=...): extraction/verdicts.py

    def __init__(
        self,
        claude_path: str | None,
        model: str = "haiku",
        retry: RetryPolicy = DEFAULT_RETRY,
        environ: Mapping[str, str] | None = None,
        max_turns: int = 3,
        which: Which | None = None,
    ) -> None:
        """`environ`: the environment the CLI runs with and `claude` is looked up in (the
        caller's settings; None: this process's). `which`: how a bare name is found on PATH
        (`Settings.which`; None: on `environ`'s PATH)."""
        # max_turns 3: `--json-schema` adds a turn, and one more lets the CLI re-ask a model
        # whose first answer did not match the schema.
        self.claude_path = claude_path
        self.model = model
        self.retry = retry
        self.environ = dict(os.environ if environ is None else environ)
        self._which = which or self._which_on_path
        self.max_turns = max_turns

    def extract(
        self,
        condensed: str,
        *,
        context: str = "",
        repo_name: str = "",
        existing: Sequence[ExistingMemory] = (),
        shown_memories: Sequence[ExistingMemory] = (),
    ) -> ExtractionResult:
        """`shown_memories`: what the session was shown; the same call is asked which of them
        it relied on and which it found wrong (extraction/verdicts.py)."""
        if not condensed.strip():
            return ExtractionResult((), (), 0, 0, None)  # nothing to read: no call, no cost
        claude = resolve_claude(self.claude_path, self._which, home=self.environ.get("HOME"))
        schema = with_shown(MEMORY_SCHEMA) if shown_memories else MEMORY_SCHEMA
        command = build_command(claude, model=self.model, max_turns=self.max_turns, schema=schema)
        prompt = shown_block(shown_memories) + build_prompt(
            condensed, context=context, repo_name=repo_name, existing=existing
        )
        return run_attempts(
            lambda: self._run_once(command, prompt),
            self.retry,
            shown=shown_ids(existing),
            shown_memories=shown_memories,
        )

    def summarise(
        self, condensed: str, *, previous: str = "", repo_name: str = ""
    ) -> SummaryResult:
        """One summary request (summary_prompt.py): the summary so far + the new turns."""
        claude = resolve_claude(self.claude_path, self._which, home=self.environ.get("HOME"))
        command = build_command(
            claude,
            model=self.model,
            max_turns=self.max_turns,
            system_prompt=SUMMARY_SYSTEM_PROMPT,
            schema=SUMMARY_SCHEMA,
        )
        prompt = build_summary_prompt(condensed, previous=previous, repo_name=repo_name)
        return run_summary_attempts(
            lambda: self._run_once(command, prompt, answer_key="request"),
            self.retry,
        )

    def _environment(self) -> dict[str, str]:
        env = {
            "CLAUDE_CODE_MAX_RETRIES": CLI_MAX_RETRIES,
            # Extraction is summarising, not reasoning: without this the CLI enables extended
            # thinking with a ~32k-token budget for haiku, billed as output tokens.
            "MAX_THINKING_TOKENS": "0",
        }
        env.update(self.environ)
        # our hooks see this and stay silent; user/project CLAUDE.md files stay out
        env["LOCAL_RECALL_EXTRACTOR"] = "1"
        env["CLAUDE_CODE_DISABLE_CLAUDE_MDS"] = "1"
        return env

    def _which_on_path(self, name: str) -> str | None:
        return shutil.which(name, path=self.environ.get("PATH", os.defpath))

    def _run_once(
        self, command: list[str], prompt: str, *, answer_key: str = "memories"
    ) -> ModelAnswer | AttemptFailure:
        with tempfile.TemporaryDirectory(prefix="local-recall-extract-") as scratch:
            neutral_dir = Path(scratch) / "cwd"
            neutral_dir.mkdir(0o700)
            try:
                ran = run_cli(
                    command,
                    prompt,
                    cwd=neutral_dir,
                    scratch=Path(scratch),
                    env=self._environment(),
                    timeout=self.retry.timeout_seconds,
                    name="claude -p",
                )
            except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
                raise ExtractorUnavailable(f"{NOT_FOUND_MESSAGE} ({exc})") from exc
        if isinstance(ran, Failed):
            return AttemptFailure(ran.kind, ran.reason)
        return read_cli_output(ran.returncode, ran.stdout, answer_key=answer_key, stderr=ran.stderr)


def resolve_claude(claude_path: str | None, which: Which, *, home: str | None = None) -> str:
    """The executable to run: a configured path (`~` is `home`), a bare name found by `which`
    (`Settings.which`: the settings' PATH), or `claude` when nothing is configured."""
    configured = claude_path or "claude"
    if home and (configured == "~" or configured.startswith("~/")):
        configured = home + configured[1:]
    configured = os.path.expanduser(configured)
    if os.sep in configured or (os.altsep and os.altsep in configured):
        if os.path.isfile(configured) and os.access(configured, os.X_OK):
            return configured
        raise ExtractorUnavailable(f"{NOT_FOUND_MESSAGE} (no executable at {configured})")
    found = which(configured)
    if found is None:
        raise ExtractorUnavailable(NOT_FOUND_MESSAGE)
    return found
