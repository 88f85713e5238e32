"""`local-recall` runs forked from one warmed process (tests/safety/: the crash and hostile
repository tests): each run is its own OS process, without the interpreter start and imports."""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

# One process imports the CLI once, then forks a fresh `local-recall <args>` run per line of its
# stdin (JSON: args, stdout file, stderr file), printing the run's pid and then how it ended.
# Python start-up and the CLI's imports (~1-2.5 s a run under load, before any work) were most of
# what these tests paid per run; each run is still its own OS process, with its own stdin, stdout
# and stderr, that opens the store and the index itself and goes through `local_recall.__main__`
# as `python -m local_recall` does, and exits the same way (SystemExit, atexit). LanceDB is not
# imported before the fork: its background event-loop thread would not survive it (lancedb's fork
# support is experimental), so every run imports and starts it itself. The only other thread at
# fork time is numpy's BLAS pool, which handles fork (tests/cli/test_cli.py's writers do the same).
_CLI_FORKS = """
import json, os, sys
from local_recall.__main__ import main
import local_recall.cli.main
from local_recall.memory.keywords import extract_keywords
from local_recall.redaction.secrets import redact_fields
redact_fields(["warm up"]), extract_keywords("warm up")  # pure: imports and compiled rules
for line in sys.stdin:
    args, out, err = json.loads(line)
    pid = os.fork()
    if pid == 0:
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, out, os.O_WRONLY | os.O_CREAT),
                                (2, err, os.O_WRONLY | os.O_CREAT)):
            os.dup2(os.open(path, flags, 0o600), fd)
        sys.argv = ["local-recall", *args]
        sys.exit(main(args))
    print(pid, flush=True)
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
"""


@dataclass
class ForkedRun:
    pid: int
    out: Path
    err: Path
    returncode: int | None = None

    @property
    def stdout(self) -> str:
        return self.out.read_text("utf-8")

    @property
    def stderr(self) -> str:
        return self.err.read_text("utf-8")


class CliForks:
    """`local-recall` runs, one at a time, each forked from a process that imported the CLI."""

    def __init__(self, folder: Path, env: Mapping[str, str], cwd: Path | None = None) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.server = subprocess.Popen(
            [sys.executable, "-c", _CLI_FORKS],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.runs = 0

    def _read(self) -> None:
        assert self.server.stdout is not None
        for line in self.server.stdout:
            self.lines.put(line.strip())
        self.lines.put("")  # the server ended

    def _line(self, timeout: float | None) -> str:
        line = self.lines.get(timeout=timeout)
        assert line, f"the fork server ended: {self.server.communicate()[1]}"
        return line

    def start(self, *args: str) -> ForkedRun:
        """`local-recall <args>`, in the server's folder and environment."""
        assert self.server.stdin is not None
        self.runs += 1
        out, err = self.folder / f"{self.runs}.out", self.folder / f"{self.runs}.err"
        request = [list(args), str(out), str(err)]
        self.server.stdin.write(json.dumps(request) + "\n")
        self.server.stdin.flush()
        return ForkedRun(int(self._line(120)), out, err)

    def poll(self, run: ForkedRun) -> int | None:
        if run.returncode is None:
            with contextlib.suppress(queue.Empty):
                run.returncode = int(self._line(0))
        return run.returncode

    def wait(self, run: ForkedRun, timeout: float = 120) -> int:
        if run.returncode is None:
            run.returncode = int(self._line(timeout))
        return run.returncode

    def run(self, *args: str, timeout: float = 120) -> ForkedRun:
        run = self.start(*args)
        self.wait(run, timeout)
        return run

    def close(self) -> None:
        assert self.server.stdin is not None and self.server.stderr is not None
        self.server.stdin.close()  # the server's loop ends
        try:
            self.server.wait(timeout=30)
        finally:
            if self.server.poll() is None:
                self.server.kill()
        err = self.server.stderr.read()
        assert self.server.returncode == 0 and "Traceback" not in err, err
