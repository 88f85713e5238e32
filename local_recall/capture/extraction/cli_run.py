"""One run of a model CLI (`claude -p`, `codex exec`, `gemini -p`): the prompt on stdin, output
into files, the whole process group killed on a timeout.

stdout and stderr go to files, never pipes: a Node CLI exits before a pipe has drained its
output, so an answer past 64 KiB was cut at 65,524 bytes with exit 0 when the machine was busy.
Writes to a file are complete when it exits. stderr's end is kept: without a JSON result, that
is where a CLI says why it failed."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

MAX_OUTPUT_BYTES = 64_000_000
MAX_STDERR_BYTES = 64_000  # of stderr's end, where a CLI says why it failed


@dataclass(frozen=True, slots=True)
class Finished:
    returncode: int
    stdout: str
    stderr: str  # its last MAX_STDERR_BYTES


@dataclass(frozen=True, slots=True)
class Failed:
    """Timed out (killed) or printed too much: the attempt's failure, in words."""

    kind: Literal["transient", "permanent"]  # as prompt.AttemptFailure's
    reason: str


def run_cli(
    command: Sequence[str],
    text: str,
    *,
    cwd: Path,
    scratch: Path,
    env: Mapping[str, str],
    timeout: float,
    name: str,
) -> Finished | Failed:
    """Run `command` in `cwd` with `text` on stdin; its output goes to files in `scratch`.
    OSError when it cannot start (the caller says which program is missing)."""
    with (
        open(scratch / "stdout", "w+b") as stdout_file,
        open(scratch / "stderr", "w+b") as stderr_file,
    ):
        proc = subprocess.Popen(
            list(command),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=stdout_file,
            stderr=stderr_file,
            start_new_session=True,  # its own process group, killed as a whole
        )
        try:
            proc.communicate(text.encode("utf-8"), timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            return Failed("transient", f"{name} timed out after {timeout:g} s")
        except BaseException:
            _kill_group(proc)
            raise
        stdout_file.seek(0)
        stdout = stdout_file.read(MAX_OUTPUT_BYTES + 1)
        size = stderr_file.seek(0, os.SEEK_END)
        stderr_file.seek(max(0, size - MAX_STDERR_BYTES))
        stderr = stderr_file.read()
    if len(stdout) > MAX_OUTPUT_BYTES:
        return Failed("permanent", f"{name} printed more than {MAX_OUTPUT_BYTES} bytes")
    decode = bytes.decode
    return Finished(
        proc.returncode, decode(stdout, "utf-8", "replace"), decode(stderr, "utf-8", "replace")
    )


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.communicate(timeout=5)
