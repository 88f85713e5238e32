"""The YAML guard in front of every memory file's frontmatter (local_recall/memory/yaml_guard.py).

What is pinned here is behaviour, whatever PyYAML release parses the header: a hostile header is
refused (FrontmatterRefused) with a one-line reason, quickly; the file is reported by its path
and every other memory is still read. Which exception class the parser raises inside the guard
is not part of it (PyYAML 6.0.4's scanner started refusing deep nesting itself, before the
guard's own depth check, and turned main red for one error class)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from local_recall.memory import yaml_guard
from local_recall.memory.yaml_guard import FrontmatterRefused, load_frontmatter, yaml_error_reason
from local_recall.recall import Recall
from local_recall.settings import Settings
from tests.conftest import clean_env, git_init
from tests.cpu_budget import cpu_unit

BOMB = "\n".join(
    [
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        *(f"{x}: &{x} [{','.join([f'*{p}'] * 9)}]" for p, x in zip("abcdefgh", "bcdefghi")),
    ]
)
assert len(BOMB) < 400  # ~385 bytes that expand to 9**9 strings

# header -> the guard's own reason, or None where the parser may refuse first (any reason)
HOSTILE: dict[str, tuple[str, str | None]] = {
    "alias bomb": (BOMB, "expands to more than"),
    "30,000 open brackets": ("k: " + "[" * 30_000 + "]" * 30_000, None),  # libyaml segfaults
    "600 open brackets": ("k: " + "[" * 600 + "]" * 600, None),
    "40-deep block sequence": ("- " * 40 + "x", None),
    "!!set": ("k: !!set {a}", "tag:yaml.org,2002:set"),
    "!!binary": ("k: !!binary aGk=", "binary"),
    "!!python": ("k: !!python/name:os.system", "python/name"),
    "local tag": ("k: !local 1", "'!local'"),
    "alias before its anchor ends": ("a: &a [*a]", "names no anchor"),
    "5,000-digit integer": (f"k: 1{'0' * 5000}", "cannot be read"),
    "syntax error behind an anchor": ("k: &a [unclosed\nz: 1", None),
    "too large": ("k: " + "x" * 100_001, "larger than"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_header_is_refused_quickly_with_one_line(name: str) -> None:
    header, own_reason = HOSTILE[name]
    unit = cpu_unit()
    started = time.thread_time()  # CPU, in units measured now: load stretches both alike
    with pytest.raises(FrontmatterRefused) as refused:
        load_frontmatter(header)
    spent = (time.thread_time() - started) / unit
    assert spent < 20, (name, spent)  # at most 0.3 units measured; a bomb expanded: hundreds
    reason = str(refused.value)
    assert reason.startswith("frontmatter ") and "\n" not in reason and len(reason) < 300, reason
    if own_reason is not None:
        assert own_reason in reason


@pytest.mark.parametrize(
    "error",
    [
        yaml.YAMLError("a limit some future release adds\nwith a second line"),
        yaml.scanner.ScannerError(
            "while increasing flow level",
            None,
            "exceeded maximum nesting depth",
            yaml.Mark("<unicode string>", 1002, 0, 1002, None, None),
        ),
        yaml.parser.ParserError("while parsing a block mapping", None, "expected <block end>"),
    ],
    ids=["bare YAMLError", "ScannerError with a mark", "ParserError without a mark"],
)
def test_any_parser_error_during_the_walk_is_a_refusal(
    error: yaml.YAMLError, monkeypatch: pytest.MonkeyPatch
) -> None:
    def parse(header: str, Loader: object) -> Iterator[yaml.Event]:
        yield yaml.StreamStartEvent()
        yield yaml.DocumentStartEvent()
        raise error

    monkeypatch.setattr(yaml_guard.yaml, "parse", parse)
    with pytest.raises(FrontmatterRefused, match=r"^frontmatter cannot be parsed: \S") as refused:
        load_frontmatter("k: &a 1")  # an anchor: the header is walked
    assert "\n" not in str(refused.value)


def test_yaml_error_reason_is_one_line_with_the_place() -> None:
    with pytest.raises(yaml.YAMLError) as raised:
        yaml.safe_load("k: [unclosed\nz: 1")
    reason = yaml_error_reason(raised.value)
    assert "\n" not in reason and "line 2" in reason and "expected" in reason
    assert yaml_error_reason(yaml.YAMLError()) == "YAMLError"


def test_plain_yaml_still_loads() -> None:
    header = "subject: s\nkeywords: [a, b]\nx: &x 1\ny: *x\nz: !!str 5\nw: 2025-01-01"
    loaded = load_frontmatter(header)
    assert loaded["keywords"] == ["a", "b"] and loaded["y"] == 1 and loaded["z"] == "5"
    nested = load_frontmatter("k: " + "[" * 20 + "]" * 20)["k"]  # the deepest allowed
    for _ in range(19):
        (nested,) = nested
    assert nested == []


def test_hostile_files_are_reported_by_path_and_the_rest_is_read(tmp_path: Path) -> None:
    root = git_init(tmp_path / "repo")
    recall = Recall.open(settings=Settings(root=root, environ=clean_env()))
    recall.init()
    good = recall.add("Run the tests with make check", "make check sets the seed.").id
    episodic = recall.layout.episodic_dir
    planted = {}
    for number, (name, (header, _)) in enumerate(HOSTILE.items(), start=1):
        path = episodic / f"33333333-3333-4333-8333-{number:012d}.md"
        path.write_text(f"---\n{header}\nsubject: {name}\noccurred_at: 2025-01-01\n---\nbody\n")
        planted[path] = path.read_bytes()

    unit = cpu_unit()
    started = time.thread_time()  # CPU, in units measured now: load stretches both alike
    listed = recall.list()
    problems = {problem.path: problem.reason for problem in recall.problems()}
    spent = (time.thread_time() - started) / unit
    assert spent < 100, spent  # ~2 units measured; one bomb expanded: hundreds

    assert [memory.id for memory in listed] == [good]
    assert set(problems) == set(planted)
    for path, reason in problems.items():
        assert reason.startswith("frontmatter ") and "\n" not in reason, (path.name, reason)
        assert path.read_bytes() == planted[path]  # reported, never rewritten or deleted
