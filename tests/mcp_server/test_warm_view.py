"""The warm MCP server answers a prompt from what the files hold now, as a cold hook would: an
edit made in place (the same inode, as an editor that writes in place leaves it) and a memory
that arrives by `git checkout` are seen at the next prompt, with no daemon and with one.
The real server over stdio, asked through the official client."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from local_recall.recall import Recall
from local_recall.settings import Settings
from tests.claude_code.test_hooks import add_memories
from tests.conftest import clean_env, git_init
from tests.daemon_runs import daemon_env, running_daemon
from tests.hook_runs import log_text
from tests.mcp_prompts import PromptTool, prompt_server
from tests.waiting import Ceiling

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="the prompt hook's marker"),
]

DEDUPE = "how do we dedupe memory saves?"
WHEEL = "how do we publish the wheel?"
OLD_BODY = "two sessions may save the same memory at once"
NEW_BODY = "a sqlite unique constraint rejects the second insert"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def memory_file(repo: Path, subject: str) -> Path:
    for path in (repo / "local-recall" / "episodic-memory").glob("*.md"):
        if f"subject: {subject}" in path.read_text():
            return path
    raise AssertionError(f"no memory {subject!r}")


def branch_with_a_memory(repo: Path, tmp_path: Path) -> None:
    """A branch `wheel` whose commit adds a memory this repository's index has never seen
    (written in another repository, copied in): only a checkout brings it."""
    other = git_init(tmp_path / "elsewhere")
    recall = Recall.open(settings=Settings(root=other, environ=clean_env()))
    recall.init()
    recall.add("Wheel publishing", "We publish the wheel with trusted publishing from CI.")
    made = memory_file(other, "Wheel publishing")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "memories")
    git(repo, "checkout", "-qb", "wheel")
    (repo / "local-recall" / "episodic-memory" / made.name).write_bytes(made.read_bytes())
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a memory on a branch")
    git(repo, "checkout", "-q", "-")


def edit_in_place(path: Path, old: str, new: str) -> None:
    inode = path.stat().st_ino
    with path.open("r+", encoding="utf-8") as handle:
        text = handle.read().replace(old, new)
        handle.seek(0)
        handle.write(text)
        handle.truncate()
    assert path.stat().st_ino == inode


def ask_through_the_server(repo: Path, runtime: Path) -> dict[str, str]:
    """Warm the server (it answers prompts itself from then on), then edit a memory in place
    and check a branch out, asking after each."""
    seen: dict[str, str] = {}
    ask = PromptTool()

    async def main() -> None:
        server = prompt_server(repo, runtime)
        async with Client(server, mode="legacy", read_timeout_seconds=120) as client:
            await client.list_tools()  # the warm-up starts after the handshake
            ceiling = Ceiling()
            while True:  # until the server answers itself (no fallback search logged)
                fallbacks = log_text(repo).count("searching in-process")
                seen["before"] = await ask(client, DEDUPE)
                if _warm(repo) and log_text(repo).count("searching in-process") == fallbacks:
                    break
                ceiling.check("the server never warmed up")
                await anyio.sleep(0.2)
            fallbacks = log_text(repo).count("searching in-process")
            edit_in_place(memory_file(repo, "Use filelock"), OLD_BODY, NEW_BODY)
            seen["edited"] = await ask(client, DEDUPE)
            git(repo, "checkout", "-q", "wheel")
            seen["checked_out"] = await ask(client, WHEEL)

            seen["fallbacks"] = str(log_text(repo).count("searching in-process") - fallbacks)

    anyio.run(main)
    return seen


def _warm(repo: Path) -> bool:
    return "MCP warm-up: prompts answered here" in log_text(repo)


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    directory = tmp_path / "run"
    directory.mkdir(mode=0o700)
    return directory


@pytest.fixture
def daemon(repo: Path) -> Iterator[dict[str, str]]:
    with running_daemon(repo, daemon_env(repo)) as env:
        yield env


def check(seen: dict[str, Any]) -> None:
    assert OLD_BODY in seen["before"]
    assert NEW_BODY in seen["edited"] and OLD_BODY not in seen["edited"]
    assert "trusted publishing" in seen["checked_out"]
    assert seen["fallbacks"] == "0"  # the warm server answered, not a search of its own


def test_without_a_daemon_an_edit_in_place_and_a_checkout_are_seen(
    repo: Path, runtime: Path, tmp_path: Path
) -> None:
    add_memories(repo)
    branch_with_a_memory(repo, tmp_path)
    check(ask_through_the_server(repo, runtime))


def test_beside_a_daemon_an_edit_in_place_and_a_checkout_are_seen_at_once(
    repo: Path, runtime: Path, tmp_path: Path, daemon: dict[str, str]
) -> None:
    add_memories(repo)
    branch_with_a_memory(repo, tmp_path)
    check(ask_through_the_server(repo, runtime))
