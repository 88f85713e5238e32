"""Installing local-recall into Claude Code: hooks in a settings file, the MCP server in .mcp.json.

Claude Code silently ignores a whole settings file when one hook entry is invalid, so nothing is
written that has not been checked: pure planners (plan.py, tested with literals) build
the new JSON documents from the old ones, `install`/`uninstall` validate them, write atomically,
read the file back and validate again (restoring the old text if that fails). A file that is
not valid JSON is refused untouched.

Our entries are recognised by what they run (`<local-recall> hook <event>`, `<local-recall> mcp`,
with `<local-recall>` the console script or `python -m local_recall`), so uninstall removes
exactly those and nothing else; no marker key is added that Claude Code might reject."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from local_recall.claude_code.install.guidance import (
    GuidanceChange,
    guidance_dir,
    is_change,
    plan_install_guidance,
    uninstall_guidance,
    write_guidance,
)
from local_recall.claude_code.install.plan import (
    SCOPES,
    SCRIPT_NAMES,
    JSONObject,
    Launcher,
    installed_hooks,
    mcp_config_path,
    mcp_problems,
    plan_approve_mcp,
    plan_mcp_install,
    plan_mcp_uninstall,
    plan_settings_install,
    plan_settings_uninstall,
    plan_unapprove_mcp,
    settings_path,
    settings_problems,
)
from local_recall.errors import InvalidClaudeSettings, StorageError
from local_recall.repo.files import check_writable_place, write_text_atomic
from local_recall.repo.json_text import render_json_like

# What `init --agent copilot` writes (copilot/install_plan.py's HOOKS_FILE; an adapter this
# one may not import): while it exists, Copilot CLI needs the shared .mcp.json entry.
COPILOT_HOOKS = ".github/hooks/local-recall.json"


def find_launcher(python: str = sys.executable, search_path: str | None = None) -> Launcher:
    """The `local-recall` console script next to the interpreter (same venv), else
    `<python> -m local_recall`. The path is made absolute but symlinks are kept: resolving a
    venv's `python` would lead out of the venv.

    When that very script is also what `local-recall` on PATH finds (pipx, uv tool, an
    activated venv), the bare name is used instead: `.claude/settings.json` and `.mcp.json` are
    committed, and a path on this machine would break every teammate's session."""
    interpreter = Path(python).absolute()
    for name in SCRIPT_NAMES:
        script = interpreter.parent / name
        if script.is_file() and os.access(script, os.X_OK):
            on_path = shutil.which(name, path=search_path)
            with contextlib.suppress(OSError):
                if on_path is not None and os.path.samefile(on_path, script):
                    return Launcher((name,))
            return Launcher((str(script),))
    return Launcher((str(interpreter), "-m", "local_recall"))


# --- files ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FileChange:
    path: Path
    what: str  # "hooks" | "MCP server"
    action: str  # created | updated | unchanged | removed | deleted | absent

    def to_json(self) -> dict[str, str]:
        return {"path": str(self.path), "what": self.what, "action": self.action}


@dataclass(frozen=True, slots=True)
class _Loaded:
    path: Path
    text: str | None  # None: the file does not exist
    document: JSONObject


