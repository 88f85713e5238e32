"""What a session did with the memories it was shown, end to end with the real Claude Code CLI
offline (against FakeAnthropic) on the settings `local-recall init` writes
(docs/hooks.md#what-is-learned):

- a session whose model reads a pointed-at memory with `get_memories` shows up, after the pass
  over it (`local-recall sync`, the real `claude -p` extractor), as having relied on it: the
  extraction call itself was asked, in the same request, about the memories shown;
- a session whose extraction answer says a memory is wrong marks it disputed: the next session
  is shown `[disputed: <why>]` and a pointer, not its text, until a person accepts it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from local_recall.learning.outcomes import Outcome
from local_recall.learning.usage_log import read_outcomes
from local_recall.repo.layout import Layout
from tests.claude_cli import claude_or_fail, offline_env, requires_claude, run_claude
from tests.claude_code.test_pointer_e2e import GET, follows_pointers
from tests.claude_code.test_prompt_hook_e2e import (  # the same repository
    ASK,
    BASE,
    CODEWORD,
    context_after,
    lr,
    project,
    template,
)
from tests.conftest import clean_env
from tests.fake_anthropic import (
    STRUCTURED_OUTPUT_TOOL,
    FakeAnthropic,
    JSONDict,
    Reply,
    text_reply,
    tool_names,
    tool_use_reply,
    visible_text,
)

pytestmark = [pytest.mark.slow, requires_claude]
__all__ = ["project", "template"]  # fixtures

LISTED = re.compile(r"([0-9a-f]{8}): Nightly export retries")
WHY = "export.py now backs off 2, 8 and 32 minutes; the quince table is gone"
# no daemon: the hooks search in their own process, from the files (the mark is seen at once)
HOOKS = {**BASE, "LOCAL_RECALL_HOOKS_START_DAEMON": "false"}
PATIENT = {"LOCAL_RECALL_HOOK_DEADLINE_SECONDS": "120"}  # a loaded machine: answer, not race


def model(
    session: Callable[[JSONDict], Reply], judge: Callable[[str], dict[str, Any]]
) -> Callable[[JSONDict], Reply]:
    """The agent's model for the session; for the pass's extraction call, no memories and
    `judge(short id)` about the nightly export memory it lists as shown."""

    def respond(body: JSONDict) -> Reply:
        if STRUCTURED_OUTPUT_TOOL not in tool_names(body):
            return session(body)
        listed = LISTED.search(visible_text(body))
        verdict = judge(listed.group(1)) if listed else {"relied": [], "disputed": []}
        return tool_use_reply(STRUCTURED_OUTPUT_TOOL, {"memories": [], "shown_memories": verdict})

    return respond


def ask(project: Path, home: Path, url: str, **extra: str) -> None:
    """One `claude -p ASK` session."""
    env = offline_env(home, url, extra={**HOOKS, **PATIENT, **extra})
    done = run_claude(
        claude_or_fail(), ["-p", ASK, "--allowedTools", GET], cwd=project, env=env, timeout=400
    )
    assert done.returncode == 0, done.stderr


def sync(project: Path, home: Path, url: str) -> None:
    """The pass over the sessions, with the real `claude -p` as its extractor."""
    env = offline_env(
        home,
        url,
        extra={
            "LOCAL_RECALL_EXTRACTION_ENABLED": "true",
            "LOCAL_RECALL_SUMMARIES_ENABLED": "false",
            "LOCAL_RECALL_EXTRACTION_MAX_ATTEMPTS": "1",
            "LOCAL_RECALL_CLAUDE_BIN": claude_or_fail(),
        },
    )
    env.pop("LOCAL_RECALL_ROOT", None)
    for transcript in sorted((home / ".claude" / "projects").rglob("*.jsonl")):
        lr(project, env, "sync", "--ended", str(transcript))


def judged(api: FakeAnthropic) -> tuple[str, str]:
    """The pass's one extraction call (the memories and the verdicts in one request) and the
    short id it listed the nightly export memory by."""
    (body,) = [
        visible_text(r.body)
        for r in api.message_requests()
        if STRUCTURED_OUTPUT_TOOL in tool_names(r.body)
    ]
    listed = LISTED.search(body)
    assert listed and "<shown-memories>" in body, body[-2000:]
    return body, listed.group(1)


def outcome_of(project: Path, short: str) -> Outcome:
    (outcome,) = [o for o in read_outcomes(Layout(project)) if o.memory_id.startswith(short)]
    return outcome


def test_a_session_that_reads_a_pointer_relied_on_it(project: Path, tmp_path: Path) -> None:
    relied = model(follows_pointers, lambda short: {"relied": [short], "disputed": []})
    home = tmp_path / "home"
    with FakeAnthropic(relied) as api:
        # nothing is sure enough for full text: the nightly export memory comes as a pointer
        ask(project, home, api.url, LOCAL_RECALL_HOOKS_PROMPT_MIN_SCORE="1.0")
        opened = [r for r in api.message_requests() if GET in json.dumps(r.body.get("messages"))]
        assert opened, "the model did not call get_memories"
        sync(project, home, api.url)
        _, short = judged(api)
    outcome = outcome_of(project, short)
    assert (outcome.tier, outcome.use) == ("pointer", "relied")


def test_a_session_that_finds_a_memory_wrong_disputes_it(project: Path, tmp_path: Path) -> None:
    wrong = model(
        lambda body: text_reply("OK"),
        lambda short: {"relied": [], "disputed": [{"id": short, "reason": WHY}]},
    )
    home = tmp_path / "home"
    with FakeAnthropic(wrong) as api:
        ask(project, home, api.url)  # the memory is sure: shown in full
        first = context_after(api.message_requests()[0].body, ASK)
        assert CODEWORD in first
        sync(project, home, api.url)
        _, short = judged(api)
        outcome = outcome_of(project, short)
        assert (outcome.tier, outcome.use, outcome.reason) == ("full", "disputed", WHY)
        api.clear()
        ask(project, tmp_path / "home2", api.url)  # the next session
        held = context_after(api.message_requests()[0].body, ASK)
    assert f"[disputed: {WHY}]" in held and f"- {outcome.memory_id[:8]} " in held
    assert CODEWORD not in held  # a pointer, not the text
    assert f"[disputed: {WHY}]" in lr(project, clean_env(BASE), "review", "--list")
    # the claim is in the memory's own file; what the sessions did stays in gitignored state/
    disputed = project / "local-recall" / "episodic-memory" / f"{outcome.memory_id}.md"
    assert f"disputed:\n  reason: {WHY}\n" in disputed.read_text()
    assert not (project / "local-recall" / "usage").exists()
