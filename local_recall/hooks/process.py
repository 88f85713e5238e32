"""A hook process for any agent: the work runs in a thread the process does not wait for past
its deadline; the output is written in one piece; the process ends with status 0 whatever
happened (fail open: a hook never breaks or stalls the agent's session)."""

import contextlib
import math
import os
import threading
from collections.abc import Callable, Mapping
from typing import NoReturn

# Replaces every hook's own deadline (and the MCP prompt tool's): a test waits for the event
# instead of a stopwatch, a very slow machine can give its hooks longer. Not a config key: a
# committed config may not decide how long a teammate's prompt waits.
DEADLINE_ENV = "LOCAL_RECALL_HOOK_DEADLINE_SECONDS"


def deadline_seconds(default: float, environ: Mapping[str, str]) -> float:
    """`default`, or the positive number of seconds $LOCAL_RECALL_HOOK_DEADLINE_SECONDS gives
    (anything else in it is ignored: a hook never fails on its environment)."""
    try:
        seconds = float(environ.get(DEADLINE_ENV, ""))
    except ValueError:
        return default
    return seconds if math.isfinite(seconds) and seconds > 0 else default


def run_with_deadline(
    work: Callable[[list[str]], None], *, name: str, seconds: float
) -> str | None:
    """What `work` appended to its list (its output, or "" for none), or None when it was still
    running after `seconds` (it may be stuck in native code: nobody waits for it). Nothing
    `work` raises gets out: not even onto stderr, which is a protocol channel for hooks."""
    result: list[str] = []

    def target() -> None:
        with contextlib.suppress(BaseException):
            work(result)

    worker = threading.Thread(target=target, name=name, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        return None
    return result[0] if result else ""


def exit_with(output: str) -> NoReturn:
    """Write `output` to stdout in one piece and end the process with status 0. Nothing is left
    to flush (stdout is written with os.write, the log handler flushes every record), so the
    interpreter's teardown is skipped: a few ms of module clean-up on every prompt, and ~1 s of
    stopping lancedb's and onnxruntime's threads after the fallback."""
    if output:
        write_all(output.encode("utf-8"))
    os._exit(0)


def write_all(data: bytes) -> None:
    """One complete write of the whole output (never half a JSON object)."""
    try:
        view = memoryview(data)
        while view:
            written = os.write(1, view)
            view = view[written:]
    except OSError:
        pass  # the agent stopped listening: nothing more to do
