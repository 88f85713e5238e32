"""Hand-written memories are first-class — `new` and `edit ID` open $EDITOR
on a memory file; a misnamed or incomplete file is reported by `list`/`search` in one line and
made a memory by `doctor --fix`, nothing lost."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.conftest import CliRunner

MEMORIES = Path("local-recall") / "episodic-memory"

# An "editor": replaces the subject and body placeholders of the file it is given (argv[1]),
# the way a person would, and leaves every other line as it was.
EDITOR = """
import sys, pathlib
path = pathlib.Path(sys.argv[1])
text = path.read_text()
lines = text.split("\\n")
out, in_body = [], False
for n, line in enumerate(lines):
    if line.startswith("subject:"):
        line = "subject: Timed serializer signs with a timestamp"
    if line.startswith("applies_to:"):
        line = "applies_to: file:src/itsdangerous/timed.py"
    out.append(line)
closing = [i for i, line in enumerate(out) if line == "---"][1]
out = out[: closing + 1] + ["", "TimestampSigner appends the time; loads(max_age=...) checks it."]
path.write_text("\\n".join(out) + "\\n")
"""


def editor(tmp_path: Path, script: str = EDITOR) -> dict[str, str]:
    path = tmp_path / "editor.py"
    path.write_text(script)
    return {"EDITOR": f"{sys.executable} {path}", "VISUAL": ""}


def test_new_opens_the_editor_on_a_memory_file_and_adds_it(
    cli: CliRunner, repo: Path, tmp_path: Path
) -> None:
    made = cli("new", env=editor(tmp_path))
    assert made.returncode == 0, made.stderr
    memory_id = made.stdout.strip()
    shown = json.loads(cli("show", memory_id, "--json").stdout)
    assert shown["subject"] == "Timed serializer signs with a timestamp"
    assert shown["applies_to"] == "file:src/itsdangerous/timed.py"
    assert "loads(max_age=...)" in shown["body"]
    assert shown["keywords"]  # extracted, as for `add`
    assert shown["unreviewed"] is False and shown["source"] == "cli"
    # quitting without a change saves nothing
    unchanged = cli("new", env=editor(tmp_path, "pass"))
    assert unchanged.returncode != 0 and "unchanged" in unchanged.stderr
    assert len(list((repo / MEMORIES).glob("*.md"))) == 1


def test_new_keeps_a_draft_that_does_not_parse(cli: CliRunner, repo: Path, tmp_path: Path) -> None:
    broken = (
        "import sys, pathlib\npathlib.Path(sys.argv[1]).write_text('---\\nsubject: [\\n---\\nx\\n')"
    )
    made = cli("new", env=editor(tmp_path, broken))
    assert made.returncode != 0
    line = made.stderr.strip()
    assert "\n" not in line and "not saved" in line and "--from" in line
    kept = Path(line.rsplit("--from ", 1)[1].rstrip("`)"))
    assert kept.read_text().startswith("---\nsubject: [")
    again = cli("new", "--from", str(kept), env=editor(tmp_path))
    assert again.returncode == 0, again.stderr


# An "editor" that writes a body and leaves the template's subject line as it was.
BODY_ONLY = """
import sys, pathlib
path = pathlib.Path(sys.argv[1])
head, _, _ = path.read_text().rpartition("---\\n")
path.write_text(head + "---\\n\\nTimestampSigner appends the time.\\n")
"""


def test_new_refuses_the_placeholder_subject_with_its_message(
    cli: CliRunner, repo: Path, tmp_path: Path
) -> None:
    """The template is valid YAML, so a subject left as it was gets the documented
    message (docs/first-week.md), not a YAML error."""
    made = cli("new", env=editor(tmp_path, BODY_ONLY))
    assert made.returncode != 0
    assert "the subject or body is still the placeholder" in made.stderr, made.stderr
    assert "\n" not in made.stderr.strip() and "--from" in made.stderr
    assert not list((repo / MEMORIES).glob("*.md"))


def test_edit_without_options_opens_the_editor(cli: CliRunner, tmp_path: Path) -> None:
    added = cli("add", "-s", "Old subject", "-b", "Old body.", "--scope", "area:signing")
    memory_id = added.stdout.strip()
    edited = cli("edit", memory_id[:8], env=editor(tmp_path))
    assert edited.returncode == 0, edited.stderr
    shown = json.loads(cli("show", memory_id, "--json").stdout)
    assert shown["subject"] == "Timed serializer signs with a timestamp"
    assert shown["applies_to"] == "file:src/itsdangerous/timed.py"
    assert shown["body"].startswith("TimestampSigner appends")


HAND_WRITTEN = """---
subject: Timed serializer signs with a timestamp
keywords: [itsdangerous, max_age]
applies_to: global
occurred_at: 2026-11-01T10:00:00Z
owner: ana   # a person's own key: kept
---

TimestampSigner appends the time; `loads(max_age=...)` refuses older signatures.
"""

NO_DATE = """---
# written by hand, no date
subject: Keys rotate
---

# Key rotation

`Signer` takes a list of keys: the last signs, all of them verify.
"""


def test_misnamed_and_incomplete_files_are_reported_then_fixed(cli: CliRunner, repo: Path) -> None:
    folder = repo / MEMORIES
    (folder / "timed-serializer.md").write_text(HAND_WRITTEN)
    (folder / "rotation.md").write_text(NO_DATE)
    (folder / "notes.md").write_text("# Release checklist\n\nBump the version in two places.\n")
    broken = folder / "broken.md"
    broken.write_text("---\nsubject: [\n---\nbody\n")
    listed = cli("list")
    assert listed.returncode == 0 and listed.stdout == ""
    skipped = [line for line in listed.stderr.splitlines() if "skipped" in line]
    assert len(skipped) == 1 and "4 memory files" in skipped[0]
    assert "doctor --fix" in skipped[0]
    found = cli("search", "timestamp signatures", "--mode", "text")
    assert "doctor --fix" in found.stderr
    assert "doctor --fix" in cli("doctor").stdout

    fixed = cli("doctor", "--fix")
    assert "[ok  ] fixed:" in fixed.stdout and "broken.md: not fixed" in fixed.stdout
    names = sorted(p.name for p in folder.glob("*.md"))
    assert "timed-serializer.md" not in names and "notes.md" not in names
    assert "broken.md" in names  # left as it was
    assert broken.read_text() == "---\nsubject: [\n---\nbody\n"
    memories = {m["subject"]: m for m in json.loads(cli("list", "--json").stdout)}
    assert set(memories) == {
        "Timed serializer signs with a timestamp",
        "Keys rotate",
        "Release checklist",
    }
    timed = memories["Timed serializer signs with a timestamp"]
    text = Path(timed["path"]).read_text()
    assert "owner: ana   # a person's own key: kept" in text  # byte for byte, comment too
    assert text.endswith(HAND_WRITTEN.split("---\n", 2)[2])
    assert "# written by hand, no date" in Path(memories["Keys rotate"]["path"]).read_text()
    assert memories["Release checklist"]["occurred_at"]
    one = cli("list")
    assert [line for line in one.stderr.splitlines() if "skipped" in line] == [
        line for line in one.stderr.splitlines() if "broken.md" in line
    ]
