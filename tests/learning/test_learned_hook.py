"""What the prompt hook learns from this user's outcomes (learning/learned.py), as Claude
Code runs it: a real hook subprocess, a stand-in daemon answering from literals, the outcomes
in state/outcomes.jsonl as usage_log.py writes them."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from local_recall.learning.learned import LearnSettings, read_learned, usage_key
from local_recall.learning.outcomes import Outcome
from local_recall.learning.usage_log import append_outcomes
from local_recall.repo.layout import Layout
from tests.hook_runs import HIT, MEMORY_ID, StandIn, assert_clean, hook_env, prompt_input, run_hook

OTHER = "5c1d2e3f-4a5b-4c6d-8e7f-901234567890"
TODAY = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")  # outcomes of today: no decay


def outcomes(memory: str, use: str, tier: str, count: int, start: int = 0) -> list[Outcome]:
    return [
        Outcome(memory, f"{start + n:032x}", TODAY, tier, use)  # type: ignore[arg-type]
        for n in range(count)
    ]


def record(repo: Path, items: list[Outcome]) -> None:
    append_outcomes(Layout(repo), items)


# both are off by default (benchmarks/README.md#learning-from-sessions): these tests turn them on
ON = {"LOCAL_RECALL_LEARNING_CALIBRATE": "true", "LOCAL_RECALL_LEARNING_TRACK_RECORD": "true"}


def ask(repo: Path, **env: str) -> Any:
    env = {**ON, **env}
    ran = run_hook(
        "user-prompt-submit", prompt_input("dedupe saves?", repo), repo, env=hook_env(repo, env)
    )
    assert_clean(ran)
    return ran


# Pointers come by rank; calibration moves a configured floor on their score (0 by default).
FLOOR = {"LOCAL_RECALL_HOOKS_PROMPT_POINTER_MIN_SCORE": "0.3"}


def test_pointers_followed_often_lower_the_pointer_cut_off(repo: Path, stand_in: StandIn) -> None:
    stand_in.reply = {"ok": True, "hits": [{**HIT, "score": 0.25}]}  # under a 0.3 floor
    assert ask(repo, **FLOOR).stdout == ""
    assert stand_in.requests[-1]["min_score"] == 0.3
    record(repo, outcomes(OTHER, "followed", "pointer", 300))
    context = ask(repo, **FLOOR).context()
    assert f"- {MEMORY_ID[:8]} Use filelock" in context  # a pointer now
    assert 0.2 <= stand_in.requests[-1]["min_score"] < 0.22  # the daemon asked lower too
    off = ask(repo, **FLOOR, LOCAL_RECALL_LEARNING_CALIBRATE="false")
    assert off.stdout == "" and stand_in.requests[-1]["min_score"] == 0.3
    cache = repo / "local-recall" / "state" / "learned.json"
    assert cache.exists()


def test_the_track_record_orders_the_hits(repo: Path, stand_in: StandIn) -> None:
    """Of two sure hits of similar score, the one sessions relied on takes the full-text slot,
    the one they ignored becomes the pointer; the score (and so the tiers' cut) is unchanged."""
    ignored = {**HIT, "score": 0.6}
    relied = {
        **HIT,
        "id": OTHER,
        "subject": "Saves are deduplicated by content hash",
        "body": "The store hashes each body with sha256 and skips a save whose hash it holds.",
        "score": 0.56,
    }
    stand_in.reply = {"ok": True, "hits": [ignored, relied]}
    small = {"LOCAL_RECALL_HOOKS_PROMPT_FULL_TOKENS": "10"}  # one memory in full
    before = ask(repo, **small).context()
    assert str(HIT["body"]) in before and f"- {OTHER[:8]} " in before
    record(
        repo,
        outcomes(MEMORY_ID, "ignored", "full", 12) + outcomes(OTHER, "relied", "full", 12, 100),
    )
    after = ask(repo, **small, LOCAL_RECALL_LEARNING_CALIBRATE="false").context()
    assert str(HIT["body"]) not in after and f"- {MEMORY_ID[:8]} " in after
    assert "score 0.56" in after  # the score shown is the relevance decision's
    off = ask(
        repo,
        **small,
        LOCAL_RECALL_LEARNING_CALIBRATE="false",
        LOCAL_RECALL_LEARNING_TRACK_RECORD="false",
    ).context()
    assert str(HIT["body"]) in off


def test_a_planted_cache_is_not_believed(repo: Path, stand_in: StandIn) -> None:
    """state/learned.json with cut-offs no calibration can give (and the right key) is
    computed again: a prompt gets today's tiers, not the file's."""
    stand_in.reply = {"ok": True, "hits": [{**HIT, "score": 0.25}]}
    assert ask(repo, **FLOOR).stdout == ""  # writes the cache with its key
    cache = repo / "local-recall" / "state" / "learned.json"
    data = json.loads(cache.read_text())
    data["learned"] = {"min_score": 0.0, "pointer_min_score": 0.0, "factors": {}}
    cache.write_text(json.dumps(data))
    assert ask(repo, **FLOOR).stdout == ""
    assert stand_in.requests[-1]["min_score"] == 0.3


def test_an_unreadable_outcome_record_leaves_the_prompt_alone(
    repo: Path, stand_in: StandIn
) -> None:
    state = repo / "local-recall" / "state"
    state.mkdir(exist_ok=True)
    (state / "outcomes.jsonl").symlink_to(repo)  # usage_log reads nothing through it
    ran = ask(repo)
    assert str(HIT["body"]) in ran.context()


SETTINGS = LearnSettings(True, True, 90.0, 0.5, 0.3)


def _plant(repo: Path, text: str) -> None:
    """state/learned.json with the key read_learned computes now: it is read, not recomputed."""
    layout = Layout(repo)
    now = datetime.now(UTC)
    key = json.dumps([usage_key(layout), list(SETTINGS), now.strftime("%Y-%m-%d")])
    layout.state_dir.mkdir(exist_ok=True)
    (layout.state_dir / "learned.json").write_text(text.replace("KEY", json.dumps(key)))


@pytest.mark.parametrize(
    "learned",
    [
        '{"min_score":NaN,"pointer_min_score":NaN,"factors":{}}',
        '{"min_score":0.5,"pointer_min_score":Infinity,"factors":{}}',
        '{"min_score":true,"pointer_min_score":0.3,"factors":{}}',
    ],
)
def test_a_value_that_is_not_finite_is_not_believed(repo: Path, learned: str) -> None:
    """`NaN` passes a `> 0.1` check (it compares false with everything): a planted cache with
    the right key and a NaN cut-off would decide every prompt of the day."""
    _plant(repo, '{"key":KEY,"learned":' + learned + "}")
    got = read_learned(Layout(repo), SETTINGS, datetime.now(UTC))
    assert (got.min_score, got.pointer_min_score) == (0.5, 0.3)


def test_a_cache_nested_past_the_parser_is_not_believed(repo: Path) -> None:
    _plant(repo, "[" * 100_000 + "]" * 100_000)
    got = read_learned(Layout(repo), SETTINGS, datetime.now(UTC))
    assert (got.min_score, got.pointer_min_score) == (0.5, 0.3)
