"""The written-shape header reader (local_recall/memory/plain_header.py) against PyYAML.

Whatever it accepts, it must read exactly as the safe loader does (same keys, values and types);
everything else it leaves to the loader behind the guard. The first scan at 100,000 memories
leans on it: a memory file as the renderer writes it never reaches PyYAML."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from local_recall.memory.format import parse_memory_text, render_memory
from local_recall.memory.model import Memory, content_hash
from local_recall.memory.plain_header import plain_header

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# characters that change what YAML reads: indicators, quotes, escapes, comment and value marks,
# digits and letters of numbers, dates, booleans and null, breaks YAML knows and Python's split
# does not, a BOM, control characters, a tab, non-ASCII text
TRICKY = [
    *"-?:,[]{}#&*!|>'\"%@`~=<.+_0123456789eExoTZnNyYtfFO \t\\",
    "\x85", "\u2028", "\u2029", "\ufeff", "\x00", "\x07", "\x7f", "é", "→", "\U0001f600",
    "yes", "on", "null", "true", "0x1F", "1_000", "2024-01-01", "12:30:00", ".inf", "<<",
]  # fmt: skip
# mostly words, so that many headers are in the written shape and both readers are compared
SCALAR = st.lists(st.sampled_from(["fix", "a", "B", "word", " "] * 80 + TRICKY), max_size=6).map(
    "".join
)
KEY = st.sampled_from(["id", "subject", "source", "keywords", "on", "yes", "null", "Key_1", "_x"])
SHAPES = ["key: value"] * 6 + ["key:", "- item", "- item", "- item", "  indented", "raw"]


@st.composite
def headers(draw: st.DrawFn) -> str:
    lines: list[str] = []
    for at in range(draw(st.integers(1, 6))):
        shape = draw(st.sampled_from(SHAPES))
        value = draw(SCALAR)
        quote = draw(st.sampled_from(["", "", '"', "'"]))
        if shape == "key: value":
            lines.append(f"{key(draw, at)}: {quote}{value}{quote}")
        elif shape == "key:":
            lines.append(f"{key(draw, at)}:")
        elif shape == "- item":
            lines.append(f"- {quote}{value}{quote}")
        elif shape == "  indented":
            lines.append(f"  - {value}")
        else:
            lines.append(value)
    return "\n".join(lines)


def key(draw: st.DrawFn, at: int) -> str:
    """Mostly a key of its own (a repeated key is left to the loader), sometimes the same."""
    return draw(st.sampled_from([draw(KEY), f"k{at}", f"k{at}", "subject"]))


def typed(value: Any) -> Any:
    """The value with each leaf's type beside it: True == 1 and 1.0 == 1 must not pass."""
    if isinstance(value, dict):
        return {(type(k), k): typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value), value)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(headers())
@example("subject: a: b")
@example("subject: C# and F#")
@example("subject: x #comment")
@example("keywords:\n- on\n- '1'")
@example("on: x")
@example('occurred_at: "2024-01-01T00:00:00Z"\noccurred_at: "x"')
@example("subject: 'it''s'")
@example("subject: 'a'''")
@example("subject: ''''")
@example("subject: 'a' 'b'")
@example('subject: "a\\tb"')
@example("subject: fix [the] {odd} one, twice")
def test_what_it_accepts_is_read_as_the_safe_loader_reads_it(header: str) -> None:
    fast = plain_header(header)
    if fast is None:
        return  # left to the loader behind the guard
    assert typed(yaml.load(header, Loader=_Loader)) == typed(fast)


def test_a_rendered_memory_never_reaches_pyyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    memory = Memory(
        id="00000000-0000-4000-8000-000000000001",
        subject="Use filelock for the cache (cache_12): it's C#-safe, 100% [sure]",
        body="We use filelock because concurrent writers race.\n\nSee src/cache/lock.py.",
        keywords=("cache", "filelock", "on", "1.5", "é→"),
        applies_to="file:src/cache/",
        occurred_at=datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),
        content_hash=content_hash("x"),
        source="bench",
        commit="abc1234",
        files=("src/cache/lock.py",),
    )
    text = render_memory(memory)
    path = Path(f"/repo/local-recall/episodic-memory/{memory.id}.md")
    expected = parse_memory_text(text, path)
    header = text.split("---\n")[1].rstrip("\n")
    assert plain_header(header) == yaml.load(header, Loader=_Loader)

    def no_yaml(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the written shape went through PyYAML")

    monkeypatch.setattr(yaml, "load", no_yaml)
    assert parse_memory_text(text, path) == expected


@pytest.mark.parametrize(
    "header",
    [
        "subject: x\n# a comment",
        "subject: &a x",
        "subject: !!str x",
        "subject: |\n  x",
        "keywords: [a, b]",
        "subject: x\n\nsource: y",
        "subject: 1",
        "subject: yes",
        "subject: ~",
        "occurred_at: 2024-01-01T00:00:00Z",
        "subject:\tx",
        "subject: x ",
        "- a",
        "",
    ],
)
def test_anything_else_is_left_to_the_loader(header: str) -> None:
    assert plain_header(header) is None
