"""Extraction through `codex exec` and `gemini -p`: the output readers with literals, then the real
CLIs offline against the fake servers (slow): the chunk reaches the model, the answer comes back
as validated candidates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from local_recall.capture.extraction import build_extractor
from local_recall.capture.extraction.agent_cli import (
    AgentCliExtractor,
    codex_command,
    gemini_command,
    read_gemini_output,
)
from local_recall.capture.extraction.attempts import RetryPolicy
from local_recall.capture.extraction.prompt import AttemptFailure, ModelAnswer
from local_recall.errors import ExtractorUnavailable
from local_recall.repo.config import ExtractionConfig
from tests.agent_clis import (
    GEMINI_MODEL,
    agent_cli_or_fail,
    codex_env,
    gemini_env,
    requires_node,
)
from tests.fake_gemini import FakeGemini
from tests.fake_openai import FakeOpenAI, say

ANSWER = {
    "memories": [
        {
            "subject": "Deploys go through scripts/bluegreen.sh",
            "body": "The load balancer drains connections first; never restart pods directly.",
            "keywords": ["deploy", "blue-green"],
            "applies_to": "global",
        }
    ]
}
CHUNK = "User: why bluegreen.sh?\nAssistant: the load balancer drains connections first."


def test_commands() -> None:
    command = codex_command("codex", model="haiku", schema_file=Path("s"), answer_file=Path("a"))
    assert command[:2] == ["codex", "exec"] and command[-1] == "-"
    assert "--output-schema" in command and "-m" not in command  # Claude's default: theirs
    assert codex_command("c", model="gpt-5", schema_file=Path("s"), answer_file=Path("a"))[
        -3:-1
    ] == ["-m", "gpt-5"]
    assert gemini_command("gemini", model="gemini-2.5-flash")[:4] == [
        "gemini",
        "--skip-trust",
        "-o",
        "json",
    ]


def test_read_gemini_output() -> None:
    good = json.dumps(
        {
            "response": json.dumps(ANSWER),
            "stats": {"models": {"m": {"tokens": {"prompt": 100, "candidates": 20}}}},
        }
    )
    answer = read_gemini_output(0, good, answer_key="memories")
    assert isinstance(answer, ModelAnswer) and answer.input_tokens == 100
    assert isinstance(
        read_gemini_output(0, '{"response": "not json"}', answer_key="memories"), AttemptFailure
    )
    failed = read_gemini_output(1, '{"error": {"message": "quota"}}', answer_key="memories")
    assert isinstance(failed, AttemptFailure) and "quota" in failed.reason
    assert isinstance(read_gemini_output(0, "", answer_key="memories"), AttemptFailure)


def test_config_picks_the_backend_and_a_missing_cli_is_unavailable() -> None:
    extractor = build_extractor(
        ExtractionConfig(extractor="codex"),
        ollama_host="",
        environ={"PATH": "/nowhere"},
        which=lambda name: None,
    )
    assert isinstance(extractor, AgentCliExtractor) and extractor.kind == "codex"
    with pytest.raises(ExtractorUnavailable, match="`codex` CLI not found"):
        extractor.extract(CHUNK)


def _answering(calls: list[Any]):  # type: ignore[no-untyped-def]
    def respond(call: Any):  # type: ignore[no-untyped-def]
        calls.append(call)
        return say(json.dumps(ANSWER))

    return respond


@pytest.mark.slow
@requires_node
def test_codex_exec_extracts(tmp_path: Path) -> None:
    codex = agent_cli_or_fail("codex")
    calls: list[Any] = []
    with FakeOpenAI(_answering(calls)) as api:
        env = codex_env(tmp_path / "home", api.url)
        result = AgentCliExtractor(
            "codex", codex, environ=env, retry=RetryPolicy(max_attempts=1)
        ).extract(CHUNK)
    assert [c.subject for c in result.memories] == ["Deploys go through scripts/bluegreen.sh"]
    assert "why bluegreen.sh?" in calls[0].visible_text
    # --output-schema reaches the model as the Responses API's structured output
    assert calls[0].body["text"]["format"]["type"] == "json_schema"


@pytest.mark.slow
@requires_node
def test_gemini_p_extracts(tmp_path: Path) -> None:
    gemini = agent_cli_or_fail("gemini")
    calls: list[Any] = []
    with FakeGemini(_answering(calls)) as api:
        env = gemini_env(tmp_path / "home", api.url)
        extractor = AgentCliExtractor(
            "gemini", gemini, model=GEMINI_MODEL, environ=env, retry=RetryPolicy(max_attempts=1)
        )
        result = extractor.extract(CHUNK)
    assert [c.subject for c in result.memories] == ["Deploys go through scripts/bluegreen.sh"]
    assert result.input_tokens > 0
    assert any("why bluegreen.sh?" in c.visible_text for c in calls)
