"""The copies redaction keeps of detect-secrets (so a save does not import it) are
what the installed detect-secrets has: its detectors' patterns, less our exclusions, and its
sequential-string filter."""

from __future__ import annotations

import string

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.filters.heuristic import is_sequential_string
from hypothesis import given
from hypothesis import strategies as st

from local_recall.redaction.ds_rules import (
    _DS_EXCLUDED,
    _DS_EXCLUDED_PATTERNS,
    _DS_KINDS,
    _DS_TABLE,
)
from local_recall.redaction.placeholders import is_sequential


def table_from_detect_secrets() -> tuple[tuple[str, int, str, int], ...]:
    """`_DS_TABLE` as the installed detect-secrets makes it (a development dependency: the
    product runs the copy and never imports the package)."""
    rows: list[tuple[str, int, str, int]] = []
    for plugin in get_mapping_from_secret_type_to_class().values():
        name = plugin.__name__
        if name in _DS_EXCLUDED:
            continue
        for index, pattern in enumerate(getattr(plugin, "denylist", ())):
            if (name, index) not in _DS_EXCLUDED_PATTERNS:
                rows.append((name, index, pattern.pattern, pattern.flags))
    return tuple(rows)


def test_the_pattern_table_is_the_installed_detect_secrets() -> None:
    assert table_from_detect_secrets() == _DS_TABLE, (
        "detect-secrets changed its detectors: review them (docs/security.md), then update "
        "_DS_TABLE in local_recall/redaction/ds_rules.py"
    )
    assert {name for name, *_ in _DS_TABLE} <= set(_DS_KINDS)


SEQUENTIAL_SAMPLES = ["abcdef", "ABCDEFGH", "0123456789", "789ABC", "XYZ=/", "3456", "abcdeg"]


@given(st.text(alphabet=string.ascii_letters + string.digits + "+/=-_", max_size=12))
def test_is_sequential_is_detect_secrets_filter(value: str) -> None:
    assert is_sequential(value) == is_sequential_string(value)


def test_is_sequential_on_sequences() -> None:
    for value in SEQUENTIAL_SAMPLES:
        assert is_sequential(value) == is_sequential_string(value), value
    assert is_sequential("abcdef") and not is_sequential("abcdeg")
