"""The prompt hook's two handlers, and how a session passes from one to the other.

UserPromptSubmit runs two handlers side by side (docs/hooks.md#two-handlers-one-answer): a
command (the guard of guard.py, then `local-recall hook user-prompt-submit`: a new Python
process, ~100 ms, that answers any prompt) and an `mcp_tool` call of the session's own MCP server
(its hidden tool `user_prompt_submit`: a warm process, a few ms). Claude Code skips the second
while the server is not connected: during start-up, and for the first prompt of `claude -p`,
which does not wait for MCP servers.

Once asked for a prompt, the server writes the marker (`ServedMarker`) and the guard stops the
command before Python starts. The marker's `live` names something only the running server holds:
`/proc/<pid>/fd/<n>/<token>`, where `<n>` is the server's open handle on the marker directory and
`<token>` a file of random name in it. A server that dies leaves a dangling link and the command
answers again — even once its pid is reused, which `/proc/<pid>` alone would have taken for a
live server and kept the command silent for good. A marker directory that is
someone else's (another local user can make `/tmp/local-recall-mcp-<pid>` first) or cannot be
made leaves the command answering every prompt, and the server then answers none: it answers
only while it holds a live private marker, so a prompt is never answered twice.

The prompt on which the server takes over reaches both handlers (and every prompt would, were
the guard to fail). Each claims the prompt's `prompt_id` in the marker directory (an O_EXCL
file) before answering, and only the first answers: the server for every prompt it answers, the
command only when the directory exists (it never makes it: that would be a marker without a
server). A command that runs although the marker was live well before it started means the guard
failed — each prompt then pays a Python start — and says so in recall.log (`guard_missed`).

Linux only (`/proc/<pid>`): elsewhere no marker is written and the command answers every prompt.
Light (os and re only): the prompt hook imports this.
"""

import contextlib
import os
import re
import time
from collections.abc import Mapping
from pathlib import Path

from local_recall.claude_code.hooks.guard import LIVE, MARKER_PREFIX, marker_dir
from local_recall.repo.files import is_private_dir

_PROMPT_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
_STALE_SECONDS = 60.0  # a directory without a live server is left this long (a server starting)
_PRUNE_EVERY = 200  # claims by a server; then those older than _STALE_SECONDS are removed


def claim(directory: Path | None, prompt_id: str) -> bool:
    """Whether this handler answers the prompt: the first to claim its id does. True without
    a directory of ours (no server took over: nobody else answers) or a usable id."""
    if directory is None or not _PROMPT_ID.fullmatch(prompt_id) or not is_private_dir(directory):
        return True
    flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        os.close(os.open(directory / prompt_id, flags, 0o600))
    except FileExistsError:
        return False
    except OSError:
        return True
    return True


def claim_as_command(directory: Path | None, prompt_id: str) -> bool:
    """The command's `claim`. With no marker directory yet it makes one (0700, no `live` in
    it, so the guard still lets every command through; a server that connects adopts it):
    a server that connected while this command searched — a `claude -p` whose server came up
    in time — then finds this claim and stays silent, instead of answering the prompt twice."""
    if directory is not None and _PROMPT_ID.fullmatch(prompt_id):
        with contextlib.suppress(OSError):
            directory.mkdir(mode=0o700)
    return claim(directory, prompt_id)


def guard_missed(directory: Path | None, started: float) -> bool:
    """Whether a command started at `started` (epoch seconds) should have been stopped by the
    guard: the marker was live a second before that (not made during this very prompt)."""
    if directory is None:
        return False
    live = directory / LIVE
    try:
        made = os.lstat(live).st_mtime
    except OSError:
        return False
    return made < started - 1.0 and os.path.exists(live) and is_private_dir(directory)


