"""How the warm MCP server knows the memory files moved without reading them: inotify where it
is (one `select` a prompt), else a stat of each file. Real files in tmp_path."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from local_recall.mcp_server.folder_events import FolderEvents
from local_recall.mcp_server.lazy import files_view
from local_recall.recall import Recall
from local_recall.settings import Settings
from tests.conftest import clean_env
from tests.waiting import wait_for


def edit_in_place(path: Path, text: str) -> None:
    with path.open("r+", encoding="utf-8") as handle:
        handle.write(text)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
def test_a_write_a_rename_and_an_edit_in_place_are_events_a_read_is_not(tmp_path: Path) -> None:
    folder = tmp_path / "memories"
    folder.mkdir()
    (folder / "a.md").write_text("one")
    events = FolderEvents.open([folder, tmp_path / "not-made"])
    assert events is not None
    try:
        assert not events.changed()
        assert (folder / "a.md").read_text() == "one"
        assert not events.changed()  # this process's own reads are no change
        edit_in_place(folder / "a.md", "two")
        assert events.changed()
        assert not events.changed()  # drained
        (tmp_path / "b.tmp").write_text("three")
        assert not events.changed()  # not a watched folder
        (tmp_path / "b.tmp").rename(folder / "b.md")
        assert events.changed()
    finally:
        events.close()


def test_without_inotify_a_stat_of_each_file_sees_an_edit_in_place(repo: Path) -> None:
    recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
    recall.add("Release checklist", "Bump the version, tag, push the tag, publish the wheel.")
    # a view is trusted once nothing in it changed within a clock tick of the look
    view = wait_for(lambda: (v := files_view(recall)).settled and v, what="never settled")
    assert len(view.paths) == 1 and view.current(recall)
    assert not files_view(recall, each_file=False).paths
    edit_in_place(Path(view.paths[0]), "---")  # same size, same inode
    assert not view.current(recall)
