"""The MCP server's prompt hook: the hidden tool `user_prompt_submit` that Claude Code's
`mcp_tool` handler calls on every prompt once the server is connected (handoff.py).

It answers exactly what `local-recall hook user-prompt-submit` prints — the same code
(hooks/answers.py: ask the daemon, else search in this process) and the same output shape — but
in a process that is already running: no interpreter start, no imports, no settings file parsed
per prompt. With no daemon it searches in this process, like the command does, on a
ContextService it keeps (the model loaded once; the memory files re-read each time, so it sees
what the command would). Fail open: any error, or no answer within the deadline, is "" (nothing
injected) and a line in recall.log; the prompt is never held longer than that.

No MCP SDK here (mcp_server/server.py registers the tool; `local-recall mcp` hands it this
PromptHook): this module is plain Python over the hook runtime, tested without a server.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from local_recall.claude_code.hooks.events import AGENT, DEADLINE_SECONDS, hook_output
from local_recall.claude_code.hooks.handoff import ServedMarker
from local_recall.context.hook_settings import read_hook_settings
from local_recall.hooks.answers import HookRun, answer_prompt, context_in_process, log
from local_recall.hooks.process import deadline_seconds, run_with_deadline
from local_recall.repo.layout import RECALL_DIRNAME

if TYPE_CHECKING:
    from local_recall.context.notes import Note
    from local_recall.context.prompt import PromptAsk
    from local_recall.context.service import ContextService
    from local_recall.settings import Settings

EVENT = "UserPromptSubmit"
TOOL_NAME = "user_prompt_submit"
# The in-process search is not for concurrent use; a second prompt waits this long for it.
_IN_PROCESS_WAIT_SECONDS = 2.0
# How long the server waits for a busy daemon (at least; hooks.query_timeout_ms if longer). A
# daemon that is down is known at once (nothing listens); one that is slow — a loaded machine,
# a big sync — is still far cheaper to wait for than this process's first search of its own,
# which loads the model (~0.6 s quiet, seconds under load).
DAEMON_WAIT_MS = 2000


class PromptHook:
    """Answers UserPromptSubmit for the Claude Code process this server belongs to."""

    def __init__(self, settings: Settings, *, marker: ServedMarker | None = None) -> None:
        self.root = settings.root
        self.environ = settings.environ
        self.layout = settings.layout  # a user cache when the checkout is read-only
        self.marker = marker if marker is not None else ServedMarker(settings.environ)
        self._service: ContextService | None = None
        self._search_lock = threading.Lock()
        self._said_left = False  # logged once that the command answers the prompts
        # The server's own warm search (mcp_server/lazy.py), asked before the daemon: no
        # socket round trip, no JSON. None from it (warming up, syncing): the daemon answers.
        self._warm: Callable[[PromptAsk], list[Note] | None] | None = None

    def use_warm(self, warm: Callable[[PromptAsk], list[Note] | None]) -> None:
        self._warm = warm

    def answer(self, prompt: str, prompt_id: str = "", session_id: str = "") -> str:
        """The hook's output (one JSON object, or "" for nothing); never raises."""
        output = run_with_deadline(
            lambda result: result.append(self._answer(prompt, prompt_id, session_id)),
            name="mcp-prompt-hook",
            seconds=deadline_seconds(DEADLINE_SECONDS[EVENT], self.environ),
        )
        if output is None:
            log(self.layout, AGENT, "WARNING", f"MCP prompt hook: no answer in time ({EVENT})")
        return output or ""

    def close(self) -> None:
        self.marker.remove()

    def _answer(self, prompt: str, prompt_id: str, session_id: str) -> str:
        try:
            # First: from now on the command handler leaves the prompts to this server.
            self.marker.ensure()
            if not (self.root / RECALL_DIRNAME).is_dir():
                return ""
            if not self.marker.serves():
                # No live private marker (another user made the directory first, no /proc):
                # the guard lets the command answer every prompt, so this server answers none.
                self._left_to_command()
                return ""
            settings = read_hook_settings(self.layout, self.environ)
            wait = max(settings.query_timeout_ms, DAEMON_WAIT_MS)
            run = HookRun(
                AGENT, EVENT, self.root, self.environ, settings._replace(query_timeout_ms=wait)
            )
            # The command handler may be answering this prompt too (the marker was new): the
            # first of the two to claim the prompt answers it.
            context = answer_prompt(
                run,
                prompt,
                self._in_process,
                session_id=interpolated(session_id),
                prompt_id=prompt_id,
                claim=lambda: self.marker.claim(prompt_id),
                warm=self._warm,
            )
            return hook_output(EVENT, context)
        except Exception:
            log(self.layout, AGENT, "WARNING", "MCP prompt hook failed", exc_info=True)
            return ""

    def _left_to_command(self) -> None:
        if not self._said_left:
            self._said_left = True
            where = self.marker.directory or "no marker on this system"
            log(
                self.layout,
                AGENT,
                "INFO",
                f"MCP prompt hook: prompts left to the command ({where})",
            )

    def _in_process(self, run: HookRun, wanted: PromptAsk) -> list[Note]:
        """No daemon answered: the command's fallback search, on a service kept warm here."""
        if not self._search_lock.acquire(timeout=_IN_PROCESS_WAIT_SECONDS):
            log(self.layout, AGENT, "WARNING", "MCP prompt hook: in-process search busy")
            return []
        try:
            if self._service is None:
                self._service = context_in_process(run)
            else:
                self._service.recall.searcher.load_memories()  # what the files hold now
            return self._service.prompt_notes(wanted)
        finally:
            self._search_lock.release()


def interpolated(value: str) -> str:
    """A `${field}` Claude Code left as it was (an older version, a field it does not know)
    is no value."""
    return "" if value.startswith("${") else value