class ServedMarker:
    """The MCP server's side: marks Claude Code (its parent process) as served."""

    def __init__(
        self, environ: Mapping[str, str], *, claude_pid: int | None = None, pid: int | None = None
    ) -> None:
        # `pid`: whose /proc the link names. Only this process holds the handle the link goes
        # through, so another pid stands for a server that died and whose pid was reused.
        self.pid = os.getpid() if pid is None else pid
        parent = os.getppid() if claude_pid is None else claude_pid
        usable = os.path.isdir(f"/proc/{self.pid}") and parent > 1  # Linux, and a parent to mark
        self.directory = marker_dir(environ, parent) if usable else None
        self.target: str | None = None  # what `live` says while this server holds the marker
        self._handle: int | None = None  # an open descriptor on the marker directory
        self._pruned = False
        self._claims = 0

    def ensure(self) -> bool:
        """Make the marker say this server serves the prompts; True when it already did, False
        when it had to be made (the command may be running for this prompt too) or cannot be."""
        directory = self.directory
        if directory is None:
            return False
        if self.serves():
            return True
        if not self._pruned:
            self._pruned = True
            prune_stale(directory.parent, keep=directory)
        try:
            directory.mkdir(mode=0o700)
        except FileExistsError:
            pass
        except OSError:
            return False
        if not is_private_dir(directory) or not self._hold(directory):
            return False
        assert self.target is not None
        temporary = directory / f".{LIVE}-{os.getpid()}"
        try:
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()
            os.symlink(self.target, temporary)
            os.replace(temporary, directory / LIVE)
        except OSError:
            return False
        return False

    def serves(self) -> bool:
        """Whether this server holds a live private marker: its link, leading to its token, in
        a directory of ours. Only then does it answer prompts (see the module's docstring)."""
        directory = self.directory
        if directory is None or self.target is None:
            return False
        live = directory / LIVE
        try:
            if os.readlink(live) != self.target:
                return False
        except OSError:
            return False
        return os.path.exists(live) and is_private_dir(directory)

    def _hold(self, directory: Path) -> bool:
        """Open (or keep) a handle on `directory` and a token in it; sets `target`."""
        try:
            info = os.lstat(directory)
            if self._handle is not None and self.target is not None:
                held = os.fstat(self._handle)
                token = self.target.rsplit("/", 1)[1]
                if (held.st_dev, held.st_ino) == (info.st_dev, info.st_ino) and os.path.lexists(
                    directory / token
                ):
                    return True
            self._release()
            flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
            self._handle = os.open(directory, flags)
            token = f".server-{os.urandom(8).hex()}"
            create = os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0)
            os.close(os.open(token, create, 0o600, dir_fd=self._handle))
        except OSError:
            self._release()
            return False
        self.target = f"/proc/{self.pid}/fd/{self._handle}/{token}"
        return True

    def _release(self) -> None:
        if self._handle is not None:
            with contextlib.suppress(OSError):
                os.close(self._handle)
        self._handle = None
        self.target = None

    def claim(self, prompt_id: str) -> bool:
        """`claim` in this server's marker directory; old claims are cleared now and then."""
        self._claims += 1
        if self._claims % _PRUNE_EVERY == 0 and self.directory is not None:
            _remove_old_claims(self.directory)
        return claim(self.directory, prompt_id)

    def remove(self) -> None:
        """At exit: the marker and its claims go, unless another server took it over."""
        directory, target = self.directory, self.target
        self._release()
        if directory is None or target is None or not is_private_dir(directory):
            return
        with contextlib.suppress(OSError):
            if os.readlink(directory / LIVE) != target:
                return
        _remove_tree(directory)


def prune_stale(base: Path, *, keep: Path | None = None, now: float | None = None) -> int:
    """Remove our marker directories under `base` whose server is gone (dangling or no `live`,
    untouched for a minute): a server killed with SIGKILL cannot clean up. Returns how many."""
    moment = time.time() if now is None else now
    removed = 0
    try:
        entries = list(os.scandir(base))
    except OSError:
        return 0
    for entry in entries:
        if not entry.name.startswith(MARKER_PREFIX) or Path(entry.path) == keep:
            continue
        path = Path(entry.path)
        try:
            alive = os.path.exists(path / LIVE)
            recent = moment - os.lstat(path).st_mtime < _STALE_SECONDS
        except OSError:
            continue
        if alive or recent or not is_private_dir(path):
            continue
        _remove_tree(path)
        removed += 1
    return removed


def _remove_old_claims(directory: Path) -> None:
    moment = time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            if entry.name == LIVE or not _PROMPT_ID.fullmatch(entry.name):
                continue
            with contextlib.suppress(OSError):
                if moment - entry.stat(follow_symlinks=False).st_mtime > _STALE_SECONDS:
                    os.unlink(entry.path)


def _remove_tree(directory: Path) -> None:
    import shutil  # not on the prompt hook's path

    shutil.rmtree(directory, ignore_errors=True)
