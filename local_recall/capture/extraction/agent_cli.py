"""Extraction through another agent's CLI: `codex exec` or `gemini -p` (`[extraction] extractor =
"codex"` / `"gemini"`), so a team without Claude Code can use local-recall end to end.

Each attempt runs the CLI once in a fresh empty directory (no project config, hooks or MCP
servers of a repository), prompt on stdin, `LOCAL_RECALL_EXTRACTOR=1` in its environment (our
hooks stay silent), and reads one JSON answer (`read_json_answer`, as for Ollama):

* Codex 0.169: `codex exec --ephemeral --skip-git-repo-check --sandbox read-only
  --output-schema <schema file> --output-last-message <file> -` — the schema goes to the model as
  the Responses API's structured output; the last message is the answer. Codex reads only
  `wire_api = "responses"` providers.
* Gemini CLI 0.61: `gemini --skip-trust -o json -p <instruction>` with the prompt on stdin (it
  appends `-p`'s text to stdin); `response` holds the answer, `stats.models.*.tokens` the usage.

The model is `[extraction] model` unless that is still Claude's default (`haiku`): then the CLI's
own default model answers. docs/agents.md.
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
    OLLAMA_SYSTEM_PROMPT,
    AttemptFailure,
    ExistingMemory,
    ExtractionResult,
    ModelAnswer,
    build_prompt,
    fold,
    positive_int,
    read_json_answer,
    shown_ids,
)
from local_recall.capture.extraction.summary_prompt import (
    OLLAMA_SUMMARY_SYSTEM_PROMPT,
    SUMMARY_SCHEMA,
    SummaryResult,
    build_summary_prompt,
)
from local_recall.errors import ExtractorUnavailable

AGENT_CLIS = ("codex", "gemini")
CLAUDE_DEFAULT_MODEL = "haiku"
_GEMINI_INSTRUCTION = "Answer the request above with the JSON object it asks for, nothing else."


def codex_command(codex: str, *, model: str, schema_file: Path, answer_file: Path) -> list[str]:
    command = [
        codex,
        "exec",
        "--ephemeral",
        "--skip-git-repo-check",
        "--sandbox",
        "read-only",
        "--color",
        "never",
        "--output-schema",
        str(schema_file),
        "--output-last-message",
        str(answer_file),
    ]
    if model and model != CLAUDE_DEFAULT_MODEL:
        command += ["-m", model]
    return [*command, "-"]


def gemini_command(gemini: str, *, model: str) -> list[str]:
    command = [gemini, "--skip-trust", "-o", "json"]
    if model and model != CLAUDE_DEFAULT_MODEL:
        command += ["-m", model]
    return [*command, "-p", _GEMINI_INSTRUCTION]


def read_gemini_output(
    returncode: int, stdout: str, *, answer_key: str
) -> ModelAnswer | AttemptFailure:
    """`gemini -o json`: {"response": text, "stats": {"models": {name: {"tokens": …}}}} or
    {"error": {"message"}}; the response text is the JSON answer."""
    try:
        doc = json.loads(stdout[stdout.find("{") :]) if "{" in stdout else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        return AttemptFailure("transient", f"unreadable output from gemini (exit {returncode})")
    error = doc.get("error")
    if returncode != 0 or isinstance(error, dict):
        message = fold(str(error.get("message") if isinstance(error, dict) else stdout))[:200]
        return AttemptFailure("transient", f"gemini failed (exit {returncode}): {message}")
    input_tokens = output_tokens = 0
    models = doc.get("stats", {}).get("models") if isinstance(doc.get("stats"), dict) else None
    for usage in models.values() if isinstance(models, dict) else ():
        tokens = usage.get("tokens") if isinstance(usage, dict) else None
        if isinstance(tokens, dict):
            input_tokens += positive_int(tokens.get("prompt"))
            output_tokens += positive_int(tokens.get("candidates"))
    summary = answer_key == "request"
    return read_json_answer(
        str(doc.get("response") or ""),
        input_tokens,
        output_tokens,
        answer_key=answer_key,
        what="summary" if summary else "memories",
    )


class AgentCliExtractor:
    """`codex exec` or `gemini -p`, once per attempt (module docstring)."""

    def __init__(
        self,
        kind: str,
        cli_path: str | None,
        model: str = CLAUDE_DEFAULT_MODEL,
        retry: RetryPolicy = DEFAULT_RETRY,
        environ: Mapping[str, str] | None = None,
        which: Callable[[str], str | None] | None = None,
    ) -> None:
        if kind not in AGENT_CLIS:
            raise ValueError(f"unknown agent CLI {kind!r}")
        self.kind = kind
        self.cli_path = cli_path
        self.model = model
        self.retry = retry
        self.environ = dict(os.environ if environ is None else environ)
        self._which = which or (lambda name: shutil.which(name, path=self.environ.get("PATH")))

    def extract(
        self,
        condensed: str,
        *,
        context: str = "",
        repo_name: str = "",
        existing: Sequence[ExistingMemory] = (),
    ) -> ExtractionResult:
        if not condensed.strip():
            return ExtractionResult((), (), 0, 0, None)
        prompt = build_prompt(condensed, context=context, repo_name=repo_name, existing=existing)
        text = f"{OLLAMA_SYSTEM_PROMPT}\n\n{prompt}"
        binary = self._binary()
        return run_attempts(
            lambda: self._run_once(binary, text, MEMORY_SCHEMA, "memories"),
            self.retry,
            shown=shown_ids(existing),
        )

    def summarise(
        self, condensed: str, *, previous: str = "", repo_name: str = ""
    ) -> SummaryResult:
        prompt = build_summary_prompt(condensed, previous=previous, repo_name=repo_name)
        text = f"{OLLAMA_SUMMARY_SYSTEM_PROMPT}\n\n{prompt}"
        binary = self._binary()
        return run_summary_attempts(
            lambda: self._run_once(binary, text, SUMMARY_SCHEMA, "request"),
            self.retry,
        )

    def _binary(self) -> str:
        missing = (
            f"`{self.kind}` CLI not found: install it (docs/agents.md) or set [extraction] cli_path"
        )
        configured = os.path.expanduser(self.cli_path or self.kind)
        if os.sep in configured:
            if os.path.isfile(configured) and os.access(configured, os.X_OK):
                return configured
            raise ExtractorUnavailable(f"{missing} (no executable at {configured})")
        found = self._which(configured)
        if found is None:
            raise ExtractorUnavailable(missing)
        return found

    def _run_once(
        self, binary: str, text: str, schema: Mapping[str, Any], answer_key: str
    ) -> ModelAnswer | AttemptFailure:
        env = {**self.environ, "LOCAL_RECALL_EXTRACTOR": "1"}
        with tempfile.TemporaryDirectory(prefix="local-recall-extract-") as neutral:
            work = Path(neutral)
            answer_file = work / "answer.json"
            if self.kind == "codex":
                (work / "schema.json").write_text(json.dumps(schema), encoding="utf-8")
                command = codex_command(
                    binary,
                    model=self.model,
                    schema_file=work / "schema.json",
                    answer_file=answer_file,
                )
            else:
                command = gemini_command(binary, model=self.model)
            project = work / "empty"
            project.mkdir()
            outcome = self._communicate(command, text, project, env)
            if isinstance(outcome, AttemptFailure):
                return outcome
            returncode, stdout, stderr = outcome
            if self.kind == "gemini":
                return read_gemini_output(returncode, stdout, answer_key=answer_key)
            if returncode != 0:
                detail = fold(stderr[-400:] or stdout[-400:])[:200]
                return AttemptFailure(
                    "transient", f"codex exec failed (exit {returncode}): {detail}"
                )
            try:
                answer = answer_file.read_text(encoding="utf-8")
            except OSError:
                answer = ""
        what = "summary" if answer_key == "request" else "memories"
        return read_json_answer(answer, 0, 0, answer_key=answer_key, what=what)

    def _communicate(
        self, command: list[str], text: str, cwd: Path, env: Mapping[str, str]
    ) -> tuple[int, str, str] | AttemptFailure:
        try:
            ran = run_cli(
                command,
                text,
                cwd=cwd,
                scratch=cwd.parent,
                env=env,
                timeout=self.retry.timeout_seconds,
                name=self.kind,
            )
        except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
            raise ExtractorUnavailable(f"`{self.kind}` CLI cannot run: {exc}") from exc
        if isinstance(ran, Failed):
            return AttemptFailure(ran.kind, ran.reason)
        return ran.returncode, ran.stdout, ran.stderr
