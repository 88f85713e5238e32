"""The fake Messages API itself (urllib, fast) and one smoke run of the real CLI against it."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.claude_cli import claude_or_fail, offline_env, requires_claude, run_claude
from tests.fake_anthropic import (
    STRUCTURED_OUTPUT_TOOL,
    FakeAnthropic,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    blocks_reply,
    default_responder,
    error_reply,
    hang_reply,
    text_reply,
    visible_text,
)


def post(url: str, body: dict[str, Any], timeout: float = 5) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "x-api-key": "sk-test"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return (
                response.status,
                {k.lower(): v for k, v in response.headers.items()},
                (response.read()),
            )
    except urllib.error.HTTPError as err:
        return err.code, {k.lower(): v for k, v in err.headers.items()}, err.read()


def sse_events(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for frame in raw.decode().split("\n\n"):
        if not frame.strip():
            continue
        lines = dict(line.split(": ", 1) for line in frame.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_thinking_streams_as_deltas_then_a_signature() -> None:
    reply = blocks_reply([ThinkingBlock("t" * 100, signature="sig1"), TextBlock("done")])
    with FakeAnthropic(lambda body: reply) as api:
        _, _, raw = post(
            f"{api.url}/v1/messages",
            {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
        )
        _, _, whole = post(f"{api.url}/v1/messages", {"model": "m", "messages": []})
    events = sse_events(raw)
    first = [d for n, d in events if d.get("index") == 0]
    assert first[0]["content_block"] == {"type": "thinking", "thinking": "", "signature": ""}
    deltas = [d["delta"] for d in first if d["type"] == "content_block_delta"]
    assert "".join(d.get("thinking", "") for d in deltas) == "t" * 100 and len(deltas) == 3
    assert deltas[-1] == {"type": "signature_delta", "signature": "sig1"}
    assert json.loads(whole)["content"][0] == {
        "type": "thinking",
        "thinking": "t" * 100,
        "signature": "sig1",
    }


def test_streamed_text_and_tool_use_follow_the_event_order() -> None:
    long_text = "x" * 150  # several deltas
    reply = blocks_reply([TextBlock(long_text), ToolUseBlock("Lookup", {"q": "a" * 100})])
    with FakeAnthropic(lambda body: reply) as api:
        status, headers, raw = post(
            f"{api.url}/v1/messages",
            {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
        )
    assert status == 200 and headers["content-type"] == "text/event-stream"
    events = sse_events(raw)
    names = [name for name, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert names[1] == "content_block_start" and "content_block_stop" in names
    text = "".join(
        d["delta"]["text"] for n, d in events if n == "content_block_delta" and d["index"] == 0
    )
    partial = "".join(
        d["delta"]["partial_json"]
        for n, d in events
        if n == "content_block_delta" and d["index"] == 1
    )
    assert text == long_text
    assert json.loads(partial) == {"q": "a" * 100}
    starts = [d["content_block"] for n, d in events if n == "content_block_start"]
    assert starts[1]["type"] == "tool_use" and starts[1]["name"] == "Lookup"
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_non_streaming_answer_count_tokens_404_and_recording() -> None:
    with FakeAnthropic(lambda body: text_reply("plain")) as api:
        status, _, raw = post(f"{api.url}/v1/messages", {"model": "m", "messages": []})
        counted = post(f"{api.url}/v1/messages/count_tokens", {"messages": [], "system": "x" * 40})
        missing = post(f"{api.url}/v1/other", {})
        recorded = api.requests
    message = json.loads(raw)
    assert status == 200 and message["content"] == [{"type": "text", "text": "plain"}]
    assert message["stop_reason"] == "end_turn"
    assert counted[0] == 200 and json.loads(counted[2])["input_tokens"] == 10
    assert missing[0] == 404 and json.loads(missing[2])["error"]["type"] == "not_found_error"
    assert [r.path for r in recorded] == ["/v1/messages", "/v1/messages/count_tokens", "/v1/other"]
    assert recorded[0].headers["x-api-key"] == "sk-test"
    assert recorded[0].body == {"model": "m", "messages": []}


def test_error_replies_carry_status_envelope_and_retry_after() -> None:
    with FakeAnthropic(lambda body: error_reply(429, "rate_limit_error", retry_after=7)) as api:
        status, headers, raw = post(f"{api.url}/v1/messages", {"stream": True, "messages": []})
    assert status == 429 and headers["retry-after"] == "7"
    assert json.loads(raw) == {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": "rate limit error"},
    }


def test_hang_holds_the_answer_and_a_broken_responder_is_a_500() -> None:
    with FakeAnthropic(lambda body: hang_reply()) as api:
        with pytest.raises((TimeoutError, socket.timeout, urllib.error.URLError)):
            post(f"{api.url}/v1/messages", {"messages": []}, timeout=0.5)
        api.responder = lambda body: 1 / 0  # type: ignore[assignment,return-value]
        status, _, raw = post(f"{api.url}/v1/messages", {"messages": []})
    assert status == 500 and "ZeroDivisionError" in json.loads(raw)["error"]["message"]


def test_default_responder_calls_structured_output_once_then_talks() -> None:
    responder = default_responder(lambda body: {"memories": []}, text="done")
    tool = {"name": STRUCTURED_OUTPUT_TOOL, "input_schema": {"type": "object"}}
    first = responder({"tools": [tool], "messages": [{"role": "user", "content": "x"}]})
    (call,) = first.blocks
    assert isinstance(call, ToolUseBlock)
    assert (call.name, call.input) == (STRUCTURED_OUTPUT_TOOL, {"memories": []})
    after = responder(
        {
            "tools": [tool],
            "messages": [{"role": "user", "content": [{"type": "tool_result", "content": "ok"}]}],
        }
    )
    assert after.blocks == (TextBlock("done"),)
    assert responder({"messages": []}).blocks == (TextBlock("done"),)


def test_visible_text_covers_system_messages_and_tool_results() -> None:
    body = {
        "system": [{"type": "text", "text": "SYS"}],
        "messages": [
            {"role": "user", "content": "PROMPT"},
            {"role": "assistant", "content": [{"type": "tool_use", "input": {"cmd": "ls"}}]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "content": [{"type": "text", "text": "RESULT"}]},
                    {"type": "text", "text": "<system-reminder>HOOK</system-reminder>"},
                ],
            },
        ],
    }
    assert visible_text(body).split("\n") == [
        "SYS",
        "PROMPT",
        '{"cmd": "ls"}',
        "RESULT",
        "<system-reminder>HOOK</system-reminder>",
    ]


@pytest.mark.slow
@requires_claude
def test_real_claude_print_returns_the_scripted_text(tmp_path: Path) -> None:
    claude = claude_or_fail()
    with FakeAnthropic(lambda body: text_reply("scripted answer 42")) as api:
        done = run_claude(
            claude,
            ["-p", "hello from the test", "--output-format", "json", "--tools", ""],
            cwd=tmp_path,
            env=offline_env(tmp_path / "home", api.url),
        )
        asked = api.message_requests()
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["is_error"] is False and result["result"] == "scripted answer 42"
    assert len(asked) == 1 and asked[0].body["stream"] is True
    assert "hello from the test" in visible_text(asked[0].body)
    assert asked[0].headers["x-api-key"] == "sk-test"