def read_json_object(path: Path) -> tuple[str | None, JSONObject]:
    """(text, document) of a JSON object file; (None, {}) when it does not exist and an empty
    file counts as `{}`. Raises InvalidClaudeSettings when it cannot be read or parsed."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, {}
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidClaudeSettings(path, f"cannot read it: {exc}") from None
    if not text.strip():
        return text, {}
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidClaudeSettings(
            path,
            f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "fix it and run again — nothing was changed",
        ) from None
    if not isinstance(document, dict):
        raise InvalidClaudeSettings(
            path, "the file must hold a JSON object — fix it and run again; nothing was changed"
        )
    return text, document


def _load(path: Path, check: Callable[[object], list[str]], *, strict: bool) -> _Loaded:
    """Read a JSON object file; not valid JSON is refused (before anything is written). With
    `strict`, a document that already has shape problems is refused too: writing our entries
    into a file Claude Code ignores would only hide them."""
    text, document = read_json_object(path)
    problems = check(document)
    if problems and strict:
        raise InvalidClaudeSettings(
            path, f"{'; '.join(problems[:3])} — fix it and run again; nothing was changed"
        )
    return _Loaded(path, text, document)


def render_json(document: Mapping[str, Any], original: str | None = None) -> str:
    return render_json_like(document, original)


def _save(
    loaded: _Loaded, new: JSONObject, what: str, check: Callable[[object], list[str]]
) -> FileChange:
    """Write `new` if it differs; an empty document replaces a file we would otherwise leave as
    `{}` by deleting it. Read back and validated; on any mismatch the old text is restored."""
    if new == loaded.document and loaded.text is not None:
        return FileChange(loaded.path, what, "unchanged")
    if not new:
        if loaded.text is None:
            return FileChange(loaded.path, what, "absent")
        try:
            loaded.path.unlink()
        except OSError as exc:
            raise StorageError(f"cannot remove {loaded.path}: {exc.strerror or exc}") from None
        return FileChange(loaded.path, what, "deleted")
    # Problems we did not find in the old document would be ours (a planner bug): never write
    # them. Problems already there (uninstall from a broken file) are the user's to fix.
    was_clean = not check(loaded.document)
    problems = check(new)
    if problems and was_clean:
        raise InvalidClaudeSettings(loaded.path, "refusing to write " + "; ".join(problems))
    write_text_atomic(loaded.path, render_json(new, loaded.text))
    try:
        reread = json.loads(loaded.path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        reread = exc
    if reread != new or (was_clean and check(reread)):
        _restore(loaded)
        raise StorageError(f"{loaded.path}: the written file did not read back intact; restored")
    return FileChange(loaded.path, what, "created" if loaded.text is None else "updated")


def _restore(loaded: _Loaded) -> None:
    if loaded.text is None:
        loaded.path.unlink(missing_ok=True)
    else:
        write_text_atomic(loaded.path, loaded.text)


@dataclass(frozen=True, slots=True)
class InstallReport:
    changes: tuple[FileChange, ...]

    @property
    def changed(self) -> bool:
        return any(
            c.action in ("created", "updated", "removed", "deleted")
            if c.what != "agent guidance"
            else is_change(c.action)
            for c in self.changes
        )


@dataclass(frozen=True, slots=True)
class _Edit:
    """One planned edit of one file: what it holds for us, and how to plan it."""

    path: Path
    what: str
    check: Callable[[object], list[str]]
    plan: Callable[[JSONObject], JSONObject]


def _edits(
    root: Path,
    claude_config_dir: Path,
    scope: str,
    *,
    adding: bool,
    launcher: Launcher,
    prompt_tool: bool = True,
) -> list[_Edit]:
    hooks_path = settings_path(scope, root, claude_config_dir)
    approval_path = settings_path("local", root, claude_config_dir)
    if adding:
        gate = scope == "user"
        return [
            _Edit(
                hooks_path,
                "hooks",
                settings_problems,
                lambda d: plan_settings_install(d, launcher, gate=gate, prompt_tool=prompt_tool),
            ),
            _Edit(approval_path, "MCP approval", settings_problems, plan_approve_mcp),
            _Edit(
                mcp_config_path(root),
                "MCP server",
                mcp_problems,
                lambda d: plan_mcp_install(d, launcher),
            ),
        ]
    return [
        _Edit(hooks_path, "hooks", settings_problems, plan_settings_uninstall),
        _Edit(approval_path, "MCP approval", settings_problems, plan_unapprove_mcp),
        _Edit(mcp_config_path(root), "MCP server", mcp_problems, plan_mcp_uninstall),
    ]


@dataclass(frozen=True, slots=True)
class _Planned:
    """One file: as read, and the document it is to hold."""

    loaded: _Loaded
    new: JSONObject
    what: str
    check: Callable[[object], list[str]]

    def writes(self, *, adding: bool) -> bool:
        if adding:
            return self.new != self.loaded.document or (self.loaded.text is None and bool(self.new))
        return self.loaded.text is not None and self.new != self.loaded.document


def _plan(edits: list[_Edit], *, adding: bool) -> list[_Planned]:
    """Read every file first (refusing what cannot be edited), plan each file once (two edits
    of one file, with --scope local, are chained), then check that every file to be written
    can be: all before anything is written."""
    loaded: dict[Path, _Loaded] = {}
    planned: dict[Path, JSONObject] = {}
    labels: dict[Path, list[str]] = {}
    checks: dict[Path, Callable[[object], list[str]]] = {}
    for edit in edits:
        if edit.path not in loaded:
            loaded[edit.path] = _load(edit.path, edit.check, strict=adding)
            planned[edit.path] = loaded[edit.path].document
            checks[edit.path] = edit.check
        planned[edit.path] = edit.plan(planned[edit.path])
        labels.setdefault(edit.path, []).append(edit.what)
    files = [
        _Planned(old, planned[path], " + ".join(labels[path]), checks[path])
        for path, old in loaded.items()
    ]
    for file in files:
        if file.writes(adding=adding):
            check_writable(file.loaded.path)
    return files


def check_writable(path: Path) -> None:
    """StorageError now, before any write, when `path` could not be written: a symbolic link
    (the file or a folder on the way), a file where a folder should be, no permission."""
    check_writable_place(path)
    folder = path.parent
    while not os.path.lexists(folder) and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise StorageError(f"cannot write {path}: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise StorageError(f"cannot write {path}: permission denied")


def _carry_out(files: list[_Planned], root: Path, *, adding: bool) -> list[FileChange]:
    changes = []
    for file in files:
        path, old, new, what = file.loaded.path, file.loaded, file.new, file.what
        if not adding:
            if old.text is None:
                changes.append(FileChange(path, what, "absent"))
                continue
            if new == old.document:
                changes.append(FileChange(path, what, "unchanged"))
                continue
            if new == {"mcpServers": {}}:
                new = {}
        change = _save(old, new, what, file.check)
        if not adding and change.action == "updated":
            change = FileChange(path, what, "removed")
        if change.action == "deleted" and path.parent == root / ".claude":
            with contextlib.suppress(OSError):  # the repo's .claude/ folder, if now empty
                path.parent.rmdir()
        changes.append(change)
    return changes


@dataclass(frozen=True, slots=True)
class InstallPlan:
    """Everything `install` will do, decided and checked; nothing written yet."""

    root: Path
    files: tuple[_Planned, ...]
    guidance: tuple[GuidanceChange, ...]

    def carry_out(self) -> InstallReport:
        changes = _carry_out(list(self.files), self.root, adding=True)
        write_guidance(list(self.guidance))
        return InstallReport((*changes, *_guidance_changes(list(self.guidance))))


def plan_install(
    root: Path,
    *,
    claude_config_dir: Path,
    scope: str = "project",
    launcher: Launcher | None = None,
    for_copilot: bool = False,
) -> InstallPlan:
    """Read and check every file `install` touches; raises (InvalidClaudeSettings,
    StorageError) before anything is written. In a repository wired for Copilot CLI too
    (`for_copilot`, or its hooks file there) the hooks have no `mcp_tool` handler: Copilot
    loads .claude/settings*.json as well and drops the whole file over one (plan.py)."""
    copilot = for_copilot or os.path.lexists(root / COPILOT_HOOKS)
    launcher = launcher or find_launcher()
    edits = _edits(
        root, claude_config_dir, scope, adding=True, launcher=launcher, prompt_tool=not copilot
    )
    files = _plan(edits, adding=True)
    guidance = plan_install_guidance(guidance_dir(scope, root, claude_config_dir))
    return InstallPlan(root, tuple(files), tuple(guidance))


def plan_for_copilot(root: Path, *, claude_config_dir: Path, launcher: Launcher) -> InstallPlan:
    """`init --agent copilot` where Claude Code's hooks are in the repository's own settings
    files (project, local): the same hooks without the `mcp_tool` handler Copilot refuses."""

    def plan(document: JSONObject) -> JSONObject:
        return plan_settings_install(document, launcher, prompt_tool=False)

    mine = hooks_elsewhere(root, claude_config_dir, "user")  # user hooks have no such handler
    edits = [_Edit(path, "hooks", settings_problems, plan) for path in mine]
    return InstallPlan(root, tuple(_plan(edits, adding=True)), ())


def install(
    root: Path,
    *,
    claude_config_dir: Path,
    scope: str = "project",
    launcher: Launcher | None = None,
) -> InstallReport:
    """Add our hooks to the settings file of `scope`, our server to `<root>/.mcp.json`, and its
    approval to `<root>/.claude/settings.local.json` (what Claude Code's approval prompt would
    store; it is ignored in the committed settings.json); then the skills and slash commands
    (guidance.py). Every file is read and checked before any is written. Idempotent."""
    plan = plan_install(root, claude_config_dir=claude_config_dir, scope=scope, launcher=launcher)
    return plan.carry_out()


def uninstall(root: Path, *, claude_config_dir: Path, scope: str = "project") -> InstallReport:
    """Remove exactly what `install` adds: our hook entries (from the settings file of `scope`),
    the approval, our MCP server entry, and the skills and commands identical to ours. Files
    left empty are deleted; all else is kept. The `.mcp.json` entry stays while `init --agent
    copilot`'s hooks file exists: Copilot CLI uses that entry too (copilot/install_plan.py)."""
    edits = _edits(root, claude_config_dir, scope, adding=False, launcher=Launcher(()))
    if os.path.lexists(root / COPILOT_HOOKS):  # Copilot CLI reads the same .mcp.json entry
        edits = [edit for edit in edits if edit.what != "MCP server"]
    if hooks_elsewhere(root, claude_config_dir, scope):
        # e.g. `uninstall --scope user` with the committed project hooks still there: their
        # prompt handler and the agent's tools need the server and its approval
        edits = [edit for edit in edits if edit.what == "hooks"]
    files = _plan(edits, adding=False)
    removed = uninstall_guidance(guidance_dir(scope, root, claude_config_dir))
    report = InstallReport(tuple(_carry_out(files, root, adding=False)))
    if (root / ".claude").is_dir() and not any((root / ".claude").iterdir()):
        with contextlib.suppress(OSError):
            (root / ".claude").rmdir()
    return InstallReport(report.changes + _guidance_changes(removed))


def hooks_elsewhere(root: Path, claude_config_dir: Path, scope: str) -> list[Path]:
    """The settings files of the other scopes that still run our hooks for this repository."""
    found = []
    for other in SCOPES:
        path = settings_path(other, root, claude_config_dir)
        if other == scope:
            continue
        try:
            _, document = read_json_object(path)
        except InvalidClaudeSettings:
            continue
        if installed_hooks(document):
            found.append(path)
    return found


def _guidance_changes(changes: list[GuidanceChange]) -> tuple[FileChange, ...]:
    """As FileChanges, for the report."""
    return tuple(FileChange(c.path, "agent guidance", c.action) for c in changes)
