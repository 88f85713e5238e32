"""Safety of the write path: fuzzed input, input limits, read-only and full disks.

Nothing may raise anything but a RecallError, leave a partial file, or write outside
local-recall/."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from local_recall.errors import InvalidInput, InvalidMemoryFile, RecallError, StorageError
from local_recall.memory.format import parse_memory_text, render_memory
from local_recall.memory.model import MAX_BODY_BYTES
from local_recall.recall import Recall
from local_recall.settings import Settings
from tests.conftest import clean_env, git_init
from tests.cpu_budget import cpu_unit

MID = "3f2b8c1e-9a4d-4e5f-8a7b-1c2d3e4f5a6b"
PATH = Path(f"/r/local-recall/episodic-memory/{MID}.md")
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))

yaml_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=40)
    | st.datetimes()
    | st.dates(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=10,
)


@FUZZ
@given(st.text(max_size=2000))
def test_fuzz_arbitrary_text_parses_or_is_reported(text: str) -> None:
    try:
        parse_memory_text(text, PATH)
    except InvalidMemoryFile as exc:
        assert exc.path == PATH and exc.reason


@FUZZ
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "id",
                "subject",
                "keywords",
                "applies_to",
                "occurred_at",
                "content_hash",
                "source",
                "custom",
            ]
        )
        | st.text(max_size=10),
        yaml_values,
        max_size=9,
    ),
    st.text(max_size=300),
)
@example({"subject": [], "occurred_at": 1.5}, "0")  # found once: a fractional epoch time
def test_fuzz_frontmatter_fields(fields: dict[str, object], body: str) -> None:
    text = "---\n" + yaml.safe_dump(fields, allow_unicode=True) + "---\n" + body
    try:
        memory = parse_memory_text(text, PATH)
    except InvalidMemoryFile:
        return
    # whatever parsed must render and parse back to the same memory
    again = parse_memory_text(render_memory(memory), PATH)
    assert (again.subject, again.body, again.keywords, again.applies_to, again.occurred_at) == (
        memory.subject,
        memory.body,
        memory.keywords,
        memory.applies_to,
        memory.occurred_at,
    )


@pytest.fixture(scope="module")
def fuzz_repo(tmp_path_factory: pytest.TempPathFactory) -> Recall:
    root = git_init(tmp_path_factory.mktemp("fuzz") / "repo")
    recall = Recall.open(settings=Settings(root=root, environ=clean_env()))
    recall.init()
    return recall


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    subject=st.text(max_size=250),
    body=st.text(max_size=500),
    keywords=st.none() | st.lists(st.text(max_size=30), max_size=25),
    scope=st.sampled_from(["global", "area:x", "file:src/a.py"]) | st.text(max_size=30),
)
def test_fuzz_add_validates_or_refuses(
    fuzz_repo: Recall, subject: str, body: str, keywords: list[str] | None, scope: str
) -> None:
    try:
        result = fuzz_repo.save(subject, body, keywords=keywords, scope=scope)
    except InvalidInput:
        return
    memory = result.memory
    assert memory.path is not None and memory.path.parent == fuzz_repo.layout.episodic_dir
    assert fuzz_repo.get(memory.id).body == memory.body
    outside = [
        p
        for p in fuzz_repo.root.rglob("*")
        if ".git" not in p.parts and fuzz_repo.layout.recall_dir not in (p, *p.parents)
    ]
    assert outside == []


def test_input_limits_are_enforced_quickly(repo: Path) -> None:
    """A body at the limit costs what its size should (redaction, hashing, the index), and one
    over it, or too many keywords, is refused before any of that. CPU of this process, all
    threads, in units measured in the same test: a busy machine stretches both alike."""
    recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
    recall.add("Warm up", "a small body", keywords=["warm"])  # imports, the index's creation

    def cpu(action: Callable[[], object]) -> float:
        started = time.process_time()
        action()
        return (time.process_time() - started) / unit

    unit = cpu_unit()
    whole = cpu(lambda: recall.add("A one megabyte body", "word " * (MAX_BODY_BYTES // 5)))
    # ~20-30 units measured; a redaction that rescans what came before (quadratic): ~750
    assert whole < 300, whole

    def refused() -> None:
        with pytest.raises(InvalidInput, match="limit"):
            recall.add("Too big", "x" * (MAX_BODY_BYTES + 1))
        with pytest.raises(InvalidInput, match="keywords"):
            recall.add("Many keywords", "body", keywords=[f"k{i}" for i in range(10_000)])

    assert cpu(refused) < whole / 4, whole  # ~1/25 measured: nothing redacted or indexed
    sizes = sorted(m.path.stat().st_size for m in recall.list() if m.path is not None)
    assert len(sizes) == 2 and sizes[-1] > MAX_BODY_BYTES // 2


def _root_can_mount() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0 and sys.platform.startswith("linux")


def test_read_only_folder_gives_a_clear_error_and_writes_nothing(
    repo: Path, tmp_path: Path
) -> None:
    recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
    recall.add("Existing", "existing body", keywords=["x"])
    folder = recall.layout.recall_dir
    if _root_can_mount():  # root ignores permission bits: use a read-only bind mount
        mounted = subprocess.run(
            ["mount", "--bind", "-o", "ro", str(folder), str(folder)],
            capture_output=True,
            text=True,
        )
        assert mounted.returncode == 0, mounted.stderr
        undo = ["umount", str(folder)]
    else:
        os.chmod(folder / "episodic-memory", 0o555)
        os.chmod(folder / "state", 0o555)
        undo = ["chmod", "-R", "u+w", str(folder)]
    try:
        with pytest.raises(StorageError) as caught:
            recall.add("New", "a new body", keywords=["y"])
        assert "\n" not in str(caught.value)
        proc = subprocess.run(
            [sys.executable, "-m", "local_recall", "add", "-s", "S", "-b", "cli body"],
            cwd=repo,
            capture_output=True,
            text=True,
            env=clean_env(),
        )
        assert proc.returncode == 1
        assert proc.stderr.startswith("local-recall: error:") and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
        # reading still works on a read-only checkout
        assert [m.subject for m in recall.list()] == ["Existing"]
    finally:
        subprocess.run(undo, check=True)
    assert [m.subject for m in recall.list()] == ["Existing"]


_FILL = """
import signal, sys, resource
from local_recall import Recall
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # get EFBIG instead of being killed
recall = Recall.open(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))
try:
    recall.add("Too large for the disk", "y" * 50_000, keywords=["disk"])
except Exception as exc:
    print(type(exc).__name__, exc)
"""


def test_full_disk_gives_a_clear_error_and_no_partial_file(repo: Path) -> None:
    """A file-size limit makes the kernel refuse the write (EFBIG), as a full disk would."""
    proc = subprocess.run(
        [sys.executable, "-c", _FILL, str(repo)],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
    )
    assert proc.stdout.startswith("StorageError"), proc.stdout + proc.stderr
    folder = repo / "local-recall" / "episodic-memory"
    assert list(folder.glob("*.md")) == []
    assert [p.name for p in folder.iterdir()] == []  # the temp file was removed too
    assert resource.RLIMIT_FSIZE and signal.SIGXFSZ  # POSIX-only test


def test_errors_are_recall_errors() -> None:
    assert issubclass(StorageError, RecallError) and issubclass(InvalidInput, RecallError)
