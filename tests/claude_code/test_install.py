"""Installing into Claude Code: planners on literals, then install/uninstall on real files and
through the real CLI (`local-recall init` / `uninstall`)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from local_recall.claude_code.install.apply import (
    FileChange,
    InstallReport,
    find_launcher,
    install,
    uninstall,
)
from local_recall.claude_code.install.guidance import KEPT, plan_guidance
from local_recall.claude_code.install.plan import (
    HOOKS,
    PLUGIN_MCP_SERVER,
    Launcher,
    hook_program,
    hook_subcommand,
    installed_hooks,
    is_our_mcp_entry,
    mcp_problems,
    plan_approve_mcp,
    plan_mcp_install,
    plan_mcp_uninstall,
    plan_settings_install,
    plan_settings_uninstall,
    plan_unapprove_mcp,
    settings_problems,
)
from local_recall.doctor import check_claude_cli, check_claude_hooks, check_claude_mcp
from local_recall.errors import InvalidClaudeSettings
from tests.claude_cli import claude_or_fail, offline_env, requires_claude, run_claude
from tests.conftest import REPO_ROOT, clean_env, git_init
from tests.fake_anthropic import (
    FakeAnthropic,
    JSONDict,
    Reply,
    text_reply,
    tool_names,
    tool_use_reply,
)

LR = Launcher(("/opt/venv/bin/local-recall",))

OTHER_HOOK = {"type": "command", "command": "npx prettier --check", "timeout": 30}
# UserPromptSubmit: the command behind the shell guard, and the MCP server's hidden tool
# (docs/hooks.md#two-handlers-one-answer)
OUR_PROMPT_HOOKS = [
    {
        "type": "command",
        "command": 'd="${XDG_RUNTIME_DIR:-/tmp}/local-recall-mcp-$PPID"; test -O "$d" && '
        'test ! -h "$d" && test -e "$d/live" || exec '
        "/opt/venv/bin/local-recall hook user-prompt-submit",
        "timeout": 10,
    },
    {
        "type": "mcp_tool",
        "server": "local-recall",
        "tool": "user_prompt_submit",
        "input": {
            "prompt": "${prompt}",
            "prompt_id": "${prompt_id}",
            "session_id": "${session_id}",  # the session's record (docs/hooks.md)
        },
        "timeout": 10,
    },
]


def read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


# --- recognising our entries ---------------------------------------------------------------------


def test_hook_subcommand_recognises_every_launcher_form() -> None:
    assert hook_subcommand("/opt/venv/bin/local-recall hook session-start") == "session-start"
    assert hook_subcommand("local-recall hook session-end") == "session-end"
    assert hook_subcommand("'/a b/py' -m local_recall hook user-prompt-submit") == (
        "user-prompt-submit"
    )
    assert hook_subcommand("'/a b/local-recall' hook session-start") == "session-start"


def test_hook_subcommand_ignores_everything_else() -> None:
    assert hook_subcommand("npx prettier --check") is None
    assert hook_subcommand("other-tool hook session-start") is None
    assert hook_subcommand("local-recall mcp") is None
    assert hook_subcommand("python -m other hook x") is None
    assert hook_subcommand("echo 'unterminated") is None


def test_our_mcp_entry_is_recognised_by_what_it_runs() -> None:
    assert is_our_mcp_entry({"command": "/x/local-recall", "args": ["mcp"]})
    assert is_our_mcp_entry({"command": "/x/python3", "args": ["-m", "local_recall", "mcp"]})
    assert not is_our_mcp_entry({"command": "npx", "args": ["some-memory-server"]})
    assert not is_our_mcp_entry({"command": "/x/local-recall", "args": ["serve"]})
    assert not is_our_mcp_entry("local-recall")


def test_launcher_quotes_paths_with_spaces() -> None:
    launcher = Launcher(("/home/a b/.venv/bin/local-recall",))
    command = launcher.shell_command("hook", "session-start")
    assert command == "'/home/a b/.venv/bin/local-recall' hook session-start"
    assert hook_subcommand(command) == "session-start"


def test_find_launcher_prefers_the_console_script_next_to_python(tmp_path: Path) -> None:
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"
    python.write_text("")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert find_launcher(str(python), str(elsewhere)) == Launcher(
        (str(python), "-m", "local_recall")
    )
    script = bin_dir / "local-recall"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert find_launcher(str(python), str(elsewhere)) == Launcher((str(script),))
    # another local-recall earlier on PATH: keep the absolute path to ours
    other = elsewhere / "local-recall"
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    assert find_launcher(str(python), f"{elsewhere}:{bin_dir}") == Launcher((str(script),))


def test_find_launcher_uses_the_bare_name_when_path_finds_the_same_script(tmp_path: Path) -> None:
    """Committed settings then hold no machine-specific path (pipx, uv tool, active venv)."""
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"
    python.write_text("")
    script = bin_dir / "local-recall"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    linked = tmp_path / "shims"
    linked.mkdir()
    (linked / "local-recall").symlink_to(script)  # pipx links its scripts like this
    assert find_launcher(str(python), str(linked)) == Launcher(("local-recall",))
    assert find_launcher(str(python), str(bin_dir)) == Launcher(("local-recall",))


# --- planning settings ----------------------------------------------------------------------------


def settings_changes(report: InstallReport) -> list[FileChange]:
    return [c for c in report.changes if c.what != "agent guidance"]


def guidance_changes(report: InstallReport) -> list[FileChange]:
    return [c for c in report.changes if c.what == "agent guidance"]


def test_install_plan_into_empty_settings_has_one_group_per_event() -> None:
    plan = plan_settings_install({}, LR)
    assert plan == {
        "hooks": {
            "SessionStart": [
                {
                    "matcher": "startup|resume|clear|compact",
                    "hooks": [
                        {
                            "type": "command",
                            "command": "/opt/venv/bin/local-recall hook session-start",
                            "timeout": 15,
                        }
                    ],
                }
            ],
            "UserPromptSubmit": [{"hooks": OUR_PROMPT_HOOKS}],
            "SessionEnd": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": "/opt/venv/bin/local-recall hook session-end",
                            "timeout": 5,
                        }
                    ]
                }
            ],
            "PreCompact": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": "/opt/venv/bin/local-recall hook pre-compact",
                            "timeout": 5,
                        }
                    ]
                }
            ],
        }
    }
    assert settings_problems(plan) == []


def test_install_plan_keeps_other_hooks_and_keys_in_place() -> None:
    existing = {
        "model": "opus",
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {
            "UserPromptSubmit": [{"hooks": [OTHER_HOOK]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [OTHER_HOOK]}],
        },
    }
    plan = plan_settings_install(existing, LR)
    assert plan["model"] == "opus"
    assert plan["permissions"] == {"allow": ["Bash(ls:*)"]}
    assert plan["hooks"]["PreToolUse"] == [{"matcher": "Bash", "hooks": [OTHER_HOOK]}]
    assert plan["hooks"]["UserPromptSubmit"] == [
        {"hooks": [OTHER_HOOK]},
        {"hooks": OUR_PROMPT_HOOKS},
    ]
    assert existing["hooks"]["UserPromptSubmit"] == [{"hooks": [OTHER_HOOK]}]  # input untouched


def test_install_plan_is_idempotent() -> None:
    once = plan_settings_install({"hooks": {"Stop": [{"hooks": [OTHER_HOOK]}]}}, LR)
    assert plan_settings_install(once, LR) == once


def test_install_plan_replaces_our_old_entry_even_inside_a_shared_group() -> None:
    old = {"type": "command", "command": "/old/venv/bin/local-recall hook user-prompt-submit"}
    existing = {"hooks": {"UserPromptSubmit": [{"hooks": [OTHER_HOOK, old]}]}}
    plan = plan_settings_install(existing, LR)
    assert plan["hooks"]["UserPromptSubmit"] == [
        {"hooks": [OTHER_HOOK]},
        {"hooks": OUR_PROMPT_HOOKS},
    ]


def test_install_plan_upgrades_the_plain_prompt_command_of_earlier_versions() -> None:
    earlier = {"type": "command", "command": "/opt/venv/bin/local-recall hook user-prompt-submit"}
    plan = plan_settings_install({"hooks": {"UserPromptSubmit": [{"hooks": [earlier]}]}}, LR)
    assert plan["hooks"]["UserPromptSubmit"] == [{"hooks": OUR_PROMPT_HOOKS}]
    # the mcp_tool handler of an install before the session record: its input gains session_id
    without_session = {**OUR_PROMPT_HOOKS[1], "input": {"prompt": "${prompt}"}}
    old = {"hooks": {"UserPromptSubmit": [{"hooks": [OUR_PROMPT_HOOKS[0], without_session]}]}}
    assert plan_settings_install(old, LR)["hooks"]["UserPromptSubmit"] == [
        {"hooks": OUR_PROMPT_HOOKS}
    ]


def test_our_prompt_handlers_are_recognised_and_nothing_else() -> None:
    guarded_command = OUR_PROMPT_HOOKS[0]["command"]
    assert hook_subcommand(guarded_command) == "user-prompt-submit"
    assert hook_program(guarded_command) == "/opt/venv/bin/local-recall"
    assert hook_subcommand("test -e x || exec /bin/rm -rf / hook x") is None
    plugin_tool = {**OUR_PROMPT_HOOKS[1], "server": "plugin:local-recall:local-recall"}
    foreign_tool = {**OUR_PROMPT_HOOKS[1], "server": "someone-else"}
    other_tool = {**OUR_PROMPT_HOOKS[1], "tool": "search_memories"}
    existing = {
        "hooks": {
            "UserPromptSubmit": [
                {"hooks": [OTHER_HOOK, *OUR_PROMPT_HOOKS, plugin_tool, foreign_tool, other_tool]}
            ]
        }
    }
    assert plan_settings_uninstall(existing) == {
        "hooks": {"UserPromptSubmit": [{"hooks": [OTHER_HOOK, foreign_tool, other_tool]}]}
    }


def test_uninstall_plan_removes_exactly_ours() -> None:
    existing = {
        "model": "opus",
        "hooks": {"UserPromptSubmit": [{"hooks": [OTHER_HOOK]}], "Stop": [{"hooks": [OTHER_HOOK]}]},
    }
    assert plan_settings_uninstall(plan_settings_install(existing, LR)) == existing
    assert plan_settings_uninstall(plan_settings_install({}, LR)) == {}


def test_settings_problems_name_what_claude_code_would_reject() -> None:
    assert settings_problems([]) == ["the file must hold a JSON object"]
    assert settings_problems({"hooks": []}) == ['"hooks" must be an object of event names to lists']
    assert settings_problems({"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}) == [
        "hooks.Stop[0].hooks[0].command must be a non-empty string"
    ]
    assert settings_problems({"hooks": {"Stop": [{"matcher": 3, "hooks": "x"}]}}) == [
        "hooks.Stop[0].matcher must be a string",
        "hooks.Stop[0].hooks must be a list",
    ]
    unknown_kind = {"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "check"}]}]}}
    assert settings_problems(unknown_kind) == []
    tool = {"type": "mcp_tool", "server": "", "tool": 5, "input": []}
    assert settings_problems({"hooks": {"Stop": [{"hooks": [tool]}]}}) == [
        "hooks.Stop[0].hooks[0].server must be a non-empty string",
        "hooks.Stop[0].hooks[0].tool must be a non-empty string",
        "hooks.Stop[0].hooks[0].input must be an object",
    ]
    assert settings_problems(plan_settings_install({}, LR)) == []


def test_installed_hooks_lists_our_commands_per_event() -> None:
    settings = plan_settings_install({"hooks": {"Stop": [{"hooks": [OTHER_HOOK]}]}}, LR)
    found = installed_hooks(settings)
    assert sorted(found) == sorted(spec.event for spec in HOOKS)
    assert found["SessionEnd"] == ["/opt/venv/bin/local-recall hook session-end"]
    assert found["UserPromptSubmit"] == [
        OUR_PROMPT_HOOKS[0]["command"],
        "mcp_tool local-recall/user_prompt_submit",
    ]


# --- planning .mcp.json ---------------------------------------------------------------------------


def test_mcp_plan_adds_our_server_next_to_others() -> None:
    other = {"command": "npx", "args": ["-y", "some-server"]}
    plan = plan_mcp_install({"mcpServers": {"other": other}}, LR)
    assert plan == {
        "mcpServers": {
            "other": other,
            "local-recall": {
                "type": "stdio",
                "command": "/opt/venv/bin/local-recall",
                "args": ["mcp"],
            },
        }
    }
    assert mcp_problems(plan) == []
    assert plan_mcp_uninstall(plan) == {"mcpServers": {"other": other}}


def test_mcp_plan_with_python_launcher() -> None:
    launcher = Launcher(("/usr/bin/python3", "-m", "local_recall"))
    entry = plan_mcp_install({}, launcher)["mcpServers"]["local-recall"]
    assert entry["command"] == "/usr/bin/python3"
    assert entry["args"] == ["-m", "local_recall", "mcp"]


def test_mcp_uninstall_keeps_a_foreign_server_of_the_same_name() -> None:
    foreign = {"mcpServers": {"local-recall": {"command": "npx", "args": ["other"]}}}
    assert plan_mcp_uninstall(foreign) == foreign


def test_approval_plan_adds_our_name_once_and_respects_the_user() -> None:
    assert plan_approve_mcp({}) == {"enabledMcpjsonServers": ["local-recall"]}
    approved = plan_approve_mcp({"enabledMcpjsonServers": ["db"]})
    assert approved == {"enabledMcpjsonServers": ["db", "local-recall"]}
    assert plan_approve_mcp(approved) == approved
    everything = {"enableAllProjectMcpServers": True}
    assert plan_approve_mcp(everything) == everything
    refused = {"disabledMcpjsonServers": ["local-recall"]}
    assert plan_approve_mcp(refused) == refused
    assert plan_unapprove_mcp(approved) == {"enabledMcpjsonServers": ["db"]}
    assert plan_unapprove_mcp(plan_approve_mcp({"model": "x"})) == {"model": "x"}


# --- files ----------------------------------------------------------------------------------------


def test_install_merges_into_existing_files_and_is_idempotent(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    settings = root / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    original = {
        "permissions": {"deny": ["Read(.env)"]},
        "hooks": {"Stop": [{"hooks": [OTHER_HOOK]}]},
    }
    settings.write_text(json.dumps(original))
    mcp = root / ".mcp.json"
    mcp.write_text(json.dumps({"mcpServers": {"db": {"command": "db-mcp"}}}))

    report = install(root, claude_config_dir=tmp_path / "home" / ".claude", launcher=LR)
    assert [(c.what, c.action) for c in settings_changes(report)] == [
        ("hooks", "updated"),
        ("MCP approval", "created"),
        ("MCP server", "updated"),
    ]
    assert read(root / ".claude" / "settings.local.json") == {
        "enabledMcpjsonServers": ["local-recall"]
    }
    written = read(settings)
    assert written["permissions"] == original["permissions"]
    assert written["hooks"]["Stop"] == original["hooks"]["Stop"]
    assert sorted(installed_hooks(written)) == sorted(s.event for s in HOOKS)
    assert read(mcp)["mcpServers"]["db"] == {"command": "db-mcp"}
    assert "env" not in read(mcp)["mcpServers"]["local-recall"]  # committed: no machine paths

    before = (settings.read_bytes(), mcp.read_bytes(), settings.stat().st_mtime_ns)
    again = install(root, claude_config_dir=tmp_path / "home" / ".claude", launcher=LR)
    assert [c.action for c in again.changes] == ["unchanged"] * 9  # 3 files, 6 skills/commands
    assert not again.changed
    assert (settings.read_bytes(), mcp.read_bytes(), settings.stat().st_mtime_ns) == before

    removed = uninstall(root, claude_config_dir=tmp_path / "home" / ".claude")
    assert [c.action for c in settings_changes(removed)] == ["removed", "deleted", "removed"]
    assert read(settings) == original
    assert not (root / ".claude" / "settings.local.json").exists()
    assert read(mcp) == {"mcpServers": {"db": {"command": "db-mcp"}}}


def test_install_into_nothing_creates_and_uninstall_deletes(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    report = install(root, claude_config_dir=tmp_path / "cfg", launcher=LR)
    assert [c.action for c in settings_changes(report)] == ["created"] * 3
    assert [c.action for c in guidance_changes(report)] == ["created"] * 6
    assert (root / ".claude" / "settings.json").is_file()
    assert (root / ".claude" / "skills" / "using-memory" / "SKILL.md").is_file()
    removed = uninstall(root, claude_config_dir=tmp_path / "cfg")
    assert [c.action for c in settings_changes(removed)] == ["deleted"] * 3
    assert [c.action for c in guidance_changes(removed)] == ["removed"] * 6
    assert sorted(p.name for p in root.iterdir()) == []
    again = uninstall(root, claude_config_dir=tmp_path / "cfg")
    assert [c.action for c in again.changes] == ["absent"] * 9


def test_local_scope_puts_hooks_and_approval_in_one_file(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    report = install(root, claude_config_dir=tmp_path / "cfg", scope="local", launcher=LR)
    assert [(c.path.name, c.what, c.action) for c in settings_changes(report)] == [
        ("settings.local.json", "hooks + MCP approval", "created"),
        (".mcp.json", "MCP server", "created"),
    ]
    local = read(root / ".claude" / "settings.local.json")
    assert local["enabledMcpjsonServers"] == ["local-recall"]
    assert sorted(installed_hooks(local)) == sorted(s.event for s in HOOKS)
    uninstall(root, claude_config_dir=tmp_path / "cfg", scope="local")
    assert sorted(p.name for p in root.iterdir()) == []


@pytest.mark.parametrize("broken", ["{not json", '{"hooks": [1, 2]}', "[]"])
def test_invalid_settings_are_refused_and_nothing_is_touched(tmp_path: Path, broken: str) -> None:
    root = tmp_path / "repo"
    settings = root / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(broken)
    with pytest.raises(InvalidClaudeSettings) as caught:
        install(root, claude_config_dir=tmp_path / "cfg", launcher=LR)
    assert str(settings) in str(caught.value)
    assert "nothing was changed" in str(caught.value)
    assert settings.read_text() == broken
    assert not (root / ".mcp.json").exists()  # checked before anything was written
    assert not (root / ".claude" / "settings.local.json").exists()


def test_invalid_mcp_json_is_refused_before_settings_are_written(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".mcp.json").write_text('{"mcpServers": ')
    with pytest.raises(InvalidClaudeSettings, match="not valid JSON"):
        install(root, claude_config_dir=tmp_path / "cfg", launcher=LR)
    assert not (root / ".claude").exists()
    assert (root / ".mcp.json").read_text() == '{"mcpServers": '


def test_user_scope_honours_claude_config_dir(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    config_dir = tmp_path / "custom-claude"
    report = install(root, claude_config_dir=config_dir, scope="user", launcher=LR)
    assert report.changes[0].path == config_dir / "settings.json"
    assert sorted(installed_hooks(read(config_dir / "settings.json"))) == sorted(
        s.event for s in HOOKS
    )
    assert not (root / ".claude" / "settings.json").exists()
    assert (root / ".mcp.json").is_file()
    uninstall(root, claude_config_dir=config_dir, scope="user")
    assert not (config_dir / "settings.json").exists()
    assert config_dir.is_dir()  # the user's config folder is never removed


# --- doctor ---------------------------------------------------------------------------------------


def statuses(checks: Any) -> list[tuple[str, str]]:
    return [(c.name, c.status) for c in checks]


def real_launcher(tmp_path: Path) -> Launcher:
    script = tmp_path / "venv bin" / "local-recall"
    script.parent.mkdir(exist_ok=True)
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    return Launcher((str(script),))


def test_doctor_is_happy_after_install(tmp_path: Path) -> None:
    root, config_dir = tmp_path / "repo", tmp_path / "cfg"
    root.mkdir()
    install(root, claude_config_dir=config_dir, launcher=real_launcher(tmp_path))
    assert statuses(check_claude_hooks(root, config_dir, shutil.which)) == [("claude hooks", "ok")]
    assert statuses(check_claude_mcp(root, config_dir, shutil.which)) == [("claude mcp", "ok")]


def test_doctor_reports_missing_commands_broken_files_and_duplicates(tmp_path: Path) -> None:
    root, config_dir = tmp_path / "repo", tmp_path / "cfg"
    root.mkdir()
    install(root, claude_config_dir=config_dir, launcher=LR)  # /opt/venv/... does not exist
    hooks = list(check_claude_hooks(root, config_dir, shutil.which))
    assert ("claude hooks", "fail") in statuses(hooks)
    assert "/opt/venv/bin/local-recall, which does not exist" in hooks[0].detail
    assert statuses(check_claude_mcp(root, config_dir, shutil.which)) == [("claude mcp", "fail")]

    install(root, claude_config_dir=config_dir, scope="local", launcher=real_launcher(tmp_path))
    install(root, claude_config_dir=config_dir, launcher=real_launcher(tmp_path))
    duplicated = list(check_claude_hooks(root, config_dir, shutil.which))
    assert duplicated[-1].status == "warn"
    assert "runs more than once" in duplicated[-1].detail
    # gated user-scope hooks defer to project/local ones (claude_code/hooks/gate.py): no warning
    uninstall(root, claude_config_dir=config_dir, scope="local")
    install(root, claude_config_dir=config_dir, scope="user", launcher=real_launcher(tmp_path))
    assert statuses(check_claude_hooks(root, config_dir, shutil.which)) == [
        ("claude hooks", "ok"),
        ("claude hooks", "ok"),
    ]

    (root / ".claude" / "settings.json").write_text('{"hooks": {"Stop": "x"}}')
    broken = list(check_claude_hooks(root, config_dir, shutil.which))
    assert broken[0].status == "fail"
    assert "Claude Code ignores every hook in this file" in broken[0].detail


def test_doctor_with_nothing_installed_and_with_the_plugin(tmp_path: Path) -> None:
    root, config_dir = tmp_path / "repo", tmp_path / "cfg"
    root.mkdir()
    hooks = check_claude_hooks(root, config_dir, shutil.which)
    assert statuses(hooks) == [("claude hooks", "warn")]
    assert statuses(check_claude_mcp(root, config_dir, shutil.which)) == [("claude mcp", "warn")]
    config_dir.mkdir()
    (config_dir / "settings.json").write_text(
        json.dumps({"enabledPlugins": {"local-recall@local-recall": True}})
    )
    assert statuses(check_claude_hooks(root, config_dir, shutil.which)) == [("claude plugin", "ok")]
    assert list(check_claude_mcp(root, config_dir, shutil.which)) == []
    # gated user hooks step aside for project hooks, not for the plugin: both would answer
    install(root, claude_config_dir=config_dir, scope="user", launcher=real_launcher(tmp_path))
    both = list(check_claude_hooks(root, config_dir, shutil.which))
    assert both[-1].status == "warn" and "runs more than once" in both[-1].detail
    assert "the local-recall plugin and" in both[-1].detail


def test_doctor_reports_the_claude_cli_as_information_only() -> None:
    assert [c.detail for c in check_claude_cli(lambda name: f"/usr/bin/{name}")] == [
        "found at /usr/bin/claude"
    ]
    missing = list(check_claude_cli(lambda name: None))
    assert missing[0].status == "ok"
    assert "not on PATH" in missing[0].detail


# --- through the real CLI -----------------------------------------------------------------------


def run_cli(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "local_recall", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_init_installs_and_uninstall_removes(repo: Path, tmp_path: Path) -> None:
    config_dir = tmp_path / "claude-config"
    env = clean_env({"CLAUDE_CONFIG_DIR": str(config_dir)})
    first = run_cli("init", "--json", cwd=repo, env=env)
    assert first.returncode == 0, first.stderr
    changes = json.loads(first.stdout)["claude"]
    assert [(c["what"], c["action"]) for c in changes] == [
        ("hooks", "created"),
        ("MCP approval", "created"),
        ("MCP server", "created"),
        *[("agent guidance", "created")] * 6,
    ]
    entry = read(repo / ".mcp.json")["mcpServers"]["local-recall"]
    assert Path(entry["command"]).is_file()  # absolute (not on PATH here): works from any cwd
    assert "env" not in entry
    command = read(repo / ".claude" / "settings.json")["hooks"]["SessionStart"][0]["hooks"][0][
        "command"
    ]
    assert hook_subcommand(command) == "session-start"

    second = run_cli("init", "--json", cwd=repo / "local-recall", env=env)
    assert [c["action"] for c in json.loads(second.stdout)["claude"]] == ["unchanged"] * 9

    gone = run_cli("uninstall", cwd=repo, env=env)
    assert gone.returncode == 0, gone.stderr
    assert not (repo / ".mcp.json").exists()
    assert not (repo / ".claude").exists()
    assert (repo / "local-recall" / "config.toml").is_file()  # memories and config stay


def test_cli_init_no_claude_and_refusal_message(repo: Path, tmp_path: Path) -> None:
    env = clean_env({"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")})
    skipped = run_cli("init", "--no-claude", "--json", cwd=repo, env=env)
    assert json.loads(skipped.stdout)["claude"] == []
    assert not (repo / ".mcp.json").exists()

    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text("{,}")
    refused = run_cli("init", cwd=repo, env=env)
    assert refused.returncode == 1
    assert "settings.json: not valid JSON" in refused.stderr
    assert refused.stderr.count("\n") == 1
    assert (repo / ".claude" / "settings.json").read_text() == "{,}"


def test_cli_user_scope_writes_under_claude_config_dir(repo: Path, tmp_path: Path) -> None:
    config_dir = tmp_path / "cfg"
    env = clean_env({"CLAUDE_CONFIG_DIR": str(config_dir)})
    done = run_cli("init", "--scope", "user", cwd=repo, env=env)
    assert done.returncode == 0, done.stderr
    assert installed_hooks(read(config_dir / "settings.json"))
    assert not (repo / ".claude" / "settings.json").exists()


# --- the plugin -----------------------------------------------------------------------------------


def test_plugin_hooks_and_server_match_what_init_writes() -> None:
    """The plugin runs the same hooks as `init --scope user` (gated: the plugin runs in every
    repository), with the guarded prompt command and `mcp_tool` of its own server beside it,
    and `local-recall` from PATH."""
    on_path = Launcher(("local-recall",))
    plugin = REPO_ROOT / "hooks"
    hooks = read(plugin / "hooks" / "hooks.json")
    # its server is named plugin:local-recall:local-recall for the mcp_tool handler
    expected = plan_settings_install(
        {}, on_path, server=PLUGIN_MCP_SERVER, gate=True, server_everywhere=True
    )["hooks"]
    assert hooks["hooks"] == expected
    server = read(plugin / ".mcp.json")["mcpServers"]["local-recall"]
    assert is_our_mcp_entry(server)
    assert "env" not in server  # the root comes from the session's directory
    manifest = read(plugin / ".claude-plugin" / "plugin.json")
    market = read(plugin / ".claude-plugin" / "marketplace.json")
    assert manifest["name"] == market["plugins"][0]["name"] == "local-recall"
    assert manifest["version"] == market["plugins"][0]["version"]


# --- end to end with the real Claude Code CLI ---------------------------------------------------

PLUGIN_DIR = REPO_ROOT / "hooks"
# Hooks must not leave a daemon or an extraction run behind when the test ends, and the prompt
# hook skips its search (it runs, which is what these tests check; docs/hooks.md tests the rest).
QUIET_HOOKS = {
    "LOCAL_RECALL_HOOKS_START_DAEMON": "false",
    "LOCAL_RECALL_EXTRACTION_ENABLED": "false",
    "LOCAL_RECALL_HOOKS_PROMPT_TOKENS": "0",
}


def tool_results(body: JSONDict) -> list[str]:
    """The text of every tool_result block in a Messages request."""
    found = []
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                if isinstance(inner, list):
                    inner = "".join(str(b.get("text", "")) for b in inner if isinstance(b, dict))
                found.append(str(inner))
    return found


def search_then_answer(tool: str, query: str) -> Any:
    """A model that calls `tool` once with `query`, then answers."""

    def respond(body: JSONDict) -> Reply:
        if tool_results(body):
            return text_reply("Found it.")
        if tool in tool_names(body):
            return tool_use_reply(tool, {"query": query})
        return text_reply(f"{tool} was not offered")

    return respond


def seed_memory(root: Path) -> str:
    from local_recall.recall import Recall
    from local_recall.settings import Settings

    recall = Recall.open(settings=Settings(root=root, environ=clean_env()))
    recall.init()
    return recall.add(
        "Use filelock for cross-process dedup",
        "We picked filelock over fcntl because fcntl does not exist on Windows.",
        scope="file:local_recall/store.py",
    ).id


def recording_launcher(folder: Path, calls: Path) -> Path:
    """`folder/local-recall`: runs this interpreter's local_recall, first appending its
    arguments to `calls` (the log of which hooks Claude Code ran)."""
    folder.mkdir()
    wrapper = folder / "local-recall"
    wrapper.write_text(
        f'#!/bin/sh\necho "$@" >> {shlex.quote(str(calls))}\n'
        f'exec {shlex.quote(sys.executable)} -m local_recall "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper


def ask_claude(
    cwd: Path, home: Path, tool: str, *, allow: str, extra_env: dict[str, str] | None = None
) -> tuple[list[JSONDict], str]:
    with FakeAnthropic(search_then_answer(tool, "filelock fcntl")) as api:
        env = offline_env(home, api.url, extra={**QUIET_HOOKS, **(extra_env or {})})
        done = run_claude(
            claude_or_fail(),
            ["-p", "Why do we use filelock?", "--allowedTools", allow],
            cwd=cwd,
            env=env,
        )
        assert done.returncode == 0, done.stderr
        return [r.body for r in api.message_requests()], done.stdout


@pytest.mark.slow
@requires_claude
def test_claude_code_uses_the_server_and_hooks_that_init_installed(tmp_path: Path) -> None:
    root = git_init(tmp_path / "my repo")  # a space in the path: .mcp.json passes it verbatim
    memory_id = seed_memory(root)
    home = tmp_path / "home"
    init = run_cli("init", cwd=root, env=clean_env({"CLAUDE_CONFIG_DIR": str(home / ".claude")}))
    assert init.returncode == 0, init.stderr

    # Interactive sessions need the project server approved; init's settings.local.json entry
    # does that (`claude mcp list` starts the server to check its health).
    listed = run_claude(
        claude_or_fail(), ["mcp", "list"], cwd=root, env=offline_env(home, "http://127.0.0.1:9")
    )
    assert "local-recall" in listed.stdout
    assert "Connected" in listed.stdout, listed.stdout

    tool = "mcp__local-recall__search_memories"
    requests, stdout = ask_claude(root, home, tool, allow="mcp__local-recall")
    assert tool in tool_names(requests[0])
    results = tool_results(requests[-1])
    assert len(results) == 1
    assert memory_id in results[0]
    assert "Use filelock for cross-process dedup" in results[0]
    assert "Found it." in stdout

    # Hook commands are shell strings: a launcher under a folder with a space must be quoted.
    # The wrapper records each call, so the log proves which hooks Claude Code ran.
    calls = tmp_path / "calls.txt"
    wrapper = recording_launcher(tmp_path / "bin dir", calls)
    report = install(root, claude_config_dir=home / ".claude", launcher=Launcher((str(wrapper),)))
    assert [c.action for c in settings_changes(report)] == ["updated", "unchanged", "updated"]
    requests, _ = ask_claude(root, home, tool, allow="mcp__local-recall")
    assert memory_id in tool_results(requests[-1])[0]
    logged = calls.read_text().splitlines()
    assert "mcp" in logged
    assert "hook session-start" in logged
    # UserPromptSubmit has two handlers (docs/hooks.md): the guarded command runs unless the
    # session's MCP server, connected in time on a busy machine, answered first. Either is
    # init's; the command must reach the quoted launcher when it runs.
    written = json.loads((root / ".claude" / "settings.json").read_text())
    prompt_hooks = [h for g in written["hooks"]["UserPromptSubmit"] for h in g["hooks"]]
    command = next(h["command"] for h in prompt_hooks if h["type"] == "command")
    assert shlex.split(command)[-3:] == [str(wrapper), "hook", "user-prompt-submit"]
    assert any(h["type"] == "mcp_tool" for h in prompt_hooks)


@pytest.mark.slow
@requires_claude
def test_plugin_validates_installs_and_serves(tmp_path: Path) -> None:
    claude = claude_or_fail()
    home = tmp_path / "home"
    env = offline_env(home, "http://127.0.0.1:9")
    for target in (PLUGIN_DIR, PLUGIN_DIR / ".claude-plugin" / "plugin.json"):
        checked = run_claude(
            claude, ["plugin", "validate", "--strict", str(target)], cwd=tmp_path, env=env
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "Validation passed" in checked.stdout
    # Claude Code's own schema accepts the hook entries init writes (with a path to quote):
    # validate them as the hooks.json of a copy of the plugin.
    copy = tmp_path / "plugin-copy"
    shutil.copytree(PLUGIN_DIR, copy)
    (copy / ".claude-plugin" / "marketplace.json").unlink()
    written = plan_settings_install({}, Launcher(("/opt/my tools/bin/local-recall",)))
    (copy / "hooks" / "hooks.json").write_text(json.dumps({"hooks": written["hooks"]}))
    checked = run_claude(
        claude, ["plugin", "validate", "--strict", str(copy)], cwd=tmp_path, env=env
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    (copy / "hooks" / "hooks.json").write_text('{"hooks": {"SessionStart": "not a list"}}')
    rejected = run_claude(claude, ["plugin", "validate", str(copy)], cwd=tmp_path, env=env)
    assert rejected.returncode == 1  # the check above can fail

    added = run_claude(
        claude, ["plugin", "marketplace", "add", str(PLUGIN_DIR)], cwd=tmp_path, env=env
    )
    assert added.returncode == 0, added.stdout + added.stderr
    installed = run_claude(
        claude,
        ["plugin", "install", "local-recall@local-recall", "--scope", "user"],
        cwd=tmp_path,
        env=env,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr

    root = git_init(tmp_path / "repo")
    memory_id = seed_memory(root)
    (root / "src").mkdir()
    tool = "mcp__plugin_local-recall_local-recall__search_memories"
    # The plugin runs `local-recall` from PATH (it requires `pip install local-recall`), from a
    # subfolder: the server finds the repository by walking up to .git. The wrapper on PATH
    # records each call, so the log shows which hooks ran.
    calls = tmp_path / "calls.txt"
    wrapper = recording_launcher(tmp_path / "bin", calls)
    path = f"{wrapper.parent}:{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"
    requests, _ = ask_claude(
        root / "src",
        home,
        tool,
        allow="mcp__plugin_local-recall_local-recall",
        extra_env={"PATH": path},
    )
    assert tool in tool_names(requests[0])
    assert memory_id in tool_results(requests[-1])[0]
    assert "hook session-start" in calls.read_text().splitlines()
    # A repository without local-recall: the plugin's hooks (user scope: every repository)
    # stop at their gate, no hook process starts; its MCP server (Claude Code starts a
    # plugin's servers in every session) answers the model's search with an error and writes
    # nothing, so that no later hook finds a local-recall/ it made.
    calls.unlink()
    elsewhere = git_init(tmp_path / "elsewhere")
    requests, _ = ask_claude(
        elsewhere,
        home,
        tool,
        allow="mcp__plugin_local-recall_local-recall",
        extra_env={"PATH": path},
    )
    assert "run `local-recall init`" in tool_results(requests[-1])[0]
    logged = calls.read_text().splitlines() if calls.exists() else []
    assert [line for line in logged if line.startswith("hook")] == [], logged
    assert sorted(p.name for p in elsewhere.iterdir()) == [".git"]


# --- skills and slash commands (claude_code/guidance.py) ------------------------------------------


def test_guidance_plan_touches_only_files_identical_to_ours() -> None:
    shipped = {"skills/a/SKILL.md": "ours", "commands/b.md": "ours too"}
    present = {"skills/a/SKILL.md": None, "commands/b.md": "a person's edit"}
    assert plan_guidance(shipped, present, adding=True) == {
        "skills/a/SKILL.md": "created",
        "commands/b.md": KEPT,
    }
    installed = {"skills/a/SKILL.md": "ours", "commands/b.md": "a person's edit"}
    assert plan_guidance(shipped, installed, adding=False) == {
        "skills/a/SKILL.md": "removed",
        "commands/b.md": KEPT,
    }


def test_an_edited_command_is_kept_by_install_and_uninstall(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    edited = root / ".claude" / "commands" / "recall.md"
    edited.parent.mkdir(parents=True)
    edited.write_text("my own /recall\n")
    report = install(root, claude_config_dir=tmp_path / "cfg", launcher=LR)
    assert (edited, KEPT) in [(c.path, c.action) for c in guidance_changes(report)]
    assert edited.read_text() == "my own /recall\n"
    uninstall(root, claude_config_dir=tmp_path / "cfg")
    assert edited.read_text() == "my own /recall\n"
    assert sorted(p.name for p in (root / ".claude").rglob("*")) == ["commands", "recall.md"]


def test_a_symlinked_skills_folder_is_never_written_through(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / ".claude").mkdir(parents=True)
    (root / ".claude" / "skills").symlink_to(outside)  # a hostile checkout
    report = install(root, claude_config_dir=tmp_path / "cfg", launcher=LR)
    assert list(outside.iterdir()) == []
    skills = [c for c in guidance_changes(report) if "skills" in c.path.parts]
    skills_dir = root / ".claude" / "skills"
    assert [c.action for c in skills] == [f"not written ({skills_dir} is a symbolic link)"] * 3


def test_user_scope_installs_guidance_into_the_claude_config_dir(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    config = tmp_path / "cfg"
    install(root, claude_config_dir=config, scope="user", launcher=LR)
    assert (config / "skills" / "saving-memory" / "SKILL.md").is_file()
    assert (config / "commands" / "remember.md").is_file()
    assert not (root / ".claude" / "skills").exists()
    uninstall(root, claude_config_dir=config, scope="user")
    assert not (config / "skills").exists() and not (config / "commands").exists()


def test_uninstalling_one_scope_keeps_the_server_the_other_still_uses(tmp_path: Path) -> None:
    """`init` + `init --scope user` (every folder served), then `uninstall --scope user`: the
    project hooks' prompt handler and the agent's tools still need .mcp.json and its approval."""
    root, config = tmp_path / "repo", tmp_path / "cfg"
    root.mkdir()
    install(root, claude_config_dir=config, launcher=LR)
    install(root, claude_config_dir=config, scope="user", launcher=LR)
    report = uninstall(root, claude_config_dir=config, scope="user")
    assert {c.what for c in report.changes if c.action != "absent"} <= {"hooks", "agent guidance"}
    assert not (config / "settings.json").exists()
    assert is_our_mcp_entry(read(root / ".mcp.json")["mcpServers"]["local-recall"])
    assert read(root / ".claude" / "settings.local.json")["enabledMcpjsonServers"] == [
        "local-recall"
    ]
    assert installed_hooks(read(root / ".claude" / "settings.json"))
    uninstall(root, claude_config_dir=config)  # the last one takes everything
    assert not (root / ".mcp.json").exists() and not (root / ".claude").exists()
