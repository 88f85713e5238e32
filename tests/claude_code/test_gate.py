"""The user scope's gate (claude_code/hooks/gate.py), run by a real `/bin/sh -c` the way Claude
Code runs a hook: it lets the command through only in a repository with local-recall/, from any
of its folders, and not where project or local settings of ours already answer."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from local_recall.claude_code.hooks.gate import gated, ungated
from local_recall.claude_code.install.plan import (
    HOOKS,
    Launcher,
    hook_group,
    hook_subcommand,
    installed_hooks,
    is_gated,
    plan_settings_install,
    plan_settings_uninstall,
)
from tests.conftest import clean_env, git_init

RAN = "echo RAN"


def run_gate(cwd: Path, project_dir: Path | None = None, **env: str) -> str:
    environ = clean_env(env)
    if project_dir is not None:
        environ["CLAUDE_PROJECT_DIR"] = str(project_dir)
    done = subprocess.run(
        ["/bin/sh", "-c", gated(RAN)],
        cwd=cwd,
        env=environ,
        input='{"hook_event_name": "UserPromptSubmit"}',
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout.strip()


@pytest.fixture
def served(tmp_path: Path) -> Path:
    repo = git_init(tmp_path / "served repo")
    (repo / "local-recall").mkdir()
    (repo / "src" / "deep dir").mkdir(parents=True)
    return repo


def test_runs_from_the_root_and_every_subfolder_of_a_served_repository(served: Path) -> None:
    for folder in (served, served / "src", served / "src" / "deep dir"):
        assert run_gate(folder, folder) == "RAN"
        assert run_gate(folder) == "RAN"  # no CLAUDE_PROJECT_DIR: the hook's own folder


def test_stops_where_there_is_no_local_recall(tmp_path: Path, served: Path) -> None:
    other = git_init(tmp_path / "other")
    (other / "a" / "b").mkdir(parents=True)
    assert run_gate(other / "a" / "b", other / "a" / "b") == ""
    assert run_gate(other, other) == ""
    # the nearest .git decides, as layout.discover_root does: a repository nested in a served
    # folder is not served, and a plain folder outside any repository is not either
    nested = git_init(served / "src" / "vendored")
    assert run_gate(nested, nested) == ""
    plain = tmp_path / "plain"
    plain.mkdir()
    assert run_gate(plain, plain) == ""
    (plain / "local-recall").mkdir()  # no .git anywhere: the folder itself is the root
    assert run_gate(plain, plain) == "RAN"


def test_local_recall_root_overrides_the_walk(tmp_path: Path, served: Path) -> None:
    other = git_init(tmp_path / "other")
    assert run_gate(other, other, LOCAL_RECALL_ROOT=str(served)) == "RAN"
    assert run_gate(served, served, LOCAL_RECALL_ROOT=str(other)) == ""


@pytest.mark.parametrize(
    "launcher",
    [
        Launcher(("local-recall",)),
        Launcher(("/opt/my venv/bin/local-recall",)),  # shell-quoted in the command
        Launcher(("/usr/bin/python3", "-m", "local_recall")),
    ],
)
@pytest.mark.parametrize("name", ["settings.json", "settings.local.json"])
def test_defers_to_project_or_local_hooks_in_the_session_folder(
    served: Path, launcher: Launcher, name: str
) -> None:
    (served / ".claude").mkdir()
    settings = served / ".claude" / name
    settings.write_text(json.dumps(plan_settings_install({}, launcher)), encoding="utf-8")
    assert run_gate(served, served) == ""  # the project hooks answer this session
    assert run_gate(served / "src", served / "src") == "RAN"  # they do not fire here
    settings.write_text('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}')
    assert run_gate(served, served) == "RAN"  # settings of someone else's hooks only


def test_user_scope_groups_are_gated_commands_without_an_mcp_tool() -> None:
    launcher = Launcher(("local-recall",))
    for spec in HOOKS:
        group = hook_group(spec, launcher, gate=True)
        assert [h["type"] for h in group["hooks"]] == ["command"]
        command = group["hooks"][0]["command"]
        assert is_gated(command) and hook_subcommand(command) == spec.subcommand
        assert ungated(command) == f"local-recall hook {spec.subcommand}"
    document = plan_settings_install({}, launcher, gate=True)
    assert sorted(installed_hooks(document)) == sorted(spec.event for spec in HOOKS)
    assert plan_settings_install(document, launcher, gate=True) == document  # idempotent
    # an older ungated user install is upgraded in place, and uninstall takes the gated one out
    upgraded = plan_settings_install(plan_settings_install({}, launcher), launcher, gate=True)
    assert upgraded == document
    assert plan_settings_uninstall(document) == {}


def test_the_plugins_hooks_are_gated_and_keep_the_guard_and_its_mcp_tool(
    tmp_path: Path, served: Path
) -> None:
    """The plugin runs in every session of every repository (its MCP server too): each hook is
    gated, and the prompt hook keeps the guard and the `mcp_tool` handler behind it."""
    from local_recall.claude_code.hooks.guard import guarded
    from local_recall.claude_code.install.plan import PLUGIN_MCP_SERVER

    launcher = Launcher(("local-recall",))
    for spec in HOOKS:
        group = hook_group(spec, launcher, PLUGIN_MCP_SERVER, gate=True, server_everywhere=True)
        command = group["hooks"][0]["command"]
        assert is_gated(command) and hook_subcommand(command) == spec.subcommand
        if spec.mcp_tool is None:
            assert [h["type"] for h in group["hooks"]] == ["command"]
            continue
        assert [h["type"] for h in group["hooks"]] == ["command", "mcp_tool"]
        assert group["hooks"][1]["server"] == PLUGIN_MCP_SERVER
        assert ungated(command) == guarded(f"local-recall hook {spec.subcommand}")
        # run as Claude Code runs it, with `local-recall` replaced by an echo: nothing starts
        # where there is no local-recall/, the command starts in a served repository
        probe = command.replace("exec local-recall hook", "exec echo RAN")
        for folder, expected in ((tmp_path, ""), (served / "src", "RAN")):
            done = subprocess.run(
                ["/bin/sh", "-c", probe],
                cwd=folder,
                env=clean_env({"CLAUDE_PROJECT_DIR": str(folder)}),
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            )
            assert done.returncode == 0 and done.stderr == "", done.stderr
            assert done.stdout.split(" ")[0].strip() == expected
