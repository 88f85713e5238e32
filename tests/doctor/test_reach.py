"""Doctor: can the hooks fire from where the user starts Claude Code? Read from real
transcript files (the `cwd` each records) and real settings files; then the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from local_recall.capture.transcripts.project_dirs import encode_project_dir
from local_recall.claude_code.install.apply import install
from local_recall.claude_code.install.plan import Launcher
from local_recall.doctor.reach import check_hooks_reach, session_start_dirs
from tests.conftest import clean_env, git_init

LR = Launcher(("local-recall",))


def started_session(config_dir: Path, cwd: Path, session: str, *, age_days: float = 0) -> Path:
    folder = config_dir / "projects" / encode_project_dir(str(cwd))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.jsonl"
    entry = {"type": "user", "cwd": str(cwd), "sessionId": session, "message": {"content": "hi"}}
    path.write_text(json.dumps(entry) + "\n", encoding="utf-8")
    then = time.time() - age_days * 86400
    os.utime(path, (then, then))
    return path


def test_sessions_started_in_a_subfolder_are_named_until_user_hooks_serve_them(
    tmp_path: Path,
) -> None:
    root, config = git_init(tmp_path / "repo"), tmp_path / "cfg"
    (root / "src" / "pkg").mkdir(parents=True)
    install(root, claude_config_dir=config, launcher=LR)
    started_session(config, root, "s-root")
    started_session(config, root / "src" / "pkg", "s-sub1")
    started_session(config, root / "src" / "pkg", "s-sub2")
    started_session(config, root / "src", "s-old", age_days=40)  # too old to count
    assert session_start_dirs(root, config, now=time.time()) == {
        root: 1,
        root / "src" / "pkg": 2,
    }
    [check] = check_hooks_reach(root, config, everywhere=False, installed=True, here=root)
    assert check.status == "warn"
    assert check.detail.startswith("2 session(s) of the last 30 days started in src/pkg/:")
    assert "local-recall init --scope user" in check.detail
    # doctor run from a subfolder no session started in yet: that folder is named
    [here] = check_hooks_reach(root, config, everywhere=False, installed=True, here=root / "src")
    assert "src/" in here.detail and "src/pkg/" in here.detail
    [served] = check_hooks_reach(root, config, everywhere=True, installed=True, here=root)
    assert served.status == "ok" and "every folder" in served.detail


def test_sessions_at_the_root_only_are_fine_and_nothing_installed_says_nothing(
    tmp_path: Path,
) -> None:
    root, config = git_init(tmp_path / "repo"), tmp_path / "cfg"
    started_session(config, root, "s-root")
    assert list(check_hooks_reach(root, config, everywhere=False, installed=False, here=root)) == []
    install(root, claude_config_dir=config, launcher=LR)
    [check] = check_hooks_reach(root, config, everywhere=False, installed=True, here=root)
    assert check.status == "ok"
    assert check.detail == "sessions start in the root, where the hooks run"


def test_doctor_cli_warns_then_is_happy_after_init_scope_user(tmp_path: Path) -> None:
    root, config = git_init(tmp_path / "repo"), tmp_path / "cfg"
    (root / "src").mkdir()
    env = clean_env({"CLAUDE_CONFIG_DIR": str(config), "LOCAL_RECALL_HOOKS_START_DAEMON": "false"})

    def cli(*args: str, cwd: Path = root) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "local_recall", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    init = cli("init")
    assert init.returncode == 0, init.stderr
    assert f"Claude Code hooks fire when `claude` starts in {root} (project scope)" in init.stdout
    assert "local-recall init --scope user" in init.stdout
    started_session(config, root / "src", "s-sub")
    reach = [
        c for c in json.loads(cli("doctor", "--json").stdout) if c["name"] == "claude hooks reach"
    ]
    assert [c["status"] for c in reach] == ["warn"]
    assert "started in src/" in reach[0]["detail"]

    user = cli("init", "--scope", "user", "--json", cwd=root / "src")
    assert user.returncode == 0, user.stderr
    assert json.loads(user.stdout)["claude_hooks_fire"] == "anywhere"
    checks = json.loads(cli("doctor", "--json", cwd=root / "src").stdout)
    hooks = [(c["name"], c["status"]) for c in checks if c["name"].startswith("claude hooks")]
    assert hooks == [
        ("claude hooks", "ok"),
        ("claude hooks", "ok"),
        ("claude hooks reach", "ok"),
    ], checks
