"""Other agents' session files -> turns, on the real files the pinned CLIs wrote
(tests/fixtures/<agent>/, recorded by tests/record_agent_fixtures.py)."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from local_recall.capture.sessions import (
    parse_codex_rollout,
    parse_copilot_events,
    parse_gemini_chat,
)
from local_recall.capture.sessions.discovery import codex_rollouts, copilot_sessions, gemini_chats
from local_recall.capture.transcripts.condense import condense
from local_recall.capture.transcripts.model import ParsedTranscript, split_turns_at

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
Parser = Callable[..., ParsedTranscript]


def _fixture(pattern: str) -> Path:
    found = sorted(FIXTURES.glob(pattern))
    assert found, f"missing fixture {pattern}: run tests/record_agent_fixtures.py"
    return found[0]


SESSIONS: dict[str, tuple[Parser, str, str]] = {
    "codex": (parse_codex_rollout, "codex/rollout-*.jsonl", "exec_command"),
    "gemini": (parse_gemini_chat, "gemini/session-*.jsonl", "list_directory"),
    "copilot": (parse_copilot_events, "copilot/events-*.jsonl", "bash"),
}


@pytest.mark.parametrize("agent", SESSIONS)
def test_a_recorded_session_reads_as_the_conversation(agent: str) -> None:
    parser, pattern, tool = SESSIONS[agent]
    parsed = parser(_fixture(pattern))
    roles = [t.role for t in parsed.turns]
    assert roles == ["user", "assistant", "user", "assistant", "user", "assistant"]
    first, call, result, answer, second, last = parsed.turns
    assert first.text.startswith("Why do we deploy with scripts/bluegreen.sh?")
    assert "never restart pods directly" in first.text
    assert [c.name for c in call.tool_calls] == [tool]
    assert "scripts" in call.tool_calls[0].key_argument
    assert result.tool_results and result.tool_results[0].ok
    assert "bluegreen.sh" in result.tool_results[0].snippet
    assert answer.text.startswith("We deploy with scripts/bluegreen.sh")
    assert second.text == "And which port does the health check use?"
    assert last.text == "The health check listens on port 8081."
    assert len({t.session_id for t in parsed.turns}) == 1 and first.session_id
    assert parsed.end_offset == _fixture(pattern).stat().st_size


@pytest.mark.parametrize("agent", SESSIONS)
def test_private_spans_never_reach_the_turns(agent: str) -> None:
    parser, pattern, _ = SESSIONS[agent]
    raw = _fixture(pattern).read_text()
    assert "my badge number is 4471" in raw  # the recording holds it...
    text = condense(list(parser(_fixture(pattern)).turns))[0].text
    assert "4471" not in text and "badge" not in text  # ...the extractor never sees it


@pytest.mark.parametrize("agent", SESSIONS)
def test_a_pass_from_an_offset_sends_only_the_new_turns(agent: str) -> None:
    parser, pattern, _ = SESSIONS[agent]
    path = _fixture(pattern)
    full = parser(path)
    answer = full.turns[3]
    later = parser(path, start_offset=answer.end_offset)
    _, new = split_turns_at(later.turns, answer.end_offset)
    assert [t.text for t in new] == [full.turns[4].text, full.turns[5].text]


@pytest.mark.parametrize("agent", SESSIONS)
def test_a_line_still_being_written_is_left_for_the_next_pass(agent: str) -> None:
    parser, pattern, _ = SESSIONS[agent]
    data = _fixture(pattern).read_bytes()
    cut = data[: len(data) - 20]  # the last line without its end
    parsed = parser(cut)
    assert parsed.end_offset == cut.rfind(b"\n") + 1
    assert parser(b"not json\n" + data).stats.malformed_lines == 1


def test_codex_hook_context_is_never_read_back() -> None:
    """Codex stores a hook's additionalContext as a developer message: it must not come back as
    conversation (it is our own injected memory)."""
    path = _fixture("codex/rollout-*.jsonl")
    lines = path.read_text().splitlines()
    meta = json.loads(lines[0])
    injected = {
        "timestamp": meta["timestamp"],
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "developer",
            "content": [{"type": "input_text", "text": "MEMORY-INJECTED-42"}],
        },
    }
    user = {
        "timestamp": meta["timestamp"],
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": "hi <local-recall-context>MEMORY-WRAPPED-43</local-recall-context>",
                }
            ],
        },
    }
    data = "\n".join([*lines, json.dumps(injected), json.dumps(user)]) + "\n"
    text = condense(list(parse_codex_rollout(data.encode()).turns))[0].text
    assert "MEMORY-INJECTED-42" not in text and "MEMORY-WRAPPED-43" not in text
    assert "User: hi" in text


def test_own_memory_tool_results_are_not_new_knowledge() -> None:
    call = {
        "timestamp": "2026-01-01T00:00:00Z",
        "type": "response_item",
        "payload": {
            "type": "function_call",
            "name": "search_memories",
            "namespace": "mcp__local_recall",
            "arguments": '{"query": "deploy"}',
            "call_id": "c1",
        },
    }
    output = {
        "timestamp": "2026-01-01T00:00:01Z",
        "type": "response_item",
        "payload": {"type": "function_call_output", "call_id": "c1", "output": "OLD-MEMORY"},
    }
    data = (json.dumps(call) + "\n" + json.dumps(output) + "\n").encode()
    turns = parse_codex_rollout(data).turns
    assert turns[1].tool_results[0].snippet == "[memories from local-recall]"


def test_gemini_restated_history_is_not_new() -> None:
    """`--resume` re-states the whole history in `$set.messages`: those are old turns."""
    path = _fixture("gemini/session-*.jsonl")
    parsed = parse_gemini_chat(path)
    texts = [t.text for t in parsed.turns if t.role == "user" and t.text]
    assert texts.count("And which port does the health check use?") == 1
    assert not any("<session_context>" in t for t in texts)


def _copy(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target


def test_discovery_finds_each_agents_sessions_of_this_repository(tmp_path: Path) -> None:
    repo = Path("/home/dev/project")  # the recordings' repository path
    other = Path("/home/dev/elsewhere")
    codex_file = _copy(
        _fixture("codex/rollout-*.jsonl"),
        tmp_path / "codex" / "sessions" / "2026" / "11" / "25" / _fixture("codex/rollout-*").name,
    )
    gemini_file = _copy(
        _fixture("gemini/session-*.jsonl"),
        tmp_path / "gemini" / "tmp" / "project" / "chats" / "session-1.jsonl",
    )
    (tmp_path / "gemini" / "tmp" / "project" / ".project_root").write_text(str(repo))
    copilot_file = _copy(
        _fixture("copilot/events-*.jsonl"),
        tmp_path / "copilot" / "session-state" / "abc" / "events.jsonl",
    )
    assert [f.path for f in codex_rollouts(tmp_path / "codex", [repo])] == [codex_file]
    assert [f.path for f in gemini_chats(tmp_path / "gemini", [repo])] == [gemini_file]
    assert [f.path for f in copilot_sessions(tmp_path / "copilot", [repo])] == [copilot_file]
    for find, home in (
        (codex_rollouts, "codex"),
        (gemini_chats, "gemini"),
        (copilot_sessions, "copilot"),
    ):
        assert find(tmp_path / home, [other]) == []


def test_gemini_chat_is_found_by_its_project_hash_without_the_marker(tmp_path: Path) -> None:
    root = Path("/home/dev/project")
    header = {"sessionId": "s1", "projectHash": hashlib.sha256(str(root).encode()).hexdigest()}
    chats = tmp_path / "tmp" / "renamed" / "chats"
    chats.mkdir(parents=True)
    (chats / "session-x.jsonl").write_text(json.dumps(header) + "\n")
    assert [f.session_id for f in gemini_chats(tmp_path, [root])] == ["s1"]
