"""Which environment variables decide where and how `claude -p` reaches a model, so that the
daemon extracts with the user's latest session's, not with the first session's that happened
to start it: the API address and keys, Bedrock/Vertex settings, proxies and CA
certificates, and `CLAUDE_CONFIG_DIR` (where a login's credentials live). Only the variables
Claude Code itself reads are taken from a session; their values are never logged or written —
a fingerprint (a short digest per variable) says which differ. Pure, but for the holder the
daemon keeps (`LatestSession`).

Docs: docs.anthropic.com/en/docs/claude-code/settings#environment-variables.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from local_recall.repo.received_env import checked_variables

PREFIXES = ("ANTHROPIC_", "CLAUDE_CODE_", "AWS_", "VERTEX_REGION_")
NAMES = frozenset(
    {
        "CLAUDE_CONFIG_DIR",
        "CLOUD_ML_REGION",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_CLOUD_PROJECT",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "NODE_EXTRA_CA_CERTS",
        "API_TIMEOUT_MS",
        "MAX_THINKING_TOKENS",
        "DISABLE_TELEMETRY",
        "DISABLE_ERROR_REPORTING",
        "DISABLE_AUTOUPDATER",
        "DISABLE_NON_ESSENTIAL_MODEL_CALLS",
    }
)
# Set by Claude Code for one session or for its own child processes: never carried over.
SESSION_ONLY = frozenset({"CLAUDE_CODE_SESSION_ID", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_PROJECT_DIR"})
MAX_VALUE_CHARS = 32_768


def is_claude_variable(name: str) -> bool:
    return name not in SESSION_ONLY and (name in NAMES or name.startswith(PREFIXES))


def claude_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables of `environ` Claude Code reads (what a hook sends the daemon)."""
    return {k: v for k, v in environ.items() if is_claude_variable(k)}


def session_environment(value: object) -> dict[str, str] | None:
    """A session's variables as the daemon received them, checked: names Claude Code reads,
    string values of bounded size; None when it is not such a mapping."""
    return checked_variables(value, is_claude_variable, MAX_VALUE_CHARS)


def overlay(base: Mapping[str, str], session: Mapping[str, str] | None) -> dict[str, str]:
    """`base` (the daemon's own environment) with the session's Claude Code variables in place
    of its own: one the session does not set is unset, as it was in that session."""
    if session is None:
        return dict(base)
    kept = {k: v for k, v in base.items() if not is_claude_variable(k)}
    return {**kept, **session}


def fingerprint(environ: Mapping[str, str]) -> dict[str, str]:
    """Name -> a short digest of its value, for the Claude Code variables only: enough to say
    which differ between two environments, nothing to recover a value from."""
    import hashlib  # here: a hook imports this module to send its variables

    return {
        name: hashlib.sha256(f"{name}={value}".encode("utf-8", "surrogateescape")).hexdigest()[:12]
        for name, value in sorted(claude_environment(environ).items())
    }


def differences(ours: Mapping[str, str], theirs: Mapping[str, str]) -> list[str]:
    """The variable names whose fingerprints differ (set in one only, or to other values)."""
    return sorted(name for name in set(ours) | set(theirs) if ours.get(name) != theirs.get(name))


class LatestSession:
    """The daemon's record of the latest session's Claude Code variables (thread-safe: the
    socket's threads receive them, the main loop extracts with them)."""

    def __init__(self, base: Mapping[str, str]) -> None:
        self._base = dict(base)  # the daemon's own environment
        self._env: dict[str, str] | None = None
        self._changed = False
        self._lock = threading.Lock()

    def receive(self, env: dict[str, str], session: str, at: str) -> dict[str, Any] | None:
        """Take a session's variables; when they differ from the last ones, what to record in
        the status file (names and digests, never values), else None."""
        with self._lock:
            if env == self._env:
                return None
            self._env, self._changed = env, True
        ours, theirs = fingerprint(self._base), fingerprint(env)
        return {
            "from": f"session {session}" if session else "a session",
            "at": at,
            "variables": theirs,
            "differs_from_daemon": differences(ours, theirs),
        }

    def environ(self) -> dict[str, str]:
        """What extraction runs with: the daemon's environment, the session's variables."""
        with self._lock:
            return overlay(self._base, self._env)

    def take_change(self) -> bool:
        """Whether the variables changed since last asked (failures may be retried now)."""
        with self._lock:
            changed, self._changed = self._changed, False
            return changed
