"""A unit of CPU time measured in the same run: a test that bounds what something
costs bounds it in these units, never in seconds. A busy or slow machine stretches the unit and
the work under test alike (two hyperthreads sharing a core both run ~2x slower), so the bound
holds wherever the code is as cheap as it should be, and still fails by orders of magnitude when
it is not (a YAML bomb expanded, a quadratic scan)."""

from __future__ import annotations

import json
import time

# Mixed Python work (dicts, strings, json): what the code under test spends its time on.
_WORK = [{"id": i, "subject": f"memory {i}", "keywords": ["a", "b", str(i)]} for i in range(400)]


def _once() -> float:
    started = time.thread_time()
    for _ in range(10):
        json.loads(json.dumps(_WORK))
    return time.thread_time() - started


def cpu_unit() -> float:
    """This thread's CPU seconds for a fixed piece of work, the least of five tries (6-11 ms
    measured on the 2-core development machine under load)."""
    return min(_once() for _ in range(5))
