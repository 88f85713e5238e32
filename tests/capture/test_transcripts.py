"""Transcripts: directory encoding, discovery, incremental parsing, condensing.

Real Claude Code 2.1.197 transcripts: ../shared/claude-code/transcripts (see its README)."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import tracemalloc
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from local_recall.capture.transcripts import (
    TRUNCATION_MARKER,
    Chunk,
    ParseStats,
    ToolCall,
    ToolResult,
    TranscriptFile,
    Turn,
    condense,
    encode_project_dir,
    find_transcripts,
    git_worktrees,
    key_argument,
    parse_transcript,
    read_session_cwd,
    render_turn,
    resume_offset,
    split_turns_at,
)
from tests.claude_cli import claude_or_fail, offline_env, requires_claude, run_claude
from tests.fake_anthropic import FakeAnthropic, default_responder

SHARED = Path(__file__).resolve().parents[2] / "shared" / "claude-code" / "transcripts"
T01 = SHARED / "01-hooks-sessionstart-userpromptsubmit.jsonl"
T02 = SHARED / "02-bash-tooluse-thinking-gitbranch.jsonl"
T03 = SHARED / "03-mcp-tooluse.jsonl"
T04_SESSION = "47cda660-6f63-4128-8752-881a0016ab3d"
T04 = SHARED / "04-subagent" / f"{T04_SESSION}.jsonl"
T04_AGENT = SHARED / "04-subagent" / T04_SESSION / "subagents" / "agent-a553ae215d3f2a252.jsonl"
T05 = SHARED / "05-resume-and-compact.jsonl"
ALL_REAL = (T01, T02, T03, T04, T04_AGENT, T05)

# Text our test hooks injected in transcripts 01 and 05 (attachments, local-command stdout).
HOOK_MARKERS = ("MARKER", "BANANA", "KIWI")

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


# ------------------------------------------------------------------------------------------
# encode_project_dir
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "encoded"),
    [
        ("/home/dev/work/projA", "-home-dev-work-projA"),
        # seen in transcript 02's directory name style: dots, underscores, spaces
        ("/home/dev/work/my.proj_dir with space", "-home-dev-work-my-proj-dir-with-space"),
        ("/home/dev/.config/x", "-home-dev--config-x"),
        ("C:\\Users\\me\\proj", "C--Users-me-proj"),
        # BMP non-ASCII: one dash; outside the BMP (two UTF-16 units): two dashes. Both
        # observed on directories the 2.1.197 CLI created.
        ("/tmp/lrexp/work/my.proj_dir with space é", "-tmp-lrexp-work-my-proj-dir-with-space--"),
        ("/a/✓ 😀/b", "-a------b"),
    ],
)
def test_encoding_replaces_every_non_alphanumeric(path: str, encoded: str) -> None:
    assert encode_project_dir(path) == encoded


def test_long_paths_match_directories_the_real_cli_created() -> None:
    # Directory names written by Claude Code 2.1.197 for these cwds (see docs/pipeline.md).
    first = (
        "/tmp/lrexp/work/"
        + "a_very.long dir-name_" * 6
        + "/déjà vu ✓ 😀/"
        + "x" * 60
        + "/proj.final"
    )
    second = "/tmp/lrexp/work/" + "😀" * 60 + "/" + "😀" * 50 + "/tail"
    assert encode_project_dir(first) == (
        "-tmp-lrexp-work-" + "a-very-long-dir-name-" * 6 + "-d-j--vu------" + "x" * 44 + "-wpevr5"
    )
    assert encode_project_dir(second) == "-tmp-lrexp-work-" + "-" * 184 + "-pogc0d"


def test_encoding_cuts_at_200_and_hashes_the_original_path() -> None:
    exactly = "/" + "a" * 199
    assert encode_project_dir(exactly) == "-" + "a" * 199
    one_more = "/" + "a" * 200
    # Java-style 31-hash as a signed int32, abs, base 36 (node gives the same value)
    assert encode_project_dir(one_more) == "-" + "a" * 199 + "-" + _js_hash36(one_more)
    # two paths that share the first 200 encoded characters get different names
    other = "/" + "a" * 199 + "_"
    assert encode_project_dir(other)[:200] == encode_project_dir(one_more)[:200]
    assert encode_project_dir(other) != encode_project_dir(one_more)


def test_hash_wraps_like_javascript() -> None:
    # "polygenelubricants" hashes to exactly -2**31 in Java/JS; Math.abs gives 2**31
    path = "/" * 201 + "polygenelubricants"
    assert _js_hash36("polygenelubricants") == "zik0zk"
    assert encode_project_dir(path).endswith("-" + _js_hash36(path))


def _js_hash36(text: str) -> str:
    """Independent re-statement of the JS hash, for the tests."""
    value = 0
    units = text.encode("utf-16-le")
    for i in range(0, len(units), 2):
        value = (value * 31 + int.from_bytes(units[i : i + 2], "little")) % 2**32
    if value >= 2**31:
        value -= 2**32
    value = abs(value)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        value, rest = divmod(value, 36)
        out = digits[rest] + out
        if not value:
            return out


# ------------------------------------------------------------------------------------------
# discovery
# ------------------------------------------------------------------------------------------


def _copy_with_cwd(source: Path, target: Path, cwd: str) -> None:
    """A real transcript, as if recorded in `cwd` (the shared copies say /home/dev/...)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for raw in source.read_text(encoding="utf-8").splitlines():
        entry = json.loads(raw)
        if "cwd" in entry:
            entry["cwd"] = cwd
        lines.append(json.dumps(entry))
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=T", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def test_git_worktrees_lists_main_and_linked(tmp_path: Path) -> None:
    repo = tmp_path / "my.repo"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    _git("commit", "-q", "--allow-empty", "-m", "init", cwd=repo)
    _git("worktree", "add", "-q", "-b", "feature", str(tmp_path / "wt feature"), cwd=repo)
    expected = [repo.resolve(), (tmp_path / "wt feature").resolve()]
    assert git_worktrees(repo) == expected
    assert git_worktrees(tmp_path / "wt feature") == expected
    assert git_worktrees(tmp_path) == []  # not a repository


