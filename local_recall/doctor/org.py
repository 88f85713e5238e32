"""doctor's look at the org index (`[org]`, docs/org.md): where it is, the name this repository
publishes under, and, when the prompt hook searches it, how old the local copy is. It sends no
request to the store: doctor stays fast, and works offline."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from local_recall.doctor.check import FAIL, OK, WARN, Check
from local_recall.errors import RecallError
from local_recall.org.plan import is_remote, shown_uri
from local_recall.repo.config_trust import NO_SECRETS, credentials_in_uri


def check_org(
    uri: str,
    *,
    hook: bool,
    own_name: Callable[[], str | None],
    copy_age: Callable[[], float | None],
    stale_after: float,
) -> Iterable[Check]:
    """`uri`: [org] uri as configured (shown here without credentials); `copy_age`: seconds
    since `org pull` copied it, None when there is no copy of it; `stale_after`: the age at
    which searches start naming the copy as old."""
    if not uri:
        return
    found = credentials_in_uri(uri) if is_remote(uri) else None
    uri = shown_uri(uri)
    if found is not None:  # from the environment or the user's config: the committed is dropped
        yield Check("org index", FAIL, f"{uri}: the org URI holds {found}; {NO_SECRETS}")
        return
    try:
        name = own_name()
    except RecallError as exc:
        name, why = None, str(exc)
    else:
        why = "set [org] name, or give the repository a git remote"
    if name is None:
        yield Check("org index", WARN, f"{uri}; no dataset name for this repository: {why}")
    else:
        yield Check("org index", OK, f"{uri}; this repository publishes as {name}")
    if not hook:
        yield Check("org in prompts", OK, "off ([org] hook = false): prompts search this repo")
        return
    try:
        age = copy_age()
    except RecallError as exc:
        yield Check("org in prompts", WARN, f"the local copy cannot be read: {exc}")
        return
    if age is None:
        yield Check(
            "org in prompts",
            WARN,
            f"[org] hook = true but there is no local copy of {uri}: run `local-recall org "
            "pull` (until then prompts search this repository only)",
        )
    elif age > stale_after:
        yield Check(
            "org in prompts",
            WARN,
            f"the local copy is {_age(age)} old: run `local-recall org pull` (e.g. from cron); "
            "what was published since is not found",
        )
    else:
        yield Check("org in prompts", OK, f"the local copy was pulled {_age(age)} ago")


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{max(0, round(seconds))} s"
    if seconds < 7200:
        return f"{round(seconds / 60)} min"
    if seconds < 172_800:
        return f"{round(seconds / 3600)} h"
    return f"{round(seconds / 86_400)} days"
