"""`doctor --fix` adopts only what is a memory: a README or index of the folder is
left alone, a file whose text a memory holds is a copy, and `<id> 2.md`-style copies (Finder,
Dropbox, Syncthing) are refused with a report line instead of becoming a second live memory.
The decisions with literals, then `doctor --fix` on a real repository."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from local_recall.memory.repair import Repair, Unfixable, not_a_memory, plan_repair
from tests.conftest import CliRunner

MEMORIES = Path("local-recall") / "episodic-memory"
ID = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"
WHEN = datetime(2026, 1, 2, tzinfo=UTC)
NOTE = "# Release checklist\n\nBump the version in two places.\n"


def plan(name: str, text: str = NOTE, held: dict[str, str] | None = None) -> Repair | Unfixable:
    return plan_repair(
        Path("/m") / name, text, modified=WHEN, taken=(), new_id=lambda: ID, held=held
    )


def test_folder_notes_are_not_memories() -> None:
    for name in ("README.md", "readme.md", "Index.md", "_index.md", "TOC.md"):
        reason = not_a_memory(name)
        assert reason is not None and reason.startswith("left alone"), name
        assert isinstance(plan(name), Unfixable)
    assert not_a_memory("release-notes.md") is None
    assert not_a_memory("readme-for-deploys.md") is None  # a note that merely says readme


def test_copies_of_a_memory_by_name_are_refused_with_what_to_do() -> None:
    for name, kind in (
        (f"{ID} 2.md", "a copy"),
        (f"{ID} copy.md", "a copy"),
        (f"{ID} (conflicted copy 2026-01-02).md", "a sync conflict copy"),
        (f"{ID}.sync-conflict-20260102-101010-ABCDEFG.md", "a sync conflict copy"),
        (f"{ID.upper()}~.md", "a copy"),
    ):
        reason = not_a_memory(name)
        assert reason is not None and reason.startswith(f"not fixed: {kind} of memory {ID}"), name
        assert "rename this file to adopt it" in reason
        assert isinstance(plan(name), Unfixable)
    # other spellings of one id are not copies: they are handled (or refused) by id
    assert not_a_memory(f"{ID.upper()}.md") is None
    assert not_a_memory(f"{ID.replace('-', '')}.md") is None


def test_text_a_memory_already_holds_is_a_copy() -> None:
    held = {"# Release checklist\n\nBump the version in two places.": ID}
    refused = plan("notes.md", NOTE.replace("\n", "\r\n") + "\n\n", held)
    assert isinstance(refused, Unfixable) and f"memory {ID} holds the same text" in refused.reason
    adopted = plan("notes.md", "# Release checklist\n\nBump it in three places.\n", held)
    assert isinstance(adopted, Repair) and adopted.target == Path(f"/m/{ID}.md")


def test_doctor_fix_adopts_only_what_is_a_memory(cli: CliRunner, repo: Path) -> None:
    added = json.loads(
        cli(
            "add", "-s", "Deploys", "-b", "Deploys go through the blue green switch.", "--json"
        ).stdout
    )
    memory_id, folder = added["id"], repo / MEMORIES
    original = Path(added["path"]).read_text()
    readme = "# Memories\n\nOne file per memory; see docs/memories.md.\n"
    (folder / "README.md").write_text(readme)
    (folder / f"{memory_id} 2.md").write_text(original)  # Finder's copy
    conflict = original.replace("blue green switch", "canary ring")
    syncthing = folder / f"{memory_id}.sync-conflict-20260102-101010-ABCDEFG.md"
    syncthing.write_text(conflict)  # Syncthing's: contradicts the memory
    (folder / "notes.md").write_text("Deploys go through the blue green switch.\n")  # same text
    (folder / "new-note.md").write_text("# Flaky lock test\n\nIt waits on the CI clock.\n")

    fixed = cli("doctor", "--fix")
    out = fixed.stdout
    assert "README.md: a note about the folder, left as it is" in out
    assert not [line for line in out.splitlines() if "README.md" in line and "[FAIL]" in line]
    assert f"{memory_id} 2.md: not fixed: a copy of memory {memory_id}" in out
    assert f"{syncthing.name}: not fixed: a sync conflict copy of memory {memory_id}" in out
    assert f"notes.md: not fixed: memory {memory_id} holds the same text" in out
    assert out.count("[ok  ] fixed:") == 1 and "new-note.md →" in out
    # nothing refused was moved, changed or deleted
    assert (folder / "README.md").read_text() == readme
    assert (folder / f"{memory_id} 2.md").read_text() == original
    assert syncthing.read_text() == conflict
    subjects = sorted(m["subject"] for m in json.loads(cli("list", "--json").stdout))
    assert subjects == ["Deploys", "Flaky lock test"]  # one memory per fact, none contradicting
