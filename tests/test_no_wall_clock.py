"""No test bounds a wall-clock time by a constant: on a shared or busy machine such a
bound fails with nothing wrong, and on a fast one it hides nothing a behaviour check would not
catch. Speed lives in benchmarks/; a test checks what the time stood for instead (the hook gave
up and exited 0, the search ran once), the CPU time of the process under test against a
calibration in the same run (10x the input costs under 30x the CPU: linear measured 6.5-14x,
quadratic ~100x), or a fail-open deadline against a server that never answers. A lower bound
(it waited at least its deadline) is safe on any machine, and so is a bound from a calibration
measured in the same test (a lower-case name), so neither is flagged. docs/development.md,
*How tests treat time*.

A CPU time bounded in seconds is flagged too: two hyperthreads sharing a core each run ~2x
slower, so a busy machine stretches CPU seconds as well. A CPU bound is a ratio (the same work
at 10x the input) or in units of tests/cpu_budget.py's `cpu_unit()`, measured in the same test.
Waiting is tests/waiting.py's: comparing the clock with a deadline (an assert, a `while`) is a
poll's hang guard written by hand, and is flagged outside that module.

An ast walk of every test module: a duration is `clock() - x` (time.monotonic, perf_counter,
time.time, process_time, thread_time, tests/hook_runs.py's children_cpu_seconds), a name
assigned from one, a call of a function of the same module that returns one, or a `.seconds` /
`.cpu_seconds` attribute (tests/hook_runs.py's Ran); divided by a calibration (a lower-case
name) it is a ratio, not a duration. A duration must not be bounded from above by an expression
of literals and UPPER_CASE constants."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent

CLOCKS = frozenset(
    {"monotonic", "perf_counter", "time", "monotonic_ns", "perf_counter_ns", "time_ns"}
    | {"process_time", "thread_time", "process_time_ns", "thread_time_ns"}
)
CLOCK_FUNCTIONS = frozenset({"children_cpu_seconds"})  # tests/hook_runs.py
WALL_ATTRIBUTES = frozenset({"seconds", "cpu_seconds"})
WAITING = "waiting.py"  # the one module whose asserts may compare the clock with a deadline

# (file, function): each a wall-clock comparison that stays, and why.
ALLOWED: dict[tuple[str, str], str] = {
    # Waits for a warm-up that must NOT happen (nothing written in a folder without
    # local-recall/): there is no event to poll for, so it gives the server a fixed while.
    ("mcp_server/test_uninitialised.py", "body"): "waiting for the absence of an event",
    # Waits until the clock is a file-system tick past a folder's mtime: the condition is about
    # the clock itself (no deadline; time always gets there).
    ("memory/test_save_cost.py", "past_a_tick"): "the clock passing a file-system tick",
}


def _is_clock_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr in CLOCKS and isinstance(func.value, ast.Name) and func.value.id == "time"
    return isinstance(func, ast.Name) and func.id in (CLOCKS - {"time"}) | CLOCK_FUNCTIONS


def _has_clock_difference(node: ast.AST) -> bool:
    """A clock difference in `node`, not divided by a calibration (that makes it a ratio)."""
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Div) and not _is_constant(node.right):
            return False
        if isinstance(node.op, ast.Sub) and any(_is_clock_call(n) for n in ast.walk(node)):
            return True
    return any(_has_clock_difference(child) for child in ast.iter_child_nodes(node))


def _is_constant(node: ast.AST) -> bool:
    """Literals and UPPER_CASE names (with their attributes and items): not a calibration."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            return False
        if isinstance(sub, ast.Name) and not sub.id.isupper():
            return False
    return True


class _Scope:
    def __init__(self, tree: ast.Module) -> None:
        self.timers = {  # functions of this module that return a wall duration
            f.name
            for f in ast.walk(tree)
            if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef) and self._returns_wall(f)
        }

    @staticmethod
    def _wall_names(function: ast.AST) -> set[str]:
        names: set[str] = set()
        for node in ast.walk(function):
            if (
                isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign)
                and node.value is not None
                and _has_clock_difference(node.value)
            ):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names |= {t.id for t in targets if isinstance(t, ast.Name)}
        return names

    def _returns_wall(self, function: ast.AST) -> bool:
        names = self._wall_names(function)
        return any(
            isinstance(node, ast.Return)
            and node.value is not None
            and (
                _has_clock_difference(node.value)
                or any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node.value))
            )
            for node in ast.walk(function)
        )

    def is_wall(self, node: ast.AST, names: set[str]) -> bool:
        if _has_clock_difference(node):
            return True
        if isinstance(node, ast.Name):
            return node.id in names
        if isinstance(node, ast.Attribute):
            return node.attr in WALL_ATTRIBUTES
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return node.func.id in self.timers
        return False


