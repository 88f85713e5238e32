"""A checkout the user can read but not write: a shared checkout, a CI workspace
owned by another user, a read-only volume. Memories must still be searched and injected, the
derived index and state go to a per-user cache folder keyed by the repository, the daemon runs
with that cache, `doctor` says so, and nothing is written — or even attempted — inside the
checkout.

The suite runs as root, for whom nothing is read-only, so the commands run as `nobody`
(`setpriv`). Where `nobody` cannot execute this Python (it lives under /root), the process
keeps CAP_DAC_READ_SEARCH: it may read and traverse everything, and write only what `nobody`
may — exactly a user who can read the checkout. Not root: the checkout is made read-only for
the current user instead."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from local_recall.daemon.control import DaemonStatus, read_status
from local_recall.recall import Recall
from local_recall.repo.layout import Layout, derived_dir, resolve_layout
from local_recall.settings import Settings
from tests.conftest import clean_env, git_init
from tests.waiting import wait_for

NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
READ_ALL = ["--inh-caps", "+dac_read_search", "--ambient-caps", "+dac_read_search"]


def drop_privileges() -> list[str] | None:
    """The command prefix that runs as an unprivileged user, [] when we are one, None when
    impossible here."""
    if os.getuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        return None
    import local_recall

    # The same interpreter and package as ours: a venv whose base interpreter `nobody` cannot
    # reach may start another Python, with other packages.
    probe = "import local_recall, sys; print(local_recall.__file__, sys.version)"
    expected = f"{local_recall.__file__} {sys.version}"
    for prefix in (NOBODY, [*NOBODY, *READ_ALL]):
        try:
            done = subprocess.run(
                [*prefix, sys.executable, "-c", probe], capture_output=True, text=True, cwd="/"
            )
        except OSError:
            continue
        if done.returncode == 0 and done.stdout.strip() == expected:
            return prefix
    return None


PREFIX = drop_privileges()
pytestmark = pytest.mark.skipif(
    PREFIX is None, reason="cannot run a process as an unprivileged user here (no setpriv)"
)


def tree(root: Path) -> dict[str, tuple[int, int, int]]:
    """Every entry of the checkout: (mode, size, mtime_ns)."""
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            info = os.lstat(os.path.join(folder, name))
            found[os.path.join(folder, name)] = (info.st_mode, info.st_size, info.st_mtime_ns)
    return found


@dataclass
class ReadOnly:
    root: Path
    home: Path
    env: dict[str, str]

    def command(self, *args: str, trace: Path | None = None) -> list[str]:
        """`strace -f` (with `trace`) records every file call of the process and its children,
        the daemon it spawns included."""
        assert PREFIX is not None
        strace = []
        if trace is not None:
            strace = ["strace", "-f", "-qq", "-e", "trace=%file", "-o", str(trace)]
        root_option = [] if args[0] == "hook" else ["--root", str(self.root)]
        return [*PREFIX, *strace, sys.executable, "-P", "-m", "local_recall", *root_option, *args]

    def run(
        self, *args: str, stdin: str = "", trace: Path | None = None, **env: str
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(*args, trace=trace),
            input=stdin,
            capture_output=True,
            text=True,
            env={**self.env, **env},
            cwd=self.root,
            timeout=180,
        )

    def hook(self, event: str, payload: dict[str, str], trace: Path | None = None) -> str:
        full = {"session_id": "s1", "cwd": str(self.root), **payload}
        # the daemon is started by `daemon start` (a traced hook would wait for what it spawns)
        done = self.run(
            "hook", event, stdin=json.dumps(full), trace=trace, LOCAL_RECALL_HOOKS_START_DAEMON="0"
        )
        assert done.returncode == 0 and done.stderr == "", done.stderr
        return done.stdout


@pytest.fixture
def checkout() -> Iterator[ReadOnly]:
    base = Path(tempfile.mkdtemp(prefix="lr-readonly-", dir="/tmp"))
    try:
        os.chmod(base, 0o755)
        root = git_init(base / "repo")
        recall = Recall.open(settings=Settings(root=root, environ=clean_env()))
        recall.init()
        recall.add("Deploy with make ship", "We deploy by running make ship from a release branch.")
        recall.add("Hooks fail open", "A hook never breaks a session: exit 0 and log.")
        recall.sync_index()  # the owner's index and state exist, and are not ours to write
        subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
        subprocess.run(["git", "-C", str(root), "commit", "-qm", "memories"], check=True)
        home = base / "home"
        home.mkdir()
        for folder, dirs, files in os.walk(base):
            for name in dirs + files:
                path = os.path.join(folder, name)
                mode = os.lstat(path).st_mode
                if not stat.S_ISLNK(mode):
                    os.chmod(path, (mode | 0o444 | (0o111 if stat.S_ISDIR(mode) else 0)) & ~0o222)
        if os.getuid() == 0:
            os.chown(home, 65534, 65534)
        os.chmod(home, 0o755)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "LANG": "C.UTF-8",
            "PYTHONUNBUFFERED": "1",
        }
        yield ReadOnly(root, home, env)
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(base)], check=False)
        shutil.rmtree(base, ignore_errors=True)


def daemon_counts(ro: ReadOnly) -> dict[str, int]:
    """What `local-recall daemon status --json`, run as the user, says the daemon counted."""
    status = json.loads(ro.run("daemon", "status", "--json").stdout)
    return dict((status.get("status") or {}).get("counts") or {})


def cached_status(ro: ReadOnly) -> DaemonStatus:
    """What `daemon status` reads (the daemon's lock and status file in the user's cache), read
    here without starting a process: a poll every 0.1 s, where each run of the command as the
    user cost 1-2.5 s of start-up on a loaded machine."""
    return read_status(Layout(ro.root, derived_dir(ro.root, ro.env)))


def daemon_state(ro: ReadOnly) -> str | None:
    status = cached_status(ro)
    return (status.status or {}).get("state") if status.running else None


def cached_counts(ro: ReadOnly) -> dict[str, int]:
    return dict((cached_status(ro).status or {}).get("counts") or {})


def attempted_writes(trace: Path, root: Path) -> list[str]:
    """System calls in an strace log that would create, change or remove something below the
    checkout (an open for writing, mkdir, rename, unlink, ...)."""
    inside = re.escape(str(root))
    calls = re.compile(
        rf'(mkdir|rename|unlink|rmdir|symlink|link|chmod|creat|truncate)\w*\(.*"{inside}'
    )
    opened = re.compile(rf'open\w*\(.*"{inside}[^"]*".*(O_WRONLY|O_RDWR|O_CREAT|O_TRUNC)')
    return [
        line for line in trace.read_text().splitlines() if calls.search(line) or opened.search(line)
    ]


def test_the_cache_folder_comes_from_the_environment(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    a = derived_dir(root, {"XDG_CACHE_HOME": str(tmp_path / "xdg"), "HOME": "/nowhere"})
    assert a is not None and a.parent == (tmp_path / "xdg" / "local-recall").resolve()
    b = derived_dir(root, {"HOME": str(tmp_path / "h")})
    assert b is not None and b.parent == (tmp_path / "h" / ".cache" / "local-recall").resolve()
    assert a.name == b.name and len(a.name) == 24  # keyed by the repository
    assert derived_dir(tmp_path / "other", {"HOME": str(tmp_path / "h")}) != b
    assert derived_dir(root, {"XDG_CACHE_HOME": "relative/path"}) is None
    root.mkdir()
    (root / "local-recall").mkdir()
    writable = resolve_layout(root, {"HOME": str(tmp_path / "h")})
    assert writable == Layout(root) and writable.state_dir == root / "local-recall" / "state"
    settings = Settings(root=root, environ={"HOME": str(tmp_path / "h")})
    assert settings.layout == writable


def test_a_read_only_checkout_is_searched_from_a_user_cache(checkout: ReadOnly) -> None:
    ro = checkout
    before = tree(ro.root)
    traces = []

    folder = ro.home.parent / "traces"  # written by the unprivileged process
    folder.mkdir()
    if os.getuid() == 0:
        os.chown(folder, 65534, 65534)

    def traced(name: str) -> Path | None:
        if shutil.which("strace") is None:
            return None
        traces.append(folder / f"{name}.trace")
        return traces[-1]

    found = ro.run("search", "how do we deploy", "--json", trace=traced("search"))
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)[0]["subject"] == "Deploy with make ship"

    start = ro.hook("session-start", {"source": "startup"}, trace=traced("start"))
    assert "Deploy with make ship" in start and "Hooks fail open" in start
    prompt = ro.hook("user-prompt-submit", {"prompt": "how do we deploy a release?"})
    assert "Deploy with make ship" in prompt

    daemon_trace = traced("daemon")
    # the traced `daemon start` ends when the daemon it spawned does: after `daemon stop`
    tracing = subprocess.Popen(
        ro.command("daemon", "start", "--wait", "90", trace=daemon_trace),
        env=ro.env,
        cwd=ro.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        if daemon_trace is None:
            assert tracing.wait(120) == 0
        else:
            wait_for(lambda: daemon_state(ro) == "running")
        served = ro.hook(
            "user-prompt-submit", {"prompt": "how do we deploy a release?"}, trace=traced("hook")
        )
        assert "Deploy with make ship" in served
        # the daemon answered it (its status file counts queries, written every 5 s)
        wait_for(lambda: cached_counts(ro).get("queries", 0) >= 1)
        assert daemon_counts(ro).get("queries", 0) >= 1  # and the command shows it
        doctor = ro.run("doctor", trace=traced("doctor"))
        assert "read-only" in doctor.stdout or "not writable" in doctor.stdout, doctor.stdout
        cache = derived_dir(ro.root, ro.env)
        assert cache is not None and str(cache) in doctor.stdout
    finally:
        stopped = ro.run("daemon", "stop")
        out, err = tracing.communicate(timeout=120)
    assert stopped.returncode == 0, stopped.stderr
    assert tracing.returncode == 0 and "started" in out, err

    assert tree(ro.root) == before  # nothing inside the checkout changed
    assert (cache / "index").is_dir() and (cache / "state").is_dir()
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    log = (cache / "recall.log").read_text(encoding="utf-8")
    for bad in ("Permission denied", "cannot write", "Traceback", "Read-only"):
        assert bad not in log, log
    for trace in traces:
        assert attempted_writes(trace, ro.root) == [], trace.name


def test_without_a_usable_cache_the_daemon_refuses_in_one_line(checkout: ReadOnly) -> None:
    ro = checkout
    ro.env["HOME"] = "/nonexistent"
    ro.env.pop("XDG_CACHE_HOME", None)
    started = ro.run("daemon", "start", "--wait", "30")
    assert started.returncode == 1
    assert len(started.stderr.strip().splitlines()) == 1, started.stderr
    assert "read-only" in started.stderr or "not writable" in started.stderr
    assert "Traceback" not in started.stderr
    prompt = ro.hook("user-prompt-submit", {"prompt": "how do we deploy a release?"})
    assert "Deploy with make ship" in prompt  # the hooks still answer from the files


def test_files_written_for_a_shared_checkout_follow_the_umask(tmp_path: Path) -> None:
    """A memory one user adds must be readable by the others who share the checkout (it was
    written 0600, so their hooks skipped it); an existing file keeps its mode."""
    root = git_init(tmp_path / "repo")
    env = clean_env()
    script = (
        "import os, sys; os.umask(0o022); from local_recall.__main__ import main; "
        "sys.exit(main(sys.argv[1:]))"
    )

    def cli(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", script, *args], cwd=root, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    cli("init", "--no-claude")
    memory_id = cli("add", "--subject", "Shared", "--body", "Everyone reads this.")
    path = root / "local-recall" / "episodic-memory" / f"{memory_id}.md"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert stat.S_IMODE((root / "local-recall" / "config.toml").stat().st_mode) == 0o644
    path.chmod(0o640)
    cli("edit", memory_id, "--subject", "Shared with the group")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
