"""`doctor`'s checks of what can fail quietly in a new user's first week: is the
daemon running and with whose environment, is extraction failing, what waits for review,
which `file:` scopes name files HEAD does not have, and can the hooks fire where Claude Code
is started. No click here: `cli/setup.py` prints them with the other checks (doctor.py)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from local_recall.daemon.session_env import differences
from local_recall.doctor import FAIL, OK, WARN, Check
from local_recall.errors import RecallError
from local_recall.learning.usage_log import UsageRead
from local_recall.logs import escape_controls


def check_daemon(
    running: bool, pid: int | None, data: Mapping[str, Any], here: Mapping[str, str]
) -> Iterable[Check]:
    """Running? Since when, with whose environment, and what did its last pass do? (`data`:
    state/daemon.json; `here`: the fingerprint of this shell's Claude Code variables)"""
    if not running:
        yield Check(
            "daemon",
            WARN,
            "not running: hooks search in their own process (slower) and nothing extracts "
            "memories; it starts with the next Claude Code session, or `local-recall daemon start`",
        )
        return
    yield Check("daemon", OK, f"running (pid {pid}) since {data.get('started', '?')}")
    yield _environment_check(data.get("environment"), here)
    last = data.get("last_pass")
    if isinstance(last, dict):
        report = last.get("report") if isinstance(last.get("report"), dict) else {}
        pipeline = report.get("pipeline") if isinstance(report, dict) else None
        errors = pipeline.get("errors") if isinstance(pipeline, dict) else None
        failed = f", {len(errors)} failed" if isinstance(errors, list) and errors else ""
        yield Check(
            "daemon last pass",
            WARN if failed else OK,
            f"{last.get('at')} ({last.get('seconds')} s){failed}",
        )


def _environment_check(described: object, here: Mapping[str, str]) -> Check:
    """Whose Claude Code variables (API address, keys, proxy...) extraction runs with: the
    latest session's, which its hooks sent (daemon/session_env.py); names only, never values."""
    if not isinstance(described, Mapping):
        return Check(
            "daemon environment",
            OK,
            "extraction uses the environment the daemon started with (no session has sent "
            "its own yet)",
        )
    theirs = described.get("variables")
    shell = differences(theirs, here) if isinstance(theirs, Mapping) else []
    differs = f"; differs from this shell in {', '.join(shell)}" if shell else ""
    return Check(
        "daemon environment",
        OK,
        f"extraction follows the environment of {described.get('from')} "
        f"(received {described.get('at')}){differs}",
    )


def check_extraction(state_dir: Path, now: datetime) -> Iterable[Check]:
    """Is extraction failing (capture/health.py)? A failure that lasts is a failure."""
    from local_recall.capture.health import WARN_AFTER, describe, read_health

    health = read_health(state_dir, now)
    if health is None:
        yield Check("extraction", OK, "nothing extracted yet")
        return
    if health.ok:
        yield Check("extraction", OK, describe(health))
        return
    lasting = health.since is not None and now - health.since >= WARN_AFTER
    yield Check("extraction", FAIL if lasting else WARN, describe(health))


def check_unreviewed(count: Callable[[], int]) -> Iterable[Check]:
    try:
        waiting = count()
    except RecallError as exc:
        yield Check("unreviewed", WARN, f"cannot tell: {exc}")
        return
    if waiting:
        yield Check(
            "unreviewed",
            OK,
            f"{waiting} memories wait for a person (used meanwhile, marked [unreviewed]): "
            "`local-recall review`",
        )
    else:
        yield Check("unreviewed", OK, "none")


def check_learned(
    read: Callable[[], UsageRead],
    legacy: Callable[[], UsageRead | None],
    disputed: Callable[[], Iterable[tuple[str, str]]],
) -> Iterable[Check]:
    """What a person must see of what is learned (docs/hooks.md#what-is-learned): lines of
    this user's outcomes (state/) that were skipped, a committed local-recall/usage/ left from
    earlier versions (read for nothing: how to retire it), and the memories whose frontmatter
    says a session found them wrong, (id, reason), until a person settles them."""
    try:
        usage, old, open_ = read(), legacy(), sorted(disputed())
    except RecallError as exc:
        yield Check("disputed", WARN, f"cannot tell: {exc}")
        return
    if usage.skipped_files or usage.skipped_lines:
        what = [*usage.skipped_files[:3], f"{usage.skipped_lines} lines that do not validate"]
        yield Check("outcomes", WARN, "state/outcomes.jsonl: skipped " + "; ".join(what))
    if old is not None:
        yield Check("usage folder", WARN, legacy_detail(old))
    if not open_:
        yield Check("disputed", OK, "none")
        return
    listed = "; ".join(f"{i[:8]}: {escape_controls(why)}" for i, why in open_[:3])
    more = f" and {len(open_) - 3} more" if len(open_) > 3 else ""
    yield Check(
        "disputed",
        WARN,
        f"{len(open_)} memories a session found wrong ({listed}{more}), shown as pointers "
        "until a person settles them: `local-recall review` (accept, edit or reject)",
    )


def legacy_detail(old: UsageRead) -> str:
    """How to retire the committed local-recall/usage/ of earlier versions. Its disputes are
    named by memory id only: they are lines nobody reviewed, so their text is not repeated."""
    named = sorted({o.memory_id[:8] for o in old.outcomes if o.use == "disputed"})
    disputes = (
        f"; its {len(named)} disputed memories ({', '.join(named[:5])}"
        f"{' …' if len(named) > 5 else ''}) are not applied: `local-recall show ID` and "
        "`local-recall review` if one needs a look"
        if named
        else ""
    )
    return (
        "local-recall/usage/ is no longer written or read (outcomes stay in this user's "
        "state/, a dispute is written in the memory's frontmatter)"
        f"{disputes}; retire it: `git rm -r local-recall/usage` and commit"
    )


def check_file_scopes(root: Path, scopes: Iterable[tuple[str, str]]) -> Iterable[Check]:
    """Memories scoped `file:<path>` where HEAD has no such file (or folder): (id, scope)."""
    at_head = _files_at_head(root)
    if at_head is None:
        return
    folders = {p.rsplit("/", n)[0] + "/" for p in at_head for n in range(1, p.count("/") + 1)}
    missing = []
    for memory_id, scope in scopes:
        if not scope.startswith("file:"):
            continue
        path = scope.removeprefix("file:")
        if path not in at_head and path not in folders:
            missing.append(f"{memory_id[:8]} {path}")
    if missing:
        shown = ", ".join(missing[:5]) + (
            f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        )
        yield Check(
            "file scopes",
            WARN,
            f"{len(missing)} memories are scoped to files not at HEAD: {shown} "
            "(`local-recall stale` says what happened to them)",
        )
    else:
        yield Check("file scopes", OK, "every file: scope exists at HEAD")


def _files_at_head(root: Path) -> set[str] | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "ls-tree", "-r", "-z", "--name-only", "HEAD"],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return {p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p}
