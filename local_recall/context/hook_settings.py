"""A hook's settings: [hooks] and search.default_limit of repo/config.py's schema, cached as
JSON in state/ while config.toml and the LOCAL_RECALL_* variables are unchanged. The same for
every agent's hooks, and for the daemon answering a hook (it reads them with the hook's
environment). Light: a hook's process imports this on every prompt; what the settings turn
into (`tiers`, `learning`) is imported where it is used."""

# No `from __future__ import annotations` here: NamedTuple turns string annotations into
# ForwardRefs, compiling each one at import (~0.25 ms a field) on every prompt.

import contextlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from local_recall.repo.config_trust import user_config_path
from local_recall.repo.files import read_bytes_nofollow, stat_key
from local_recall.repo.layout import Layout
from local_recall.repo.received_env import checked_variables

if TYPE_CHECKING:
    from local_recall.context.prompt import Tiers
    from local_recall.learning.learned import LearnSettings


class HookSettings(NamedTuple):
    """[hooks] and search.default_limit of repo/config.py's schema (defaults come from there)."""

    session_start_tokens: int
    prompt_tokens: int
    prompt_min_score: float
    query_timeout_ms: int
    start_daemon: bool
    search_limit: int
    summaries_count: int = 3  # [summaries] session_start_count
    summaries_tokens: int = 800  # [summaries] session_start_tokens
    inject_unreviewed: bool = True  # [review] inject_unreviewed
    prompt_pointers: int = 3  # [hooks] prompt_pointers
    prompt_pointer_min_score: float = 0.0  # [hooks] prompt_pointer_min_score
    prompt_full_tokens: int = 400  # [hooks] prompt_full_tokens
    prompt_pointer_gap: float = 0.25  # [hooks] prompt_pointer_gap
    learn_calibrate: bool = False  # [learning] calibrate
    learn_track_record: bool = False  # [learning] track_record
    learn_half_life_days: float = 90.0  # [learning] half_life_days
    learn_disputed: bool = True  # [learning] disputed
    config_error: str | None = None

    @property
    def learning(self) -> "LearnSettings":
        """What learning/learned.py needs: [learning] and the configured cut-offs."""
        from local_recall.learning.learned import LearnSettings

        return LearnSettings(
            self.learn_calibrate,
            self.learn_track_record,
            self.learn_half_life_days,
            self.prompt_min_score,
            self.prompt_pointer_min_score,
        )

    @property
    def tiers(self) -> "Tiers":
        from local_recall.context.prompt import Tiers

        return Tiers(
            self.prompt_tokens,
            self.prompt_min_score,
            self.prompt_pointers,
            self.prompt_pointer_min_score,
            self.prompt_full_tokens,
            self.prompt_pointer_gap,
        )


SETTINGS_CACHE = "hook-settings.json"
# What a hook's settings and layout depend on besides LOCAL_RECALL_*: the user config's place
# (repo/config_trust.py) and a read-only checkout's cache (repo/layout.py). A hook sends these
# with the request its daemon answers, so the daemon reads the settings the hook would.
ENVIRONMENT_NAMES = frozenset({"HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"})
MAX_VALUE_CHARS = 4096


def hook_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables of `environ` a hook's settings and layout depend on, as the daemon takes
    them (`checked_hook_environment`: one value longer than that would lose every answer)."""
    return {
        name: value
        for name, value in environ.items()
        if is_hook_variable(name) and len(value) <= MAX_VALUE_CHARS
    }


def is_hook_variable(name: str) -> bool:
    return name.startswith("LOCAL_RECALL_") or name in ENVIRONMENT_NAMES


def checked_hook_environment(value: object) -> dict[str, str] | None:
    """A hook's variables as the daemon received them: those names only, string values of
    bounded size; None when it is not such a mapping."""
    return checked_variables(value, is_hook_variable, MAX_VALUE_CHARS)


def settings_key(layout: Layout, environ: Mapping[str, str]) -> list[Any]:
    """What the settings depend on: config.toml's identity and the LOCAL_RECALL_* variables."""
    config: list[list[int] | None] = []
    for path in (layout.config_path, user_config_path(environ)):
        key = stat_key(path)
        config.append(None if key is None else list(key))
    overrides = sorted([k, v] for k, v in environ.items() if k.startswith("LOCAL_RECALL_"))
    # the fields: a cache written by an older version lacks the newer keys
    return [config, overrides, list(HookSettings._fields)]


def read_hook_settings(layout: Layout, environ: Mapping[str, str]) -> HookSettings:
    """The hook settings, from a small JSON cache in state/ while config.toml and the
    environment are unchanged: importing tomllib and the config schema costs more than the
    rest of a warm prompt hook."""
    key = settings_key(layout, environ)
    cache = layout.state_dir / SETTINGS_CACHE
    try:
        data = json.loads(read_bytes_nofollow(cache))
        if data["key"] == key:
            return HookSettings(**data["settings"])
    except (OSError, ValueError, TypeError, KeyError):
        pass
    settings = load_hook_settings(layout, environ)
    if settings.config_error is None:
        from local_recall.repo.files import write_text_atomic

        with contextlib.suppress(Exception):  # a read-only checkout just re-reads next time
            write_text_atomic(cache, json.dumps({"key": key, "settings": settings._asdict()}))
    return settings


def load_hook_settings(layout: Layout, environ: Mapping[str, str]) -> HookSettings:
    """The hook settings from config.toml; a broken config gives the defaults with the user
    config and LOCAL_RECALL_* variables still applied (and the error, to log)."""
    from local_recall.repo.config import load_config_or_defaults

    config, error = load_config_or_defaults(
        layout.config_path, environ, user_path=user_config_path(environ)
    )
    hooks = config.hooks
    return HookSettings(
        session_start_tokens=hooks.session_start_tokens,
        prompt_tokens=hooks.prompt_tokens,
        prompt_min_score=hooks.prompt_min_score,
        query_timeout_ms=hooks.query_timeout_ms,
        start_daemon=hooks.start_daemon,
        search_limit=config.search.default_limit,
        summaries_count=config.summaries.session_start_count if config.summaries.enabled else 0,
        summaries_tokens=config.summaries.session_start_tokens,
        inject_unreviewed=config.review.inject_unreviewed,
        prompt_pointers=hooks.prompt_pointers,
        prompt_pointer_min_score=hooks.prompt_pointer_min_score,
        prompt_full_tokens=hooks.prompt_full_tokens,
        prompt_pointer_gap=hooks.prompt_pointer_gap,
        learn_calibrate=config.learning.calibrate,
        learn_track_record=config.learning.track_record,
        learn_half_life_days=config.learning.half_life_days,
        learn_disputed=config.learning.disputed,
        config_error=error,
    )
