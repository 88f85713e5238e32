"""Which agents' sessions a repository's capture pass may read, and how.

Reading another agent's sessions spends the user's tokens on extraction, so it happens only
where the user opted in on this machine: `local-recall init --agent <agent>` records the agent in
`local-recall/state/agents.json` (gitignored: a teammate's commit cannot opt anyone in) and
`uninstall --agent` takes it out. `session_sources` gives an `AgentSessions` per opted-in agent:
the two methods a capture pass asks of any session source (`find` this repository's files under
the agent's home — `$CODEX_HOME` or `~/.codex`, `~/.gemini`, `$COPILOT_HOME` or `~/.copilot` —
and `read` one from an offset), plugged in beside Claude Code's transcripts; each memory's
`source` names the agent (`<agent>:<session id>`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from local_recall.capture.sessions.codex import parse_codex_rollout
from local_recall.capture.sessions.copilot import parse_copilot_events
from local_recall.capture.sessions.discovery import codex_rollouts, copilot_sessions, gemini_chats
from local_recall.capture.sessions.gemini import parse_gemini_chat
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

    def find(self) -> Sequence[TranscriptFile]:
        return _FINDERS[self.agent][0](self.home, self.roots)

    def read(self, path: Path, start_offset: int) -> ParsedTranscript:
        return _FINDERS[self.agent][1](path, start_offset=start_offset)

    def source_of(self, session_id: str) -> str:
        """A memory's `source` for a session of this agent."""
        return f"{self.agent}:{session_id}"


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
    agents: Iterable[str], environ: Mapping[str, str], home: Path, roots: Sequence[Path]
) -> list[AgentSessions]:
    """A source per agent in `agents` (the opted-in ones), in a fixed order."""
    homes = agent_homes(environ, home)
    wanted = set(agents)
    return [
        AgentSessions(agent, homes[agent], tuple(roots))
        for agent in SESSION_AGENTS
        if agent in wanted
    ]


# --- the opt-in, per machine -------------------------------------------------------------------


def opted_in(state_dir: Path) -> frozenset[str]:
    """The agents whose sessions this machine may read for the repository (none when the file
    is missing or unreadable: reading sessions is never the default)."""
    try:
        data = json.loads(read_text_nofollow(state_dir / AGENTS_STATE, limit=65536))
    except (OSError, ValueError):
        return frozenset()
    agents = data.get("capture") if isinstance(data, dict) else None
    return (
        frozenset(a for a in agents if a in SESSION_AGENTS)
        if isinstance(agents, list)
        else (frozenset())
    )


def record_opt_in(state_dir: Path, add: Iterable[str] = (), remove: Iterable[str] = ()) -> None:
    current = (opted_in(state_dir) | set(add)) - set(remove)
    state_dir.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"capture": sorted(current & set(SESSION_AGENTS))}, indent=2) + "\n"
    write_text_atomic(state_dir / AGENTS_STATE, text)