def test_find_transcripts_root_subdir_worktree_subagent_and_not_lookalikes(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    root = work / "my.repo"
    worktree = work / "my.repo-wt"
    for directory in (root / "sub dir", worktree):
        directory.mkdir(parents=True)
    projects = tmp_path / ".claude" / "projects"

    def place(source: Path, cwd: Path | str, name: str | None = None) -> Path:
        target = projects / encode_project_dir(str(cwd)) / (name or source.name)
        _copy_with_cwd(source, target, str(cwd))
        return target

    in_root = place(T01, root)
    in_subdir = place(T02, root / "sub dir")
    in_worktree = place(T03, worktree)
    parent = place(T04, root)
    agent = projects / encode_project_dir(str(root)) / T04_SESSION / "subagents" / T04_AGENT.name
    _copy_with_cwd(T04_AGENT, agent, str(root))
    shutil.copy(T04_AGENT.with_suffix(".meta.json"), agent.with_suffix(".meta.json"))
    # look-alikes: their directory names start with the root's encoding + "-"
    place(T05, work / "my.repo-other")
    place(T05, work / "my.repo.old" / "x")
    # same directory name as the root, but recorded elsewhere: /work/my/repo encodes alike
    place(T05, work / "my" / "repo", name="collision.jsonl")
    (projects / encode_project_dir(str(root)) / "collision.jsonl").rename(
        projects / encode_project_dir(str(root)) / "zz-collision.jsonl"
    )
    # no cwd yet (only bookkeeping lines): kept in the root's own directory, not elsewhere
    bookkeeping = '{"type":"queue-operation","operation":"enqueue","sessionId":"s"}\n'
    (projects / encode_project_dir(str(root)) / "fresh.jsonl").write_text(bookkeeping)
    (projects / encode_project_dir(str(work / "my.repo-other")) / "fresh2.jsonl").write_text(
        bookkeeping
    )
    place(T01, tmp_path / "elsewhere")

    found = find_transcripts(root, tmp_path / ".claude", worktrees=[worktree])

    fresh = projects / encode_project_dir(str(root)) / "fresh.jsonl"
    assert [t.path for t in found] == sorted(
        [in_root, in_subdir, in_worktree, parent, agent, fresh]
    )
    by_path = {t.path: t for t in found}
    assert by_path[agent] == TranscriptFile(
        path=agent,
        session_id="agent-a553ae215d3f2a252",
        is_subagent=True,
        parent_session_id=T04_SESSION,
        size=agent.stat().st_size,
        mtime_ns=agent.stat().st_mtime_ns,
    )
    assert by_path[parent].session_id == T04_SESSION
    assert not by_path[parent].is_subagent and by_path[parent].parent_session_id is None
    # without the worktree, its sessions are not ours
    assert in_worktree not in {t.path for t in find_transcripts(root, tmp_path / ".claude")}


def test_find_transcripts_long_root_uses_the_200_character_prefix(tmp_path: Path) -> None:
    root = tmp_path / ("deep_" * 45) / "repo"
    sibling = tmp_path / ("deep_" * 45) / "repo-two"  # same first 200 encoded characters
    assert len(encode_project_dir(str(root))) > 200
    projects = tmp_path / "cfg" / "projects"
    mine = []
    for cwd in (root, root / "pkg"):
        target = projects / encode_project_dir(str(cwd)) / "s.jsonl"
        _copy_with_cwd(T01, target, str(cwd))
        mine.append(target)
    other = projects / encode_project_dir(str(sibling)) / "s.jsonl"
    _copy_with_cwd(T01, other, str(sibling))
    assert encode_project_dir(str(sibling))[:200] == encode_project_dir(str(root))[:200]

    assert [t.path for t in find_transcripts(root, tmp_path / "cfg")] == sorted(mine)


def test_find_transcripts_without_projects_dir(tmp_path: Path) -> None:
    assert find_transcripts(tmp_path, tmp_path / "no-such-config") == []


def test_read_session_cwd_skips_a_huge_first_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    huge = json.dumps({"type": "queue-operation", "content": "x" * (3 << 20)})
    path.write_text(huge + "\n" + json.dumps({"type": "user", "cwd": "/w/r"}) + "\n")
    assert read_session_cwd(path) == "/w/r"
    # past the probe's 16 MB budget nothing more is read
    path.write_text(huge.replace("x" * 10, "y" * 60) + "\n" + json.dumps({"cwd": "/w/r"}) + "\n")
    assert path.stat().st_size > 16 << 20
    assert read_session_cwd(path) is None


@pytest.mark.slow
@requires_claude
def test_real_cli_directories_are_found(tmp_path: Path) -> None:
    """The real CLI decides where sessions go; discovery must agree, long paths included."""
    claude = claude_or_fail()
    root = tmp_path / "my.repo ✓"
    long_subdir = root / ("nested_dir." * 20) / "leaf"
    lookalike = tmp_path / "my.repo ✓-other"
    for directory in (long_subdir, lookalike):
        directory.mkdir(parents=True)
    home = tmp_path / "home"
    with FakeAnthropic(default_responder(text="fine")) as api:
        env = offline_env(home, api.url)
        for cwd, prompt in ((root, "at root"), (long_subdir, "deep"), (lookalike, "other")):
            done = run_claude(claude, ["-p", prompt], cwd=cwd, env=env)
            assert done.returncode == 0, done.stderr
    config = home / ".claude"
    names = sorted(p.name for p in (config / "projects").iterdir())
    expected = {encode_project_dir(str(p.resolve())) for p in (root, long_subdir, lookalike)}
    assert set(names) == expected
    assert len(encode_project_dir(str(long_subdir.resolve()))) > 200

    found = find_transcripts(root, config)
    prompts = sorted(
        turn.text
        for transcript in found
        for turn in parse_transcript(transcript.path).turns
        if turn.role == "user"
    )
    assert prompts == ["at root", "deep"]


# ------------------------------------------------------------------------------------------
# parser on the real transcripts
# ------------------------------------------------------------------------------------------


def _roles(turns: tuple[Turn, ...]) -> list[str]:
    return [turn.role for turn in turns]


def test_parse_hooks_transcript_drops_injected_context() -> None:
    raw = T01.read_text(encoding="utf-8")
    assert all(marker in raw for marker in ("BANANA", "KIWI"))  # the hooks did inject
    parsed = parse_transcript(T01)
    assert [(t.role, t.text) for t in parsed.turns] == [
        ("user", "hello there"),
        ("assistant", "Hello from fake model."),
    ]
    assert parsed.end_offset == T01.stat().st_size
    # 2 queue-operations, 4 attachments (2 of them hook output), last-prompt
    assert parsed.stats == ParseStats(lines=9, skipped_entries=7)
    assert parsed.turns[0].timestamp == datetime(2026, 11, 22, 3, 26, 5, 712000, tzinfo=UTC)
    assert parsed.turns[0].session_id == "07a12e94-d925-4c1b-b50d-0fa05625e5fa"


def test_parse_merges_lines_of_one_message_and_keeps_thinking_apart() -> None:
    parsed = parse_transcript(T02)
    assert _roles(parsed.turns) == ["user", "assistant", "user", "assistant"]
    assert parsed.stats.merged_lines == 2
    call_turn, result_turn, answer = parsed.turns[1:]
    assert call_turn.message_id == "msg_6048a5d5d5e1"
    assert call_turn.thinking == "Let me check the directory listing first."
    assert call_turn.tool_calls == (
        ToolCall("Bash", "echo hello-from-bash && ls", "toolu_5c36bd4752cf428a8aa7"),
    )
    assert call_turn.uuid == "d0290a8e-d431-47e7-84bf-fe06bcedfdee"  # the first line's uuid
    assert result_turn.tool_results == (
        ToolResult(True, "hello-from-bash a.txt", "toolu_5c36bd4752cf428a8aa7", "Bash"),
    )
    assert answer.message_id == "msg_4e65e2f39c5d"
    assert answer.text.startswith("Done with bash.")
    assert answer.thinking == "Let me check the directory listing first."
    text = "\n".join(chunk.text for chunk in condense(parsed.turns))
    assert "Let me check" not in text
    assert "[tool] Bash: echo hello-from-bash && ls\n" in text
    assert "-> OK: hello-from-bash a.txt" in text


def test_parse_mcp_tool_call_uses_first_string_argument() -> None:
    parsed = parse_transcript(T03)
    assert parsed.turns[1].tool_calls == (
        ToolCall("mcp__recall__search_plain", "testing preferences", "toolu_c08e0ce6e488436c9c4d"),
    )
    assert (
        parsed.turns[2].tool_results[0].snippet == "PLAIN-MEMORY-RESULT for 'testing preferences'"
    )


def test_parse_subagent_transcript_is_sidechain() -> None:
    main = parse_transcript(T04)
    agent = parse_transcript(T04_AGENT)
    assert main.turns[1].tool_calls[0].key_argument == "Look around"
    assert not any(turn.is_sidechain for turn in main.turns)
    assert [(t.role, t.text, t.is_sidechain) for t in agent.turns] == [
        ("user", "List what is in this repo", True),
        ("assistant", "Agent reply.", True),
    ]
    assert {t.session_id for t in agent.turns} == {T04_SESSION}
    assert condense(agent.turns)[0].text.startswith("[subagent] User: List what is in this repo")


def test_parse_resumed_compacted_session() -> None:
    parsed = parse_transcript(T05)
    texts = [(t.role, t.text) for t in parsed.turns]
    assert texts == [
        ("user", "first turn"),
        ("assistant", "Hello from fake model."),
        ("user", "/compact keep memories"),
        ("user", "turn 2"),
        ("assistant", "Hello from fake model."),
        ("user", "turn 3"),
        ("assistant", "Hello from fake model."),
        ("user", "turn 4"),
        ("assistant", "Hello from fake model."),
        ("user", "/compact keep memories"),
    ]
    # the same message id is reused after each prompt: not merged across prompts
    assert [t.message_id for t in parsed.turns if t.role == "assistant"] == ["msg_1"] * 4
    assert parsed.stats.merged_lines == 0
    uuids = {t.uuid for t in parsed.turns}
    assert "01e780be-6dad-40d4-b48a-ec64945ad341" not in uuids  # isCompactSummary
    assert "5e536673-aec8-4710-aeca-fef30ba0a107" not in uuids  # <synthetic> reply
    assert not any("continued from a previous conversation" in t.text for t in parsed.turns)
    assert parsed.stats.injected_spans_removed == 1  # the PreCompact hook's stdout


@pytest.mark.parametrize("path", ALL_REAL, ids=lambda p: p.name)
def test_no_hook_text_and_whole_file_consumed(path: Path) -> None:
    parsed = parse_transcript(path)
    assert parsed.end_offset == path.stat().st_size
    assert parsed.stats.malformed_lines == parsed.stats.unknown_entries == 0
    rendered = "\n".join(chunk.text for chunk in condense(parsed.turns))
    everything = rendered + "".join(
        t.text + t.thinking + "".join(r.snippet for r in t.tool_results) for t in parsed.turns
    )
    for marker in HOOK_MARKERS:
        assert marker not in everything
    assert all(turn.start_offset < turn.end_offset for turn in parsed.turns)


# ------------------------------------------------------------------------------------------
# parser robustness (literal JSONL)
# ------------------------------------------------------------------------------------------


def _user(text: Any, uuid: str = "u1", **extra: Any) -> str:
    entry = {
        "type": "user",
        "uuid": uuid,
        "sessionId": "s1",
        "timestamp": "2026-01-02T03:04:05.000Z",
        "message": {"role": "user", "content": text},
        **extra,
    }
    return json.dumps(entry)


def _assistant(blocks: list[Mapping[str, Any]], uuid: str, message_id: str) -> str:
    message = {"id": message_id, "role": "assistant", "model": "m", "content": blocks}
    return json.dumps(
        {
            "type": "assistant",
            "uuid": uuid,
            "sessionId": "s1",
            "timestamp": "2026-01-02T03:04:06.000Z",
            "message": message,
        }
    )


def test_malformed_lines_are_skipped_counted_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    data = (
        b"\n".join(
            [
                _user("one").encode(),
                b"{not json",
                b"[1, 2]",
                b'{"type": "user", "x": "\xff\xfe"}',
                b"",
                b'{"type": "brand-new-entry-type", "foo": 1}',
                _user("two", uuid="u2").encode(),
            ]
        )
        + b"\n"
    )
    with caplog.at_level(logging.WARNING, logger="local_recall.capture.transcripts"):
        parsed = parse_transcript(data)
    assert [t.text for t in parsed.turns] == ["one", "two"]
    assert parsed.stats.malformed_lines == 3
    assert parsed.stats.unknown_entries == 1
    assert parsed.end_offset == len(data)
    assert sum("malformed line" in r.getMessage() for r in caplog.records) == 3


def test_partial_last_line_is_left_for_the_next_pass(tmp_path: Path) -> None:
    first = _user("one") + "\n"
    second = _user("two", uuid="u2")
    path = tmp_path / "s.jsonl"
    path.write_text(first + second[:25])
    parsed = parse_transcript(path)
    assert [t.text for t in parsed.turns] == ["one"]
    assert parsed.end_offset == len(first.encode())
    with path.open("a") as stream:
        stream.write(second[25:] + "\n")
    again = parse_transcript(path, start_offset=parsed.end_offset)
    assert [t.text for t in again.turns] == ["two"]
    assert again.end_offset == path.stat().st_size
    assert again.turns[0].start_offset == parsed.end_offset


def test_incremental_passes_see_every_turn_once(tmp_path: Path) -> None:
    lines = T05.read_bytes().splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    whole = parse_transcript(T05)
    seen: list[str] = []
    offset = 0
    for cut in (3, 11, 20, 30, len(lines)):
        path.write_bytes(b"".join(lines[:cut]))
        parsed = parse_transcript(path, start_offset=offset)
        seen += [turn.uuid for turn in parsed.turns]
        offset = parsed.end_offset
    assert seen == [turn.uuid for turn in whole.turns]
    assert offset == T05.stat().st_size


def test_repeats_of_a_private_span_are_removed_in_later_passes_of_the_session(
    tmp_path: Path,
) -> None:
    secret = "the staging box answers on port 8443 as admin"
    first = _user(f"Keep this to yourself: < PRIVATE reason='ops' >{secret}</Private >") + "\n"
    path = tmp_path / "s.jsonl"
    path.write_text(first)
    parsed = parse_transcript(path)
    assert secret not in parsed.turns[0].text
    tool = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": f"echo {secret}"}}
    reply = {"type": "text", "text": f"Noted: {secret}. Moving on."}
    with path.open("a") as stream:
        stream.write(_assistant([reply, tool], "a1", "m1") + "\n")
        stream.write(_assistant([{"type": "thinking", "thinking": secret}], "a2", "m2") + "\n")
    later = parse_transcript(path, start_offset=parsed.end_offset)  # reads only the new lines
    everything = " ".join(
        [t.text + t.thinking + " ".join(c.key_argument for c in t.tool_calls) for t in later.turns]
    )
    assert "Moving on" in everything
    assert secret not in everything
    assert "8443" not in everything


def test_offset_past_end_means_the_file_was_replaced(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(_user("x") + "\n")
    parsed = parse_transcript(path, start_offset=10_000)
    assert parsed.turns == () and parsed.end_offset == 10_000
    assert parse_transcript(tmp_path / "gone.jsonl", start_offset=7).end_offset == 7


def test_str_source_is_refused() -> None:
    with pytest.raises(TypeError):
        parse_transcript("/some/path.jsonl")


def test_line_size_limit_boundary() -> None:
    short = _user("y" * 10).encode()
    limit = len(short)
    data = short + b"\n" + _user("z" * 11, uuid="u2").encode() + b"\n" + short + b"\n"
    parsed = parse_transcript(data, max_line_bytes=limit)
    assert [t.text for t in parsed.turns] == ["y" * 10, "y" * 10]
    assert parsed.stats.oversized_lines == 1
    assert parsed.end_offset == len(data)


def test_50_mb_line_is_streamed_past_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as stream:
        stream.write(_user("before").encode() + b"\n")
        stream.write(b'{"type":"user","message":{"role":"user","content":"')
        block = b"A" * (1 << 20)
        for _ in range(50):
            stream.write(block)
        stream.write(b'"}}\n')
        stream.write(_user("after", uuid="u2").encode() + b"\n")
        # and a second huge line still being written (no newline yet)
        for _ in range(8):
            stream.write(block)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        parsed = parse_transcript(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [t.text for t in parsed.turns] == ["before", "after"]
    assert parsed.stats.oversized_lines == 1
    assert parsed.end_offset == size - 8 * (1 << 20)  # the unfinished line is not consumed
    assert peak < 12 * (1 << 20), peak


def test_injected_spans_are_removed_from_user_text() -> None:
    lines = [
        _user("fix the bug<local-recall-context>MEMORY: use pytest</local-recall-context> now"),
        _user("<system-reminder>hook says hi</system-reminder>real question", uuid="u2"),
        _user("only injected<local-recall-context>MEMORY: unclosed", uuid="u3"),
        _user("<local-recall-context>all of it</local-recall-context>", uuid="u4"),
        _user("<local-command-caveat>Caveat</local-command-caveat>", uuid="u5", isMeta=True),
    ]
    parsed = parse_transcript(lines)
    assert [t.text for t in parsed.turns] == ["fix the bug now", "real question", "only injected"]
    assert parsed.stats.injected_spans_removed == 4
    assert parsed.stats.skipped_entries == 2  # the emptied prompt and the isMeta entry


@pytest.mark.parametrize(
    ("tool", "hidden"),
    [
        ("mcp__local-recall__get_memories", True),
        ("mcp__local-recall__search_memories", True),
        ("mcp__plugin_local-recall_local-recall__memory_timeline", True),
        ("mcp__local-recall__save_memory", False),  # the agent's own words: worth extracting
        ("mcp__other__get_memories", False),
    ],
)
def test_results_of_our_own_read_tools_never_come_back(tool: str, hidden: bool) -> None:
    call = _assistant(
        [{"type": "tool_use", "id": "t1", "name": tool, "input": {"ids": ["x"]}}],
        uuid="a1",
        message_id="m1",
    )
    served = "Zebra memory: always run the flaky suite twice"
    result = _user(
        [
            {
                "type": "tool_result",
                "tool_use_id": "t1",
                "content": [{"type": "text", "text": served}],
            }
        ],
        uuid="u2",
    )
    parsed = parse_transcript([_user("what do we know?"), call, result])
    rendered = "\n".join(render_turn(turn) for turn in parsed.turns)
    assert (served not in rendered) is hidden
    assert ("[memories from local-recall]" in rendered) is hidden


def test_tool_results_errors_images_and_reminders() -> None:
    call = _assistant(
        [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a.py"}}],
        uuid="a1",
        message_id="m1",
    )
    result = _user(
        [
            {
                "type": "tool_result",
                "tool_use_id": "t1",
                "is_error": True,
                "content": [
                    {
                        "type": "text",
                        "text": "File does not exist.\n<system-reminder>x</system-reminder>",
                    },
                    {"type": "image", "source": {}},
                ],
            },
            {"type": "tool_result", "tool_use_id": "t9", "content": "x" * 500},
        ],
        uuid="u2",
    )
    parsed = parse_transcript([_user("read it"), call, result])
    results = parsed.turns[2].tool_results
    assert results[0] == ToolResult(False, "File does not exist. [image]", "t1", "Read")
    assert results[1].ok and results[1].tool_name == "" and len(results[1].snippet) == 200
    assert parsed.turns[2].text == ""


def test_message_lines_merge_across_a_tool_result_but_not_a_prompt() -> None:
    lines = [
        _user("go"),
        _assistant([{"type": "text", "text": "Looking."}], "a1", "m1"),
        _assistant(
            [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}],
            "a2",
            "m1",
        ),
        _user([{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}], uuid="u2"),
        _assistant(
            [{"type": "tool_use", "id": "t2", "name": "Glob", "input": {"pattern": "*.py"}}],
            "a3",
            "m1",
        ),
        _user("next", uuid="u3"),
        _assistant([{"type": "text", "text": "Again."}], "a4", "m1"),
    ]
    parsed = parse_transcript(lines)
    assert [(t.role, t.uuid) for t in parsed.turns] == [
        ("user", "u1"),
        ("assistant", "a1"),
        ("user", "u2"),
        ("user", "u3"),
        ("assistant", "a4"),
    ]
    merged = parsed.turns[1]
    assert [c.key_argument for c in merged.tool_calls] == ["ls", "*.py"]
    assert merged.end_offset > parsed.turns[2].end_offset  # it ends with the Glob line
    assert parsed.stats.merged_lines == 2


@pytest.mark.parametrize(
    ("name", "tool_input", "shown"),
    [
        ("Bash", {"description": "d", "command": "git  status\n--short"}, "git status --short"),
        ("Edit", {"old_string": "a", "file_path": "/x.py"}, "/x.py"),
        ("Write", {"content": "c", "file_path": "/y.py"}, "/y.py"),
        ("Grep", {"path": "src", "pattern": "def main"}, "def main"),
        ("Glob", {"pattern": "**/*.md"}, "**/*.md"),
        ("WebFetch", {"prompt": "p", "url": "https://e.org"}, "https://e.org"),
        ("mcp__srv__tool", {"n": 3, "q": "", "query": "hello"}, "hello"),
        ("TodoWrite", {"todos": []}, ""),
        ("Bash", {"command": "x" * 300}, "x" * 199 + "…"),
    ],
)
def test_key_argument(name: str, tool_input: dict[str, Any], shown: str) -> None:
    assert key_argument(name, tool_input) == shown


# ------------------------------------------------------------------------------------------
# condenser (literal turns)
# ------------------------------------------------------------------------------------------


def _turn(n: int, role: str = "user", text: str = "", session: str = "s1", **extra: Any) -> Turn:
    return Turn(
        uuid=f"t{n}",
        role=role,  # type: ignore[arg-type]
        timestamp=T0 + timedelta(seconds=n),
        text=text,
        session_id=session,
        **extra,
    )


def test_render_turn_format() -> None:
    turn = _turn(
        1,
        "assistant",
        "Checking.",
        thinking="secret reasoning",
        tool_calls=(ToolCall("Bash", "pytest -q"), ToolCall("TodoWrite", "")),
    )
    assert render_turn(turn) == "Assistant: Checking.\n[tool] Bash: pytest -q\n[tool] TodoWrite"
    results = _turn(2, tool_results=(ToolResult(True, "3 passed"), ToolResult(False, "boom")))
    assert render_turn(results) == "-> OK: 3 passed\n-> ERROR: boom"
    assert render_turn(_turn(3, text="   ")) == ""


def test_private_spans_are_removed_everywhere() -> None:
    # The parser cleans every field once (condense only formats what it is given).
    call = _assistant(
        [
            {"type": "text", "text": "keep <private>the password is hunter2</private>this"},
            {
                "type": "tool_use",
                "id": "t1",
                "name": "Bash",
                "input": {"command": "echo <private>hunter2</private>ok"},
            },
        ],
        uuid="a1",
        message_id="m1",
    )
    result = _user(
        [{"type": "tool_result", "tool_use_id": "t1", "content": "out <private>hunter2"}],
        uuid="u2",
    )
    parsed = parse_transcript([call, result, _user("later <PRIVATE>x</PRIVATE> text", uuid="u3")])
    assert all("hunter2" not in repr(turn) for turn in parsed.turns)
    chunk = condense(parsed.turns)[0]
    assert "hunter2" not in chunk.text
    assert "Assistant: keep this" in chunk.text
    assert "[tool] Bash: echo ok" in chunk.text
    assert "-> OK: out" in chunk.text
    assert "User: later  text" in chunk.text


def test_chunks_split_at_turn_boundaries_within_the_cap() -> None:
    turns = [
        _turn(i, "user" if i % 2 == 0 else "assistant", f"turn {i} " + "w" * 900) for i in range(10)
    ]
    chunks = condense(turns, max_chars=2500, context_turns=0)
    assert len(chunks) == 5
    assert [uuid for chunk in chunks for uuid in chunk.turn_uuids] == [t.uuid for t in turns]
    for chunk in chunks:
        assert len(chunk.text) <= 2500
        assert chunk.text.count("w" * 900) == len(chunk.turn_uuids)  # whole turns only
        assert chunk.session_id == "s1"
    assert (chunks[1].first_timestamp, chunks[1].last_timestamp) == (
        T0 + timedelta(seconds=2),
        T0 + timedelta(seconds=3),
    )


def test_later_chunks_carry_the_previous_turns_as_context() -> None:
    turns = [_turn(i, text=f"turn {i} " + "w" * 900) for i in range(4)]
    chunks = condense(turns, max_chars=2500, context_turns=1)
    assert chunks[0].turn_uuids == ("t0", "t1")
    assert not chunks[0].text.startswith("[Earlier turns")
    second = chunks[1]
    assert second.text.startswith("[Earlier turns, context only: already processed]\nUser: turn 1")
    assert "[New turns]\nUser: turn 2" in second.text
    assert "turn 0" not in second.text
    assert all(len(chunk.text) <= 2500 for chunk in chunks)
    assert [u for c in chunks for u in c.turn_uuids] == ["t0", "t1", "t2", "t3"]


def test_a_giant_turn_is_cut_with_a_marker() -> None:
    giant = _turn(1, "assistant", "HEAD " + "m" * 50_000 + " TAIL")
    chunks = condense([_turn(0, text="q"), giant, _turn(2, text="thanks")], max_chars=4000)
    assert [c.turn_uuids for c in chunks] == [("t0",), ("t1",), ("t2",)]
    cut = chunks[1].text
    assert len(cut) <= 4000
    assert TRUNCATION_MARKER in cut
    assert "Assistant: HEAD" in cut and cut.endswith(" TAIL")


def test_session_change_starts_a_new_chunk() -> None:
    chunks = condense([_turn(1, text="a"), _turn(2, text="b", session="s2")])
    assert [(c.session_id, c.turn_uuids) for c in chunks] == [("s1", ("t1",)), ("s2", ("t2",))]
    assert "[Earlier turns" not in chunks[1].text  # no context across sessions


def test_empty_turns_are_left_out() -> None:
    assert condense([]) == []
    assert condense([_turn(1, "assistant", thinking="only thinking")]) == []


def test_minimal_context_for_an_appended_transcript() -> None:
    earlier = [
        _turn(1, text="first question"),
        _turn(2, "assistant", "first answer"),
        _turn(3, text="second question"),
        _turn(4, "assistant", "second answer"),
    ]
    new = [_turn(5, text="third question"), _turn(6, "assistant", "third answer")]
    [chunk] = condense(new, context=earlier)
    assert chunk == Chunk(
        text=(
            "[Earlier turns, context only: already processed]\n"
            "User: second question\n\nAssistant: second answer\n\n"
            "[New turns]\n"
            "User: third question\n\nAssistant: third answer"
        ),
        session_id="s1",
        first_timestamp=T0 + timedelta(seconds=5),
        last_timestamp=T0 + timedelta(seconds=6),
        turn_uuids=("t5", "t6"),
    )
    [bare] = condense(new, context=earlier, context_turns=0)
    assert bare.text == "User: third question\n\nAssistant: third answer"


def test_context_is_capped_to_a_quarter_of_the_chunk() -> None:
    earlier = [_turn(1, text="c" * 10_000), _turn(2, "assistant", "d" * 10_000)]
    [chunk] = condense([_turn(3, text="new")], context=earlier, max_chars=4000)
    prefix = chunk.text.split("[New turns]")[0]
    assert len(prefix) <= 4000 // 4 + 100
    assert chunk.text.endswith("[New turns]\nUser: new")


def test_max_chars_floor() -> None:
    with pytest.raises(ValueError, match="max_chars"):
        condense([_turn(1, text="x")], max_chars=100)


def test_split_and_resume_offsets_with_literals() -> None:
    turns = [
        _turn(1, text="a", start_offset=0, end_offset=10),
        _turn(2, "assistant", "b", start_offset=10, end_offset=20),
        _turn(3, text="c", start_offset=20, end_offset=30),
        _turn(4, "assistant", "d", start_offset=30, end_offset=45),  # straddles 40
    ]
    assert split_turns_at(turns, 40) == (tuple(turns[:3]), (turns[3],))
    assert resume_offset(turns, 45, keep=2) == 20
    assert resume_offset(turns, 45, keep=0) == 45
    assert resume_offset([], 45) == 45


def test_appended_transcript_flow(tmp_path: Path) -> None:
    """What the pipeline does: pass 1 reads all; pass 2 re-reads the last turns as context."""
    lines = T05.read_bytes().splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines[:20]))  # up to and including "turn 2" and its answer
    first = parse_transcript(path)
    done_at, context_from = first.end_offset, resume_offset(first.turns, first.end_offset)

    path.write_bytes(b"".join(lines))
    second = parse_transcript(path, start_offset=context_from)
    context, new = split_turns_at(second.turns, done_at)
    assert [t.text for t in context] == ["turn 2", "Hello from fake model."]
    assert [t.text for t in new][:2] == ["turn 3", "Hello from fake model."]
    [chunk] = condense(new, context=context)
    assert chunk.turn_uuids == tuple(t.uuid for t in new)
    assert chunk.text.startswith(
        "[Earlier turns, context only: already processed]\nUser: turn 2\n\n"
        "Assistant: Hello from fake model.\n\n[New turns]\nUser: turn 3"
    )
