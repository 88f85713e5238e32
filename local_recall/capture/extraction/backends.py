"""Which extractor a pass uses: `build_extractor` from `[extraction]` and the settings."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from local_recall.capture.extraction.agent_cli import AGENT_CLIS, AgentCliExtractor
from local_recall.capture.extraction.attempts import RetryPolicy
from local_recall.capture.extraction.claude_cli import ClaudeCliExtractor
from local_recall.capture.extraction.ollama_chat import OllamaChatExtractor
from local_recall.capture.extraction.prompt import Extractor
from local_recall.repo.config import ExtractionConfig


def build_extractor(
    config: ExtractionConfig,
    *,
    ollama_host: str,
    environ: Mapping[str, str],
    which: Callable[[str], str | None],
) -> Extractor:
    """The extractor `[extraction] extractor` names. claude: `claude -p` (claude_path, else
    `$LOCAL_RECALL_CLAUDE_BIN`, else `claude` found by `which`: the settings' PATH) run with
    `environ` (the settings' environment); ollama: a chat model on `ollama_host` (`[embedder]
    ollama_host`), else `$OLLAMA_HOST`; codex / gemini: `codex exec` / `gemini -p` (cli_path,
    else found by `which`). All take the model and one retry policy (timeout_seconds,
    max_attempts)."""
    retry = RetryPolicy(config.timeout_seconds, config.max_attempts)
    if config.extractor in AGENT_CLIS:
        return AgentCliExtractor(
            config.extractor,
            config.cli_path or None,
            model=config.model,
            retry=retry,
            environ=environ,
            which=which,
        )
    if config.extractor == "ollama":
        host = ollama_host or environ.get("OLLAMA_HOST") or None
        return OllamaChatExtractor(config.model, host, retry)
    path = config.claude_path or environ.get("LOCAL_RECALL_CLAUDE_BIN")
    return ClaudeCliExtractor(
        path or None, model=config.model, retry=retry, environ=environ, which=which
    )
