"""The Ollama backend (optional, local): `OllamaChatExtractor`. It talks to Ollama through
local_recall/ollama_client.py (the one module importing the ollama package, lazily: it is an
optional path), which also says what a failure means; here it becomes an attempt's outcome."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from local_recall.capture.extraction.attempts import (
    DEFAULT_RETRY,
    RetryPolicy,
    run_attempts,
    run_summary_attempts,
)
from local_recall.capture.extraction.prompt import (
    MEMORY_SCHEMA,
    OLLAMA_SYSTEM_PROMPT,
    AttemptFailure,
    ExistingMemory,
    ExtractionResult,
    FailureKind,
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
from local_recall.ollama_client import classify_failure, make_client, resolve_host

# ---------------------------------------------------------------------------------------------
# Ollama (optional local extractor)


class OllamaChatExtractor:
    """One `ollama.Client.chat` call per attempt, constrained to MEMORY_SCHEMA with `format`.
    `host` None is Ollama's default (localhost:11434); $OLLAMA_HOST is resolved by the caller
    from the settings' environment (backends.py), never read here."""

    def __init__(
        self, model: str, host: str | None = None, retry: RetryPolicy = DEFAULT_RETRY
    ) -> None:
        self.model = model
        self.host = host
        self.retry = retry

    def extract(
        self,
        condensed: str,
        *,
        context: str = "",
        repo_name: str = "",
        existing: Sequence[ExistingMemory] = (),
    ) -> ExtractionResult:
        client = make_client(
            resolve_host(self.host, {}),
            self.retry.timeout_seconds,
            unavailable=ExtractorUnavailable,
        )
        if not condensed.strip():
            return ExtractionResult((), (), 0, 0, None)
        messages = [
            {"role": "system", "content": OLLAMA_SYSTEM_PROMPT},
            {
                "role": "user",
                "content": build_prompt(
                    condensed, context=context, repo_name=repo_name, existing=existing
                ),
            },
        ]
        return run_attempts(
            lambda: self._chat_once(client, messages),
            self.retry,
            shown=shown_ids(existing),
        )

    def summarise(
        self, condensed: str, *, previous: str = "", repo_name: str = ""
    ) -> SummaryResult:
        """One summary request (summary_prompt.py), constrained to SUMMARY_SCHEMA."""
        client = make_client(
            resolve_host(self.host, {}),
            self.retry.timeout_seconds,
            unavailable=ExtractorUnavailable,
        )
        messages = [
            {"role": "system", "content": OLLAMA_SUMMARY_SYSTEM_PROMPT},
            {
                "role": "user",
                "content": build_summary_prompt(condensed, previous=previous, repo_name=repo_name),
            },
        ]
        return run_summary_attempts(
            lambda: self._chat_once(client, messages, schema=SUMMARY_SCHEMA),
            self.retry,
        )

    def _chat_once(
        self,
        client: Any,
        messages: list[dict[str, str]],
        *,
        schema: dict[str, Any] = MEMORY_SCHEMA,
    ) -> ModelAnswer | AttemptFailure:
        try:
            response = client.chat(
                model=self.model,
                messages=messages,
                format=schema,
                stream=False,
                options={"temperature": 0},
            )
        except Exception as exc:
            failure = classify_failure(exc)
            if failure is None or (failure.kind == "transport" and isinstance(exc, ValueError)):
                raise  # not an Ollama failure (a malformed answer is not retried either)
            if failure.status is not None:
                return ollama_status_failure(self.model, failure.status, failure.detail)
            if failure.kind == "timeout":
                return AttemptFailure(
                    "transient", f"Ollama did not answer within {self.retry.timeout_seconds:g} s"
                )
            if failure.kind == "unreachable":
                return AttemptFailure(
                    "unavailable", "Ollama is not reachable; is `ollama serve` running?"
                )
            return AttemptFailure("transient", f"Ollama: {failure.detail}")
        summary = schema is not MEMORY_SCHEMA
        return read_json_answer(
            response.message.content or "",
            positive_int(response.prompt_eval_count),
            positive_int(response.eval_count),
            answer_key="request" if summary else "memories",
            what="summary" if summary else "memories",
        )


def ollama_status_failure(model: str, status: int, error: str) -> AttemptFailure:
    detail = fold(error)[:200]
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
