"""The repository a publish speaks for: its remote URL (without credentials), default branch and
commit, from git (two short commands; publish only, never on a search path)."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

from local_recall.errors import InvalidInput
from local_recall.lifecycle.provenance import current_head
from local_recall.org.plan import (
    RepoIdentity,
    check_dataset_name,
    clean_remote,
    dataset_name,
    is_local_remote,
)

GIT_TIMEOUT_SECONDS = 5.0


def _git(root: Path, environ: Mapping[str, str], *args: str) -> str | None:
    env = {**environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            timeout=GIT_TIMEOUT_SECONDS,
            env=env,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", errors="replace").strip() or None


def remote_url(root: Path, environ: Mapping[str, str]) -> str | None:
    """`origin`'s URL, else the first remote's; without credentials."""
    found = _git(root, environ, "config", "--get-regexp", r"^remote\..*\.url$")
    if not found:
        return None
    urls = {}
    for line in found.splitlines():
        key, _, url = line.partition(" ")
        urls[key.removeprefix("remote.").removesuffix(".url")] = url.strip()
    url = urls.get("origin") or next(iter(urls.values()), "")
    return clean_remote(url) or None


def default_branch(root: Path, environ: Mapping[str, str]) -> str | None:
    """What the remote calls its default branch (`origin/HEAD`), else GitLab CI's
    CI_DEFAULT_BRANCH, else the branch checked out."""
    ref = _git(root, environ, "symbolic-ref", "--quiet", "refs/remotes/origin/HEAD")
    if ref and ref.startswith("refs/remotes/origin/"):
        return ref.removeprefix("refs/remotes/origin/")
    if environ.get("CI_DEFAULT_BRANCH"):
        return environ["CI_DEFAULT_BRANCH"]
    return current_head(root, environ).branch


def repo_identity(root: Path, environ: Mapping[str, str], name: str = "") -> RepoIdentity:
    """This repository's identity; `name` (the `[org] name` key or `--name`) overrides the
    dataset name derived from the remote. InvalidInput when neither gives one."""
    remote = remote_url(root, environ)
    if name:
        chosen = check_dataset_name(name)
    elif remote and is_local_remote(remote):
        raise InvalidInput(
            f"this repository's remote is a path on this machine ({remote[:200]!r}): naming the "
            "org dataset after it would put that path in a shared name; set [org] name in "
            "local-recall/config.toml (or pass --name), e.g. acme--payments"
        )
    elif remote:
        chosen = dataset_name(remote)
    else:
        raise InvalidInput(
            "this repository has no remote URL to name its org dataset; add one "
            "(git remote add origin ...), or set [org] name / pass --name"
        )
    return RepoIdentity(
        name=chosen,
        remote=remote or "",
        branch=default_branch(root, environ),
        commit=current_head(root, environ).commit,
    )
