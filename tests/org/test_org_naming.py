"""An org dataset is never named after a path on this machine (a local remote is
refused with what to do), `org forget NAME` removes the dataset an earlier name or remote left
behind (its memories were listed twice), and `search --org` without a URI does not tell the
user to pass `--to`, which `search` lacks. Real git, a real folder store, the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from local_recall.org.plan import is_local_remote, storage_options
from local_recall.search.index.shared import SharedStore
from tests.conftest import clean_env, git_init


def test_a_local_path_is_not_a_shared_remote() -> None:
    for local in ("/srv/mirror/jinja.git", "../jinja", "jinja", "file:///srv/git/x.git"):
        assert is_local_remote(local), local
    for shared in (
        "git@github.com:pallets/jinja.git",
        "https://github.com/pallets/jinja",
        "ssh://git@gitlab.example.com:2222/team/app.git",
    ):
        assert not is_local_remote(shared), shared


def _cli(
    root: Path, *args: str, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "local_recall", *args],
        cwd=root,
        env=clean_env(dict(env or {})),
        capture_output=True,
        text=True,
        timeout=600,
    )


def _repo(path: Path, remote: str) -> Path:
    root = git_init(path)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", remote], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-q", "--allow-empty", "-m", "c"], check=True)
    assert _cli(root, "init", "--no-claude").returncode == 0
    added = _cli(root, "add", "-s", "Deploys drain the load balancer", "-b", "bluegreen.sh first.")
    assert added.returncode == 0, added.stderr
    return root


def _datasets(uri: Path) -> list[str]:
    return SharedStore(str(uri), storage_options(str(uri), {}, timeout=30)).table_names()


def test_a_local_remote_is_refused_and_an_old_dataset_forgotten(tmp_path: Path) -> None:
    store = tmp_path / "org"
    root = _repo(tmp_path / "jinja", str(tmp_path / "mirror" / "jinja.git"))
    refused = _cli(root, "publish", "--to", str(store))
    assert refused.returncode == 1
    line = refused.stderr.strip()
    assert "\n" not in line and "path on this machine" in line and "[org] name" in line
    assert not store.exists() or not _datasets(store)
    # named by hand, then renamed: the first dataset stays until forgotten
    for name in ("mirror--jinja", "pallets--jinja"):
        done = _cli(root, "publish", "--to", str(store), "--name", name, "--json")
        assert done.returncode == 0, done.stderr
    assert _datasets(store) == ["mirror--jinja", "pallets--jinja"]
    other = _repo(tmp_path / "other", "git@github.com:acme/other.git")
    env = {"LOCAL_RECALL_ORG_URI": str(store)}
    found = json.loads(
        _cli(other, "search", "--org", "--json", "drain the load balancer", env=env).stdout
    )
    assert sorted(h["repo"] for h in found if h.get("repo")) == [
        "mirror--jinja",
        "pallets--jinja",
    ]
    forgot = _cli(root, "org", "forget", "mirror--jinja", "--from", str(store), "--json")
    assert forgot.returncode == 0, forgot.stderr
    assert json.loads(forgot.stdout)["forgotten"] == "mirror--jinja"
    assert _datasets(store) == ["pallets--jinja"]
    found = json.loads(
        _cli(other, "search", "--org", "--json", "drain the load balancer", env=env).stdout
    )
    assert [h["repo"] for h in found if h.get("repo")] == ["pallets--jinja"]
    again = _cli(root, "org", "forget", "mirror--jinja", "--from", str(store))
    assert again.returncode != 0 and "Traceback" not in again.stderr
    assert "no dataset 'mirror--jinja'" in again.stderr and "pallets--jinja" in again.stderr
    odd = _cli(root, "org", "forget", "../../etc", "--from", str(store))
    assert odd.returncode != 0 and "not a usable org dataset name" in odd.stderr


def test_search_org_without_a_uri_names_what_search_takes(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r", "git@github.com:acme/r.git")
    done = _cli(root, "search", "--org", "drain")
    assert done.returncode == 0, done.stderr
    assert "no org URI" in done.stderr and "[org] uri" in done.stderr
    assert "--to" not in done.stderr


def test_search_org_after_forget_says_nothing_matched_and_why(tmp_path: Path) -> None:
    """A search of an org index whose only other dataset was forgotten printed nothing at all."""
    store = tmp_path / "org"
    root = _repo(tmp_path / "a", "git@github.com:acme/a.git")
    assert _cli(root, "publish", "--to", str(store), "--json").returncode == 0
    assert _cli(root, "org", "forget", "github.com--acme--a", "--from", str(store)).returncode == 0
    other = _repo(tmp_path / "b", "git@github.com:acme/b.git")
    env = {"LOCAL_RECALL_ORG_URI": str(store)}
    done = _cli(other, "search", "--org", "zebra quantum", "--mode", "text", env=env)
    assert done.returncode == 0 and done.stdout == "", done.stderr
    lines = done.stderr.strip().splitlines()
    assert any("holds no other repository's memories" in line for line in lines), lines
    assert lines[-1] == 'no memory matched "zebra quantum" in this repository or the org index'
