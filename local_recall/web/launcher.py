"""Handing the viewer's token to the browser without putting it on a command line.

`local-recall ui` used to run the browser with `http://127.0.0.1:PORT/?token=…` as its
argument, where any local user can read it (`ps`, /proc/PID/cmdline). Now it writes a small
page into the user's private runtime folder (the daemon socket's: 0700, owned by the user,
checked) as a 0600 file, and opens that file: the browser's command line holds only the file's
path. The page sends the browser on to the viewer with the token in the URL's fragment, which
no browser sends to any server; the viewer's script keeps it in the tab's sessionStorage and
clears it from the address bar (static/lib.js)."""

from __future__ import annotations

import contextlib
import html
import os
import secrets
from pathlib import Path

from local_recall.errors import StorageError

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def launcher_page(base: str, token: str) -> str:
    """The page: a redirect to the viewer, token in the fragment (pure)."""
    target = html.escape(f"{base.rstrip('/')}/#token={token}", quote=True)
    return (
        '<!doctype html>\n<html><head><meta charset="utf-8">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f'<meta http-equiv="refresh" content="0; url={target}">\n'
        "<title>local-recall</title></head>\n"
        f'<body><p>Opening the memory viewer… <a href="{target}">open it</a></p></body></html>\n'
    )


def write_launcher(directory: Path, name: str, base: str, token: str) -> Path:
    """Write the page as `directory/name`, readable by this user only; replaced atomically and
    never through a symbolic link. `directory` must be private (the caller checked it)."""
    path = directory / name
    temp = directory / f".{name}.{secrets.token_hex(6)}.tmp"
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), 0o600)
            handle.write(launcher_page(base, token))
        os.replace(temp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise StorageError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