def _own_nodes(function: ast.AST) -> list[ast.AST]:
    """The function's nodes, without those of the functions defined in it (they are walked
    on their own, and named as where the comparison is)."""
    nodes, todo = [], list(ast.iter_child_nodes(function))
    while todo:
        node = todo.pop()
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            nodes.append(node)
            todo.extend(ast.iter_child_nodes(node))
    return nodes


def wall_clock_bounds(source: str) -> list[tuple[int, str]]:
    """(line, enclosing function) of every comparison bounding a wall-clock duration from above
    by a constant in this module's source."""
    tree = ast.parse(source)
    scope = _Scope(tree)
    found: list[tuple[int, str]] = []
    functions = [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)]
    for function in functions:
        names = _Scope._wall_names(function)
        for node in _own_nodes(function):
            if not isinstance(node, ast.Compare):
                continue
            operands = [node.left, *node.comparators]
            for left, op, right in zip(operands, node.ops, operands[1:], strict=False):
                if isinstance(op, ast.Lt | ast.LtE):
                    small, big = left, right
                elif isinstance(op, ast.Gt | ast.GtE):
                    small, big = right, left
                else:
                    continue
                if scope.is_wall(small, names) and _is_constant(big):
                    found.append((node.lineno, function.name))
        for node in _own_nodes(function):  # a hand-written deadline: tests/waiting.py's job
            if isinstance(node, ast.Compare) and any(
                _is_clock_call(side) for side in (node.left, *node.comparators)
            ):
                found.append((node.lineno, function.name))
    return sorted(set(found))


def test_the_walk_flags_upper_bounds_by_constants_only() -> None:
    source = """
import time
LIMIT = 3

def timed(f):
    start = time.perf_counter()
    f()
    return time.perf_counter() - start

def test_flagged(ran, SMALL, deadline):
    started = time.monotonic()
    assert time.monotonic() - started < 1.0  # flagged
    elapsed = time.monotonic() - started
    assert elapsed < LIMIT + 0.5  # flagged
    assert 7.5 < elapsed < 10  # flagged
    assert 2 > elapsed  # flagged
    assert ran.seconds < 5  # flagged
    assert timed(print) <= SMALL.header_seconds + 4  # flagged
    assert time.process_time() - started < 20  # flagged
    used = children_cpu_seconds() - started
    assert used < 15  # flagged
    assert ran.cpu_seconds < 2  # flagged
    assert time.monotonic() < deadline, "timed out"  # flagged
    assert runner.poll() is None and time.monotonic() < deadline  # flagged
    while time.monotonic() < deadline:  # flagged
        pass

def test_not_flagged(ran, small, unit):
    started = time.monotonic()
    elapsed = time.monotonic() - started
    assert elapsed >= 6
    assert elapsed < 4 * small.cpu
    ceiling = Ceiling(30)
    while not ceiling.passed():
        pass
    assert ran.cpu_seconds < 3 * small
    assert ran.count < 20
    spent = (time.thread_time() - started) / unit
    assert spent < 20
    assert (time.process_time() - started) / unit < 300
"""
    flagged = [
        (number, "test_flagged")
        for number, line in enumerate(source.splitlines(), start=1)
        if line.endswith("# flagged")
    ]
    assert len(flagged) == 12
    assert wall_clock_bounds(source) == flagged


def test_no_test_bounds_wall_clock_time_by_a_constant() -> None:
    found = []
    used = set()
    for path in sorted(TESTS.rglob("*.py")):
        relative = path.relative_to(TESTS).as_posix()
        if relative in ("test_no_wall_clock.py", WAITING):
            continue
        for line, function in wall_clock_bounds(path.read_text(encoding="utf-8")):
            if (relative, function) in ALLOWED:
                used.add((relative, function))
                continue
            found.append(f"tests/{relative}:{line} ({function})")
    assert found == [], "a wall-clock time bounded by a constant (see this module's docstring)"
    assert used == set(ALLOWED), "an allowed exception is gone: remove it from ALLOWED"
