"""Calling a model until it answers: `RetryPolicy` and `run_attempts`, shared by both
backends."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace

from local_recall.capture.extraction.prompt import (
    AttemptFailure,
    ExistingMemory,
    ExtractionResult,
    ModelAnswer,
    backoff_delay,
    validate_candidates,
)
from local_recall.capture.extraction.summary_prompt import SummaryResult, validate_summary
from local_recall.capture.extraction.verdicts import read_verdicts
from local_recall.errors import (
    ApiUnreachable,
    ExtractionFailed,
    ExtractorUnavailable,
    InvalidInput,
    RateLimited,
)
from local_recall.redaction.secrets import redact

# Attempts


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How a backend calls its model (`[extraction] timeout_seconds` / `max_attempts`): each
    attempt's time limit, how many attempts at most (at least one), the backoff between
    transient failures (`backoff_delay`) and how to wait for it (tests: not at all)."""

    timeout_seconds: float = 180
    max_attempts: int = 3
    backoff_seconds: float = 2.0
    sleep: Callable[[float], None] = time.sleep


DEFAULT_RETRY = RetryPolicy()


def run_attempts(
    attempt: Callable[[], ModelAnswer | AttemptFailure],
    policy: RetryPolicy,
    *,
    shown: Collection[str] = (),
    shown_memories: Sequence[ExistingMemory] = (),
) -> ExtractionResult:
    """Call `attempt` until it answers, sleeping `backoff_delay` between transient failures.
    Token usage is summed over every attempt that reported some. `shown`: the ids of the
    existing memories the prompt listed (the only ones a `supersedes` may name);
    `shown_memories`: the memories the session was shown, which the answer may judge."""
    answer = run_until_answer(attempt, policy)
    memories, dropped = validate_candidates(list(answer.structured["memories"]), shown)
    verdicts = read_verdicts(answer.structured, shown_memories)
    return ExtractionResult(
        memories, dropped, answer.input_tokens, answer.output_tokens, answer.cost_usd, verdicts
    )


def run_summary_attempts(
    attempt: Callable[[], ModelAnswer | AttemptFailure], policy: RetryPolicy
) -> SummaryResult:
    """`run_attempts` for a session summary: the answer validated by `validate_summary`
    (an unusable one raises ExtractionFailed)."""
    answer = run_until_answer(attempt, policy)
    try:
        fields = validate_summary(answer.structured)
    except InvalidInput as exc:
        raise ExtractionFailed(f"unusable summary: {exc}") from None
    return SummaryResult(fields, answer.input_tokens, answer.output_tokens, answer.cost_usd)


def run_until_answer(
    attempt: Callable[[], ModelAnswer | AttemptFailure], policy: RetryPolicy
) -> ModelAnswer:
    """The first answer, with the tokens and cost of every attempt summed into it. Raises
    ExtractorUnavailable, ExtractionFailed (ApiUnreachable after the first attempt the API did
    not answer at all) or RateLimited as `run_attempts` documents."""
    spent_in, spent_out, cost, costed = 0, 0, 0.0, False
    failure: AttemptFailure | None = None
    attempts = max(1, policy.max_attempts)
    for number in range(1, attempts + 1):
        if number > 1:
            policy.sleep(backoff_delay(number - 1, policy.backoff_seconds))
        outcome = attempt()
        spent_in += outcome.input_tokens
        spent_out += outcome.output_tokens
        if outcome.cost_usd is not None:
            cost, costed = cost + outcome.cost_usd, True
        if isinstance(outcome, ModelAnswer):
            return ModelAnswer(outcome.structured, spent_in, spent_out, cost if costed else None)
        # An API error or the model's own text can quote what it was sent; the reason ends up
        # in the log, the pipeline state file and command output.
        failure = replace(outcome, reason=redact(outcome.reason).text)
        if failure.kind == "unavailable":
            raise ExtractorUnavailable(failure.reason)
        if failure.kind == "permanent":
            raise ExtractionFailed(failure.reason)
        if failure.kind == "unreachable":  # one node start, not three and 6 s of sleeping
            raise ApiUnreachable(failure.reason)
    assert failure is not None
    summary = f"{failure.reason} (after {attempts} attempts)"
    if failure.kind == "rate_limited":
        raise RateLimited(summary)  # neither the CLI nor Ollama reports a retry-after
    raise ExtractionFailed(summary)
