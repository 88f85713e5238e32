"""`doctor`'s "where do prompts and transcripts go" lines name the program that really runs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from local_recall.doctor import check_destinations
from local_recall.repo.config import Config


def destination(config: Config, tmp_path: Path) -> str:
    found = {c.name: c for c in check_destinations(config, {}, tmp_path / "none.toml")}
    return found["transcripts go to"].detail


@pytest.mark.parametrize(
    ("extractor", "cli_path", "expected"),
    [
        ("claude", "", "Anthropic's API through `claude -p`"),
        ("codex", "", "OpenAI's API through `codex`"),
        ("gemini", "/opt/bin/gemini", "Google's Gemini API through `/opt/bin/gemini`"),
    ],
)
def test_transcripts_go_to_the_extractors_vendor(
    extractor: str, cli_path: str, expected: str, tmp_path: Path
) -> None:
    config = Config()
    extraction = dataclasses.replace(config.extraction, extractor=extractor, cli_path=cli_path)
    detail = destination(dataclasses.replace(config, extraction=extraction), tmp_path)
    assert detail == f"{expected} (extraction)"
