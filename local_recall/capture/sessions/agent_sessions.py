"""Which agents' sessions a repository's capture pass may read, and how.

Reading another agent's sessions spends the user's tokens on extraction, so it happens only
where the user opted in on this machine: `local-recall init --agent <agent>` records the agent in
`local-recall/state/agents.json` (gitignored: a teammate's commit cannot opt anyone in) and
`uninstall --agent` takes it out. `session_sources` gives an `AgentSessions` per opted-in agent:
the two methods a capture pass asks of any session source (`find` this repository's files under
the agent's home — `$CODEX_HOME` or `~/.codex`, `~/.gemini`, `$COPILOT_HOME` or `~/.copilot` —
and `read` one from an offset), plugged in beside Claude Code's transcripts; each memory's
`source` names the agent (`<agent>:<session id>`). Only sessions written to since the opt-in are
read: opting in does not replay months of old logs on the user's quota.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from local_recall.capture.report import PassReport, combined
from local_recall.capture.sessions.codex import parse_codex_rollout
from local_recall.capture.sessions.copilot import parse_copilot_events
from local_recall.capture.sessions.discovery import codex_rollouts, copilot_sessions, gemini_chats
from local_recall.capture.sessions.gemini import parse_gemini_chat
from local_recall.capture.transcripts.discovery import git_worktrees
from local_recall.capture.transcripts.model import ParsedTranscript, TranscriptFile
from local_recall.repo.files import read_text_nofollow, write_text_atomic

AGENTS_STATE = "agents.json"
SESSION_AGENTS = ("codex", "gemini", "copilot")


@dataclass(frozen=True, slots=True)
class AgentSessions:
    """One agent's session files of the repository at `roots` (the repository and its
    worktrees): `find` and `read`, the two methods a capture pass asks of a session source."""

    agent: str
    home: Path
    roots: tuple[Path, ...]
    since_ns: int = 0  # when this machine opted in: sessions last written before are not read

    def find(self) -> Sequence[TranscriptFile]:
        found = _FINDERS[self.agent][0](self.home, self.roots)
        return [f for f in found if f.mtime_ns >= self.since_ns]

    def read(self, path: Path, start_offset: int) -> ParsedTranscript:
        return _FINDERS[self.agent][1](path, start_offset=start_offset)

    def memory_source(self, transcript: TranscriptFile) -> str:
        """A memory's `source`: `<agent>:<session id>` (Claude Code's are
        `transcript:<session id>`)."""
        return f"{self.agent}:{transcript.session_id}"


def agent_homes(environ: Mapping[str, str], home: Path) -> dict[str, Path]:
    return {
        "codex": Path(environ.get("CODEX_HOME") or home / ".codex"),
        "gemini": home / ".gemini",
        "copilot": Path(environ.get("COPILOT_HOME") or home / ".copilot"),
    }


Finder = Callable[[Path, Iterable[Path]], list[TranscriptFile]]
_FINDERS: dict[str, tuple[Finder, Callable[..., ParsedTranscript]]] = {
    "codex": (codex_rollouts, parse_codex_rollout),
    "gemini": (gemini_chats, parse_gemini_chat),
    "copilot": (copilot_sessions, parse_copilot_events),
}


def session_sources(
    agents: Mapping[str, int] | Iterable[str],
    environ: Mapping[str, str],
    home: Path,
    roots: Sequence[Path],
) -> list[AgentSessions]:
    """A source per agent in `agents` (the opted-in ones, with when: `opted_in`), in a fixed
    order."""
    homes = agent_homes(environ, home)
    since = dict(agents) if isinstance(agents, Mapping) else dict.fromkeys(agents, 0)
    return [
        AgentSessions(agent, homes[agent], tuple(roots), since[agent])
        for agent in SESSION_AGENTS
        if agent in since
    ]


def with_agent_passes(
    first: PassReport,
    run: Callable[..., PassReport],
    root: Path,
    state_dir: Path,
    environ: Mapping[str, str],
) -> PassReport:
    """After Claude Code's pass (`first`), one pass per opted-in agent (`run(source=…)`), all
    in one report; none when the first stopped early (disabled, out of budget, rate limited,
    asked to stop). The repository's git worktrees count too; `state_dir` holds the opt-in
    (a user cache when the checkout is read-only, so never derived from `root`)."""
    agents = opted_in(state_dir)
    if not agents or first.stopped is not None:
        return first
    home = Path(environ.get("HOME") or Path.home())
    report = first
    for source in session_sources(agents, environ, home, [root, *git_worktrees(root)]):
        more = run(source=source)
        report = combined(report, more)
        if more.stopped is not None:
            break
    return report


# --- the opt-in, per machine -------------------------------------------------------------------


def opted_in(state_dir: Path) -> dict[str, int]:
    """The agents whose sessions this machine may read for the repository, each with the time
    it opted in (ns since the epoch); none when the file is missing or unreadable: reading
    sessions is never the default."""
    try:
        data = json.loads(read_text_nofollow(state_dir / AGENTS_STATE, limit=65536))
    except (OSError, ValueError):
        return {}
    agents = data.get("capture") if isinstance(data, dict) else None
    if not isinstance(agents, dict):
        return {}
    return {
        agent: when
        for agent, when in agents.items()
        if agent in SESSION_AGENTS and isinstance(when, int) and not isinstance(when, bool)
    }


def record_opt_in(
    state_dir: Path, add: Iterable[str] = (), remove: Iterable[str] = (), *, now_ns: int
) -> None:
    """Add agents (an agent already in keeps its first time) and remove others. Sessions last
    written before an agent's time are not read: opting in is not a replay of old logs."""
    current = opted_in(state_dir)
    for agent in add:
        if agent in SESSION_AGENTS:
            current.setdefault(agent, now_ns)
    for agent in remove:
        current.pop(agent, None)
    state_dir.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"capture": dict(sorted(current.items()))}, indent=2) + "\n"
    write_text_atomic(state_dir / AGENTS_STATE, text)
