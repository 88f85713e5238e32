"""The hooks' own deadlines: the values (literals, no stopwatch) and the setting that replaces
them, so a test waits for an event instead of racing a deadline on a busy machine.
That a hook really leaves at its deadline is tests/claude_code/test_hooks.py
(test_a_stuck_hook_gives_up_at_the_deadline), against stdin that never ends."""

from __future__ import annotations

import pytest

from local_recall.claude_code.hooks.events import DEADLINE_SECONDS
from local_recall.claude_code.install.plan import HOOKS
from local_recall.hooks.process import DEADLINE_ENV, deadline_seconds
from local_recall.repo.config import load_config


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, 8.0),
        ("1.5", 1.5),
        ("120", 120.0),
        ("0", 8.0),  # never "no time at all"
        ("-3", 8.0),
        ("nan", 8.0),
        ("inf", 8.0),
        ("soon", 8.0),  # a hook never fails on its environment
        ("", 8.0),
    ],
)
def test_the_environment_replaces_the_deadline(value: str | None, expected: float) -> None:
    environ = {} if value is None else {DEADLINE_ENV: value}
    assert deadline_seconds(8.0, environ) == expected


def test_our_deadlines_sit_inside_the_timeouts_init_gives_claude_code() -> None:
    """Claude Code cancels a hook at the timeout `init` writes; ours comes first, with room for
    the interpreter's start (outside our deadline: ~0.1 s quiet, ~1 s on a busy machine)."""
    for spec in HOOKS:
        assert DEADLINE_SECONDS[spec.event] + 2 <= spec.timeout, spec


def test_the_variable_is_not_taken_for_a_config_key() -> None:
    config = load_config(None, {DEADLINE_ENV: "30"})
    assert config.hooks == load_config(None, {}).hooks
