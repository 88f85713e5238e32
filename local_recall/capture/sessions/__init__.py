"""Other agents' sessions as turns: Codex rollouts, Gemini CLI chats, Copilot CLI event logs.

Each parser reads one JSONL session file from a byte offset and returns the same
`ParsedTranscript` of `Turn`s as Claude Code's parser (capture/transcripts/), cleaned the same way
(`<private>` spans and secrets removed, injected context dropped), so condensing, extraction and
the incremental state work unchanged. `discovery` finds a repository's session files per agent.
Formats verified on the pinned CLIs (docs/agents.md; samples in tests/fixtures/<agent>/).
"""

from local_recall.capture.sessions.codex import parse_codex_rollout
from local_recall.capture.sessions.copilot import parse_copilot_events
from local_recall.capture.sessions.gemini import parse_gemini_chat

__all__ = ["parse_codex_rollout", "parse_copilot_events", "parse_gemini_chat"]
