"""The environment every `git` command of lifecycle/ runs with: the caller's (the settings'
environ), else — none or empty — this process's: the one place lifecycle/ falls back to
`os.environ`, for a library caller without settings. Git's optional locks are off (a read never
blocks a user's `git commit`) and the locale is C (output is parsed in English)."""

from __future__ import annotations

import os
from collections.abc import Mapping


def git_environment(environ: Mapping[str, str] | None) -> dict[str, str]:
    return {
        **(environ or os.environ),
        "GIT_OPTIONAL_LOCKS": "0",
        "LC_ALL": "C",
    }
