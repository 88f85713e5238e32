"""A hook's whole answer from the daemon (daemon/hook_requests.py), over searches that return
literals: the hook's settings (its environment, not the daemon's), the request checked field
by field, the session's record left to the hook's process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from local_recall.context.hook_settings import checked_hook_environment, hook_environment
from local_recall.context.notes import Note
from local_recall.context.prompt import PromptAsk
from local_recall.context.session import SessionAsk, SessionNotes
from local_recall.daemon.hook_requests import answer_reply
from local_recall.daemon.session_env import session_environment
from local_recall.errors import InvalidInput
from local_recall.learning.shown import parse_lines, session_key
from tests.hook_runs import HIT, MEMORY_ID, NOTE, note_of


class Searches:
    def __init__(self) -> None:
        self.asked: list[Any] = []

    def prompt(self, ask: PromptAsk) -> list[Note]:
        self.asked.append(ask)
        return [note_of(HIT)]

    def session(self, ask: SessionAsk) -> SessionNotes:
        self.asked.append(ask)
        return SessionNotes(7, [note_of(NOTE)], [])


def answer(repo: Path, searches: Searches, **request: Any) -> dict[str, Any]:
    return answer_reply(
        {"op": "answer", "kind": "prompt", "hook_env": {}, **request},
        repo.resolve(),
        prompt_notes=searches.prompt,
        session_notes=searches.session,
    )


def test_a_prompt_is_answered_whole_and_its_record_line_returned_not_written(repo: Path) -> None:
    searches = Searches()
    reply = answer(repo, searches, prompt="how do we dedupe saves?", session_id="s1")
    assert reply["ok"] is True
    assert reply["text"].startswith("<local-recall-context>") and HIT["body"] in reply["text"]
    [asked] = searches.asked
    # the full-text threshold past the best three, which pointers by rank may need whatever
    # their score
    assert (asked.query, asked.limit, asked.min_score, asked.at_least) == (
        "how do we dedupe saves?",
        10,
        0.5,
        3,
    )
    [line] = parse_lines([reply["shown"]])
    assert line.full == (MEMORY_ID,)
    assert reply["session_key"] == session_key("s1")
    # the hook's process appends it once the text is shown (a command that gave up shows none)
    assert not (repo / "local-recall" / "state" / "sessions").exists()


def test_without_a_session_nothing_is_to_be_recorded(repo: Path) -> None:
    reply = answer(repo, Searches(), prompt="how do we dedupe saves?")
    assert HIT["body"] in reply["text"]
    assert reply["shown"] is None and reply["session_key"] is None


def test_the_hooks_environment_decides_the_settings_not_the_daemons(repo: Path) -> None:
    searches = Searches()
    off = {"LOCAL_RECALL_HOOKS_PROMPT_TOKENS": "0"}
    reply = answer(repo, searches, prompt="how do we dedupe saves?", hook_env=off)
    assert reply == {"ok": True, "text": "", "shown": None, "session_key": None}
    assert searches.asked == []
    strict = {
        "LOCAL_RECALL_HOOKS_PROMPT_MIN_SCORE": "0.95",
        "LOCAL_RECALL_HOOKS_PROMPT_POINTERS": "0",
    }
    answer(repo, searches, prompt="how do we dedupe saves?", hook_env=strict)
    assert searches.asked[-1].min_score == 0.95


def test_a_pointer_block_names_the_cli_unless_the_asker_has_the_mcp_tools(repo: Path) -> None:
    strict = {"LOCAL_RECALL_HOOKS_PROMPT_MIN_SCORE": "0.95"}  # the hit becomes a pointer
    asked = {"prompt": "how do we dedupe saves?", "hook_env": strict}
    command = answer(repo, Searches(), agent="claude_code", **asked)["text"]
    server = answer(repo, Searches(), agent="claude_code", tools=True, **asked)["text"]
    assert f"- {MEMORY_ID[:8]} " in command and f"- {MEMORY_ID[:8]} " in server
    # Claude Code's command hook answers before the MCP server connects: no tool to open it
    assert "`local-recall show ID`" in command and "`local-recall show ID`" not in server
    assert answer(repo, Searches(), agent="claude_code", tools="yes", **asked)["text"] == command


def test_chit_chat_is_answered_with_nothing_and_no_search(repo: Path) -> None:
    searches = Searches()
    assert answer(repo, searches, prompt="thanks!")["text"] == ""
    assert answer(repo, searches, prompt="/clear")["text"] == ""
    assert searches.asked == []


def test_a_session_start_is_answered_whole(repo: Path) -> None:
    searches = Searches()
    reply = answer(repo, searches, kind="session_start", source="resume", session_id="s1")
    assert reply["ok"] is True and NOTE["subject"] in reply["text"]
    [asked] = searches.asked
    assert (asked.source, asked.session_id) == ("resume", "s1")
    answer(repo, searches, kind="session_start", source="../etc")
    assert searches.asked[-1].source == "startup"  # not one of Claude Code's sources


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("kind", "everything", "'kind'"),
        ("kind", None, "'kind'"),
        ("hook_env", ["LOCAL_RECALL_X"], "'hook_env'"),
        ("hook_env", {"LOCAL_RECALL_X": 5}, "'hook_env'"),
        ("hook_env", {"LOCAL_RECALL_X": "a\0b"}, "'hook_env'"),
        ("prompt", 42, "'prompt'"),
        ("session_id", "s" * 257, "'session_id'"),
        ("prompt_id", ["p"], "'prompt_id'"),
    ],
)
def test_a_bad_field_is_named(repo: Path, field: str, value: object, named: str) -> None:
    request = {"prompt": "how do we dedupe saves?", field: value}
    with pytest.raises(InvalidInput, match=named):
        answer(repo, Searches(), **request)


def test_only_the_variables_the_settings_depend_on_cross_the_socket() -> None:
    environ = {
        "LOCAL_RECALL_HOOKS_PROMPT_TOKENS": "100",
        "HOME": "/home/u",
        "XDG_CONFIG_HOME": "/c",
        "ANTHROPIC_API_KEY": "sk-secret",
        "PATH": "/bin",
    }
    sent = hook_environment(environ)
    assert sent == {
        "LOCAL_RECALL_HOOKS_PROMPT_TOKENS": "100",
        "HOME": "/home/u",
        "XDG_CONFIG_HOME": "/c",
    }
    # and the daemon keeps only those, whatever a client sends
    assert checked_hook_environment(environ) == sent
    assert checked_hook_environment({"HOME": "x" * 5000}) is None
    assert hook_environment({**environ, "LOCAL_RECALL_ODD": "x" * 5000}) == sent  # not sent
    assert checked_hook_environment({f"LOCAL_RECALL_{n}": "1" for n in range(201)}) is None


def test_a_sessions_variables_are_checked_alike() -> None:
    sent = {"ANTHROPIC_BASE_URL": "http://x", "PATH": "/bin", "LOCAL_RECALL_X": "1"}
    assert session_environment(sent) == {"ANTHROPIC_BASE_URL": "http://x"}
    assert session_environment({"ANTHROPIC_BASE_URL": "a\0b"}) is None  # no real env holds one
    assert session_environment({"ANTHROPIC_BASE_URL": 5}) is None
    assert session_environment(["ANTHROPIC_BASE_URL"]) is None
