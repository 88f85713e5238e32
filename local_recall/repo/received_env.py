"""Environment variables another process sent over the daemon's socket (a hook's settings
variables, a session's Claude Code variables), checked before the daemon uses any. Pure.

A real environment cannot hold a NUL byte (execve ends a string there), so a mapping with one
is forged and refused whole, like one of the wrong shape or size."""

from collections.abc import Callable, Mapping

MAX_VARIABLES = 200


def checked_variables(
    value: object, wanted: Callable[[str], bool], max_chars: int
) -> dict[str, str] | None:
    """The `wanted` names of `value` with their values; None unless `value` maps at most
    MAX_VARIABLES strings to strings of at most `max_chars`, none holding a NUL."""
    if not isinstance(value, Mapping) or len(value) > MAX_VARIABLES:
        return None
    found = {}
    for name, text in value.items():
        if not isinstance(name, str) or not isinstance(text, str) or len(text) > max_chars:
            return None
        if "\0" in name or "\0" in text:
            return None
        if wanted(name):
            found[name] = text
    return found
