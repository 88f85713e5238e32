"""A second local user for tests where one is involved (another user's files in /tmp).

As root, `another_user()` makes a throwaway account once (`useradd`, no home, no login) and
`as_another_user` runs a command as it (`setpriv`). Elsewhere the tests that need it skip."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

NAME = "lr-other-user"


def another_user() -> pwd.struct_passwd:
    """The throwaway user (made now if missing); skips the test when it cannot be had."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("a second local user needs root and setpriv")
    try:
        return pwd.getpwnam(NAME)
    except KeyError:
        pass
    if shutil.which("useradd") is None:
        pytest.skip("a second local user needs useradd")
    made = subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", NAME],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        return pwd.getpwnam(NAME)
    except KeyError:
        pytest.skip(f"cannot add a local user: {made.stderr.strip()}")


def as_another_user(*command: str) -> None:
    user = another_user()
    subprocess.run(
        [
            "setpriv",
            f"--reuid={user.pw_uid}",
            f"--regid={user.pw_gid}",
            "--clear-groups",
            *command,
        ],
        check=True,
        timeout=60,
    )


def make_dirs_as_another_user(*paths: Path) -> None:
    """What another local user can do in a sticky world-writable folder like /tmp."""
    as_another_user("mkdir", "-m", "700", *map(str, paths))


@contextlib.contextmanager
def sticky_folder() -> Iterator[Path]:
    """A folder like /tmp (mode 1777: every user may make entries, each only removes their own),
    so that a test's markers go there rather than into the real /tmp."""
    base = Path(tempfile.mkdtemp(prefix="lrsticky", dir="/tmp"))
    base.chmod(0o1777)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)
