"""The repository itself: self-contained, installed from its lock, one version everywhere.

A user's clone has nothing beside it, so no committed file may name a path of the machine the
project was developed on; CI runs the README's test line, so the two must not drift apart; and
the lock must send every machine to PyPI's own files, whatever a local pip configuration says."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from pathlib import Path

from tests.conftest import REPO_ROOT

# Paths of the development machine: its shared folder beside the checkout, the checkouts.
OUTSIDE = re.compile(
    r"\.\./shared\b|(?<![\w./-])/work/|\bshared/(?:claude-code|benchmarks|models)\b"
)


def committed_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True, check=True
    ).stdout
    return [REPO_ROOT / name for name in listed.decode().split("\0") if name]


def readme_lines() -> list[str]:
    text = (REPO_ROOT / "README.md").read_text("utf-8")
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    return block.strip().splitlines()


def test_no_committed_file_names_a_path_outside_the_checkout() -> None:
    found = []
    for path in committed_files():
        if not path.is_file() or path == Path(__file__).resolve():  # deleted; this file's pattern
            continue
        try:
            text = path.read_text("utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(REPO_ROOT)}:{number}: {line.strip()[:120]}")
    assert found == []


def test_the_pattern_catches_what_it_must() -> None:
    for bad in ("../shared/claude-code/x", "default /work/shared/b", "`shared/models/m`"):
        assert OUTSIDE.search(bad), bad
    for fine in ("/home/dev/work/projA", "/tmp/lrexp/work/x", "../docs/install.md", "shared by"):
        assert not OUTSIDE.search(fine), fine


def test_ci_runs_the_readme_test_line() -> None:
    install, tests = readme_lines()
    ci = (REPO_ROOT / ".ci" / "run").read_text("utf-8")
    assert ci.startswith("#!/usr/bin/env bash\n") and "\nset -euo pipefail\n" in ci
    assert ci.rstrip().splitlines()[-1] == tests
    assert "--locked" in tests and "--locked" in install and "pytest" in tests


def test_the_uv_that_reads_the_lock_is_the_locked_uv() -> None:
    lock = tomllib.loads((REPO_ROOT / "uv.lock").read_text("utf-8"))
    (locked,) = [p["version"] for p in lock["package"] if p["name"] == "uv"]
    for line in readme_lines():
        assert f"pip install -q uv=={locked} " in line


def test_the_lock_names_only_pypi_and_its_hashes() -> None:
    lock = tomllib.loads((REPO_ROOT / "uv.lock").read_text("utf-8"))
    for package in lock["package"]:
        source = package["source"]
        if package["name"] == "local-recall":
            assert source == {"editable": "."}
            continue
        assert source == {"registry": "https://pypi.org/simple"}, package["name"]
        files = [*package.get("wheels", ()), *([package["sdist"]] if "sdist" in package else ())]
        assert files, package["name"]
        for file in files:
            assert file["url"].startswith("https://files.pythonhosted.org/"), file["url"]
            assert re.fullmatch(r"sha256:[0-9a-f]{64}", file["hash"]), file


def test_one_version_everywhere() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    init = (REPO_ROOT / "local_recall" / "__init__.py").read_text("utf-8")
    (code_version,) = re.findall(r'^__version__ = "([^"]+)"$', init, re.MULTILINE)
    plugin = json.loads((REPO_ROOT / "hooks" / ".claude-plugin" / "plugin.json").read_text())
    market = json.loads((REPO_ROOT / "hooks" / ".claude-plugin" / "marketplace.json").read_text())
    versions = {
        "pyproject.toml": project["version"],
        "local_recall/__init__.py": code_version,
        "plugin.json": plugin["version"],
        "marketplace.json": market["plugins"][0]["version"],
    }
    assert len(set(versions.values())) == 1, versions
