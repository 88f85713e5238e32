"""Turning condensed transcript text into candidate memories.

* `prompt` -- the prompt, the schema, the values and the validation of answers (pure);
* `attempts` -- retries with backoff around one backend call;
* `claude_cli` -- the `claude -p` backend; `ollama_chat` -- the local Ollama backend;
* `backends` -- `build_extractor`: the one `[extraction] extractor` names.
"""

from local_recall.capture.extraction.attempts import RetryPolicy, run_attempts
from local_recall.capture.extraction.backends import build_extractor
from local_recall.capture.extraction.claude_cli import (
    CLI_MAX_RETRIES,
    NOT_FOUND_MESSAGE,
    ClaudeCliExtractor,
    build_command,
    read_cli_output,
    resolve_claude,
    usage_tokens,
)
from local_recall.capture.extraction.ollama_chat import OllamaChatExtractor, ollama_status_failure
from local_recall.capture.extraction.prompt import (
    MAX_KEYWORDS,
    MAX_SUBJECT_CHARS,
    MEMORY_SCHEMA,
    OLLAMA_SYSTEM_PROMPT,
    SYSTEM_PROMPT,
    AttemptFailure,
    CandidateMemory,
    ExistingMemory,
    ExtractionResult,
    Extractor,
    FailureKind,
    ModelAnswer,
    Supersedes,
    backoff_delay,
    build_prompt,
    read_json_answer,
    validate_candidates,
)

__all__ = [
    "CLI_MAX_RETRIES",
    "MAX_KEYWORDS",
    "MAX_SUBJECT_CHARS",
    "MEMORY_SCHEMA",
    "NOT_FOUND_MESSAGE",
    "OLLAMA_SYSTEM_PROMPT",
    "SYSTEM_PROMPT",
    "AttemptFailure",
    "CandidateMemory",
    "ClaudeCliExtractor",
    "ExistingMemory",
    "ExtractionResult",
    "Extractor",
    "FailureKind",
    "ModelAnswer",
    "OllamaChatExtractor",
    "RetryPolicy",
    "Supersedes",
    "backoff_delay",
    "build_command",
    "build_extractor",
    "build_prompt",
    "ollama_status_failure",
    "read_cli_output",
    "read_json_answer",
    "resolve_claude",
    "run_attempts",
    "usage_tokens",
    "validate_candidates",
]
