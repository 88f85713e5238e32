"""state/daemon.json as a reader sees it between writes (daemon/status.py)."""

from __future__ import annotations

import copy
import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from local_recall.daemon.status import StatusFile, status_path
from local_recall.repo.layout import Layout


class Snapshots(StatusFile):
    """The status as each write put it on disk."""

    written: list[dict[str, Any]]

    def write(self) -> None:
        super().write()
        self.written = [*getattr(self, "written", []), copy.deepcopy(self._data)]


def test_a_pass_and_its_failed_items_reach_the_file_in_one_write(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    layout.state_dir.mkdir(parents=True)
    status = Snapshots(layout, lambda: datetime(2026, 12, 6, tzinfo=UTC))
    refused = ["claude -p failed (exit 1): refused", "claude -p failed (exit 1): refused again"]
    status.record("pass", time.monotonic(), {"processed": 0}, failed=refused)
    # `daemon status` read at any moment never shows the pass with "errors 0"
    [written] = status.written
    assert written["last_pass"] is not None and written["counts"]["errors"] == 2
    assert [e["error"] for e in written["last_errors"]] == refused
    on_disk = json.loads(status_path(layout).read_text())
    assert on_disk["counts"] == {"passes": 1, "syncs": 0, "queries": 0, "errors": 2}
    status.record("sync", time.monotonic(), {"embedded": 1})
    assert status.written[-1]["counts"]["errors"] == 2  # a clean sync adds none
