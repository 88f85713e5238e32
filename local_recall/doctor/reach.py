"""Doctor: can our Claude Code hooks fire from where the user starts Claude Code?

Claude Code reads project (and local) hooks only from `.claude/` of the folder it starts in
(2.1.197): a session started in `src/` of a repository whose hooks are in the root's
`.claude/settings.json` runs none of them, silently. User-scope hooks (`init --scope user`,
gated: claude_code/hooks/gate.py) and the plugin run wherever it starts. Where the user starts
it is read from this repository's transcripts of the last 30 days (the `cwd` each records) and
from the folder `doctor` itself runs in."""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from local_recall.doctor.check import OK, WARN, Check

RECENT_DAYS = 30
_SHOWN = 3  # folders named in the warning


def session_start_dirs(root: Path, claude_config_dir: Path, *, now: float) -> Counter[Path]:
    """How many of this repository's sessions (no subagents) of the last RECENT_DAYS started
    in each folder."""
    from local_recall.capture.transcripts.discovery import find_transcripts, read_session_cwd

    since_ns = int((now - RECENT_DAYS * 86400) * 1e9)
    started: Counter[Path] = Counter()
    for transcript in find_transcripts(root, claude_config_dir):
        if transcript.is_subagent or transcript.mtime_ns < since_ns:
            continue
        cwd = read_session_cwd(transcript.path)
        if cwd is not None:
            started[Path(cwd)] += 1
    return started


def folder_has_our_hooks(folder: Path) -> bool:
    """Project or local settings in `folder/.claude/` that run our hooks (what Claude Code
    started in `folder` reads)."""
    from local_recall.claude_code.install.apply import read_json_object
    from local_recall.claude_code.install.plan import installed_hooks
    from local_recall.errors import RecallError

    for name in ("settings.json", "settings.local.json"):
        try:
            _, document = read_json_object(folder / ".claude" / name)
        except RecallError:
            continue
        if installed_hooks(document):
            return True
    return False


def unserved(started: Iterable[Path], root: Path, *, everywhere: bool) -> list[Path]:
    """The folders of `started` inside `root` where no hook of ours fires; none when user or
    plugin hooks fire everywhere."""
    if everywhere:
        return []
    inside = {p for p in started if _is_within(p, root)}
    return sorted(p for p in inside if not folder_has_our_hooks(p))


def check_hooks_reach(
    root: Path,
    claude_config_dir: Path,
    *,
    everywhere: bool,
    installed: bool,
    here: Path,
    now: float | None = None,
) -> Iterable[Check]:
    """`everywhere`: our user-scope hooks or the plugin are installed; `installed`: any hooks
    of ours are; `here`: the folder doctor runs in (likely where the user starts Claude
    Code)."""
    if not installed:
        return  # check_claude_hooks already says how to install them
    started = session_start_dirs(root, claude_config_dir, now=time.time() if now is None else now)
    places = Counter(started)
    if _is_within(here, root):
        places[here] += 0  # counted as a place, not as a session
    missing = unserved(places, root, everywhere=everywhere)
    if everywhere:
        yield Check("claude hooks reach", OK, "every folder of this repository (user scope)")
        return
    if not missing:
        shown = ", ".join(_rel(p, root) for p in sorted(places)) or _rel(root, root)
        yield Check("claude hooks reach", OK, f"sessions start in {shown}, where the hooks run")
        return
    sessions = sum(started[p] for p in missing)
    named = ", ".join(_rel(p, root) for p in missing[:_SHOWN])
    more = f" and {len(missing) - _SHOWN} more" if len(missing) > _SHOWN else ""
    where = (
        f"{sessions} session(s) of the last {RECENT_DAYS} days started in {named}{more}"
        if sessions
        else f"Claude Code started in {named}"
    )
    yield Check(
        "claude hooks reach",
        WARN,
        f"{where}: Claude Code runs no local-recall hook there (it reads project hooks only "
        "from the folder it starts in); run `local-recall init --scope user` to serve every "
        "folder (a no-op in repositories without local-recall/)",
    )


def _is_within(path: Path, root: Path) -> bool:
    try:
        return os.path.commonpath([os.path.realpath(path), os.path.realpath(root)]) == (
            os.path.realpath(root)
        )
    except ValueError:
        return False


def _rel(path: Path, root: Path) -> str:
    relative = os.path.relpath(os.path.realpath(path), os.path.realpath(root))
    return "the root" if relative == "." else relative + "/"
