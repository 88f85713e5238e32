"""`local-recall why` shows what was learned (docs/hooks.md#what-is-learned): a candidate's
track record and the repository's calibrated cut-offs, in text and JSON; the real CLI on a real
store."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from local_recall.learning.outcomes import Outcome
from local_recall.learning.usage_log import append_outcomes
from local_recall.recall import Recall
from local_recall.settings import Settings
from tests.conftest import CliRunner, clean_env


def test_why_shows_the_track_record_and_the_learned_cut_offs(repo: Path, cli: CliRunner) -> None:
    recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
    memory = recall.add(
        "Run tests with make test", "Run the test suite with make test; it runs pytest."
    )
    today = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    uses = ["relied", "relied", "relied", "ignored"]
    append_outcomes(
        recall.layout,
        [Outcome(memory.id, f"{n:032x}", today, "full", use) for n, use in enumerate(uses)],  # type: ignore[arg-type]
    )
    on = {"LOCAL_RECALL_LEARNING_CALIBRATE": "true", "LOCAL_RECALL_LEARNING_TRACK_RECORD": "true"}
    data = json.loads(cli("why", "how do I run the tests?", "--json", env=on).stdout)
    (candidate,) = [c for c in data["candidates"] if c["id"] == memory.id]
    track = candidate["track"]
    assert (track["relied"], track["followed"], track["ignored"], track["disputed"]) == (3, 0, 1, 0)
    assert track["factor"] > 1.0  # 3 of 4 against the repository's own rate
    learning = data["learning"]
    assert learning["outcomes"] == 4 and learning["track_record"] is True
    assert learning["configured_min_score"] == 0.5
    calibration = learning["calibration"]
    assert calibration["full_sessions"] == 4 and calibration["relied_rate"] == 0.75
    # what the hook compares with: moved down, 3 of 4 relied on against a 0.6 target
    assert abs(data["threshold"] - calibration["min_score"]) < 1e-4 and data["threshold"] < 0.5
    text = cli("why", "how do I run the tests?", env=on).stdout
    assert "learned from 4 session outcomes: cut-offs full 0.50 -> " in text
    assert "track: relied 3 ignored 1 (order x" in text
    off = json.loads(cli("why", "how do I run the tests?", "--json").stdout)  # the defaults
    assert off["learning"] is None and off["threshold"] == 0.5
    assert all(c["track"] is None for c in off["candidates"])
