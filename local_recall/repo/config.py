"""Configuration: `local-recall/config.toml` (committed) + `LOCAL_RECALL_*` overrides.

Every key, its type, default and doc is declared once, as a field of its section's frozen
dataclass (`SearchConfig.min_score`, ...); `SCHEMA` is derived from them and drives validation,
the default config.toml, docs/configuration.md's table and the hooks' settings. Only the
standard library is imported: the hooks load this module.
Validation is strict: an unknown key or a bad value is one `ConfigError` naming the key.
An override is `LOCAL_RECALL_<SECTION>_<KEY>`, e.g. `LOCAL_RECALL_EMBEDDER_PROVIDER=ollama`.
Longer than 400 lines: every key of every section is declared here, once (its doc included),
so that the schema, the docs table and validation cannot drift apart.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from local_recall.errors import ConfigError
from local_recall.repo.config_trust import committed_personal_problem, committed_value_problem
from local_recall.repo.files import read_text_nofollow
from local_recall.repo.toml_errors import toml_error_detail

ENV_PREFIX = "LOCAL_RECALL_"
# LOCAL_RECALL_* variables that are not config keys (they select the repo or mark a process).
NON_CONFIG_ENV = frozenset(
    {"ROOT", "EXTRACTOR", "CLAUDE_BIN", "CONFIG_DIR", "HOOK_DEADLINE_SECONDS"}
)
# Keys an older version knew: read without error (an old config.toml or variable still loads),
# never applied, and listed in `Config.ignored` with the reason (doctor shows it).
RETIRED_KEYS: dict[tuple[str, str], str] = {
    ("search", "ann_threshold"): "retired: the index chooses its vector engine itself",
}
MAX_CONFIG_BYTES = 1_000_000
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


@dataclass(frozen=True, slots=True)
class Key:
    type: type
    default: Any
    doc: str
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None


def _key(
    default: Any,
    doc: str,
    choices: tuple[Any, ...] | None = None,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
) -> Any:
    """A config key: a dataclass field whose metadata holds its schema entry (type = the
    default's type)."""
    spec = Key(type(default), default, doc, choices, minimum, maximum)
    return field(default=default, metadata={"key": spec})


# --- the schema: one frozen dataclass per [section]; SCHEMA below is derived from them ---------


@dataclass(frozen=True, slots=True)
class LogConfig:
    level: str = _key("INFO", "Level written to local-recall/recall.log.", LOG_LEVELS)


@dataclass(frozen=True, slots=True)
class EmbedderConfig:
    provider: str = _key("minilm", "minilm (embedded, no service) or ollama.", ("minilm", "ollama"))
    model: str = _key("", "Model name; empty = the provider's default.")
    ollama_host: str = _key("", "Ollama URL; empty = $OLLAMA_HOST or http://127.0.0.1:11434.")
    timeout_seconds: float = _key(30.0, "Timeout of one embedding request.", minimum=0.1)


@dataclass(frozen=True, slots=True)
class SearchConfig:
    default_limit: int = _key(10, "Hits returned when no limit is given.", minimum=1)
    min_score: float = _key(0.0, "Hits below this score are dropped.", minimum=0, maximum=1)


@dataclass(frozen=True, slots=True)
class HooksConfig:
    session_start_tokens: int = _key(1000, "Token budget of the SessionStart index.", minimum=0)
    prompt_tokens: int = _key(1500, "Token budget of memories added to a prompt.", minimum=0)
    prompt_min_score: float = _key(
        0.5, "Prompt hits at or over this score are injected in full.", minimum=0, maximum=1
    )
    prompt_pointers: int = _key(
        3,
        "Most candidates a prompt gets one pointer line each for, by rank (0 = off).",
        minimum=0,
        maximum=10,
    )
    prompt_full_tokens: int = _key(
        400,
        "With pointers on, tokens of full text a prompt gets (always one memory); other sure "
        "ones get a pointer.",
        minimum=0,
    )
    prompt_pointer_min_score: float = _key(
        0.0,
        "A floor on a pointer's score (0: pointers by rank alone).",
        minimum=0,
        maximum=1,
    )
    prompt_pointer_gap: float = _key(
        0.25,
        "After the first pointer, others only within this many logits of its score.",
        minimum=0,
        maximum=20,
    )
    query_timeout_ms: int = _key(
        300, "How long the prompt hook waits for the daemon's answer.", minimum=10
    )
    start_daemon: bool = _key(True, "SessionStart starts the daemon if none is running.")
    mcp_answers: bool = _key(
        True,
        "Once warm, the MCP server answers the prompt hook from its own search (else the "
        "daemon does).",
    )


@dataclass(frozen=True, slots=True)
class ExtractionConfig:
    enabled: bool = _key(True, "Extract memories from Claude Code transcripts.")
    extractor: str = _key(
        "claude",
        "claude (claude -p), codex (codex exec), gemini (gemini -p) or ollama.",
        ("claude", "codex", "gemini", "ollama"),
    )
    model: str = _key(
        "haiku",
        "Model for extraction (claude -p --model / Ollama model / codex, gemini -m; "
        "haiku there means the CLI's own default).",
    )
    claude_path: str = _key("", "Path of the claude CLI; empty = found on PATH.")
    cli_path: str = _key("", "Path of the codex or gemini CLI; empty = found on PATH.")
    timeout_seconds: float = _key(180.0, "Timeout of one extraction call.", minimum=1)
    max_attempts: int = _key(3, "Attempts per chunk before it is left for later.", minimum=1)
    chunk_chars: int = _key(24_000, "Condensed transcript size per request.", minimum=1000)
    daily_max_calls: int = _key(200, "Extraction calls per day (UTC); 0 = no limit.", minimum=0)
    daily_max_tokens: int = _key(
        2_000_000, "Input+output tokens per day (UTC); 0 = no limit.", minimum=0
    )
    near_duplicate_threshold: float = _key(
        0.9, "Skip a new memory this similar to an existing one.", minimum=0, maximum=1
    )
    min_turns: int = _key(2, "Sessions with fewer new turns wait for more.", minimum=1)
    idle_minutes: float = _key(
        10.0, "A session quiet this long is processed even below min_turns.", minimum=0
    )


@dataclass(frozen=True, slots=True)
class ThinkingConfig:
    enabled: bool = _key(False, "Store Claude's thinking + answer in thinking-memory/.")


@dataclass(frozen=True, slots=True)
class SummariesConfig:
    enabled: bool = _key(True, "Write a summary of each session in session-summaries/.")
    committed: bool = _key(
        True, "Summaries are shared in git; false adds session-summaries/ to the .gitignore."
    )
    session_start_count: int = _key(
        3, "Summaries of the branch injected at SessionStart (0 = none).", minimum=0
    )
    session_start_tokens: int = _key(
        800, "Token budget of the summaries injected at SessionStart.", minimum=0
    )


@dataclass(frozen=True, slots=True)
class DaemonConfig:
    full_pass_seconds: float = _key(300.0, "Period of the full pass.", minimum=5)
    debounce_seconds: float = _key(
        2.0, "Quiet time before a changed transcript is processed.", minimum=0
    )
    idle_exit_minutes: float = _key(
        0.0, "Exit after this long without work or queries; 0 = never.", minimum=0
    )
    start_wait_seconds: float = _key(
        20.0, "How long `daemon start` and `ui` wait for a new daemon to answer.", minimum=0
    )


@dataclass(frozen=True, slots=True)
class LifecycleConfig:
    stale_changed_ratio: float = _key(
        0.5,
        "A memory is stale when an anchor file changed this much since its commit "
        "(lines added + deleted / lines now).",
        minimum=0.01,
    )
    consolidate_cosine: float = _key(
        0.85,
        "consolidate: embeddings this close are near-duplicates when the texts also agree.",
        minimum=0,
        maximum=1,
    )
    consolidate_text_ratio: float = _key(
        65.0,
        "consolidate: the texts agree at this rapidfuzz token_set_ratio (0-100).",
        minimum=0,
        maximum=100,
    )
    consolidate_cosine_alone: float = _key(
        0.95, "consolidate: embeddings this close are near-duplicates alone.", minimum=0, maximum=1
    )


@dataclass(frozen=True, slots=True)
class ReviewConfig:
    inject_unreviewed: bool = _key(
        True, "Hooks inject memories no person reviewed yet, marked [unreviewed]."
    )
    search_unreviewed: bool = _key(
        True, 'MCP search returns unreviewed memories (each row says "unreviewed": true).'
    )


@dataclass(frozen=True, slots=True)
class OrgConfig:
    uri: str = _key(
        "",
        "Where `publish` writes and `search --org` reads the org index (s3://bucket/prefix, "
        "s3+ddb://…, gs://, az://, a folder); never credentials (docs/org.md).",
    )
    name: str = _key("", "This repository's dataset name; empty = from the remote URL.")
    timeout_seconds: float = _key(
        5.0, "`search --org` answers with local hits alone after this long.", minimum=0.1
    )
    hook: bool = _key(
        False, "The prompt hook also searches the local copy made by `local-recall org pull`."
    )


@dataclass(frozen=True, slots=True)
class LearningConfig:
    """What is learned from the sessions' outcomes (docs/hooks.md#what-is-learned)."""

    # Off by default: neither helped held-out prompts in benchmarks/learning_sim.py
    # (benchmarks/README.md#learning-from-sessions).
    calibrate: bool = _key(
        False,
        "The prompt hook's tier cut-offs move (at most 0.1) with how often this repository's "
        "sessions follow pointers and rely on full text.",
    )
    track_record: bool = _key(
        False,
        "Among a prompt's hits, memories sessions followed or relied on go before ones they "
        "ignored (order only, a factor within 0.8-1.2).",
    )
    half_life_days: float = _key(
        90.0, "A session's outcome counts half after this many days.", minimum=1
    )
    signals: bool = _key(
        True,
        "The daemon's pass notes what each session did with the memories it was shown "
        "(followed, relied on, ignored, found wrong) in this user's state/outcomes.jsonl.",
    )
    disputed: bool = _key(
        True,
        "A memory a session found wrong is shown as [disputed: why], as a pointer only, "
        "until a person accepts, edits or rejects it.",
    )


@dataclass(frozen=True, slots=True)
class Config:
    """Validated settings, one typed section per TOML table: `config.search.min_score`."""

    log: LogConfig = field(default_factory=LogConfig)
    embedder: EmbedderConfig = field(default_factory=EmbedderConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    hooks: HooksConfig = field(default_factory=HooksConfig)
    extraction: ExtractionConfig = field(default_factory=ExtractionConfig)
    thinking: ThinkingConfig = field(default_factory=ThinkingConfig)
    summaries: SummariesConfig = field(default_factory=SummariesConfig)
    daemon: DaemonConfig = field(default_factory=DaemonConfig)
    lifecycle: LifecycleConfig = field(default_factory=LifecycleConfig)
    review: ReviewConfig = field(default_factory=ReviewConfig)
    org: OrgConfig = field(default_factory=OrgConfig)
    learning: LearningConfig = field(default_factory=LearningConfig)
    source: Path | None = None
    # committed values not applied: machine keys naming another machine, personal keys asking
    # for more capture or spending (repo/config_trust.py)
    ignored: tuple[str, ...] = ()
    # "section.key" -> where its value came from: "user", "committed" or "env" ("default" when
    # absent)
    origins: Mapping[str, str] = field(default_factory=dict)

    @property
    def values(self) -> dict[str, dict[str, Any]]:
        """Every key by section, as plain values."""
        return {name: self.section(name) for name in SCHEMA}

    def section(self, section: str) -> dict[str, Any]:
        part = getattr(self, section)
        return {key: getattr(part, key) for key in SCHEMA[section]}

    def origin(self, section: str, key: str) -> str:
        """Where a key's value came from: default, user, committed or env."""
        return self.origins.get(f"{section}.{key}", "default")


SECTIONS: dict[str, Callable[..., Any]] = {
    f.name: f.default_factory  # type: ignore[misc]
    for f in fields(Config)
    if f.name not in ("source", "ignored", "origins")
}
SCHEMA: dict[str, dict[str, Key]] = {
    name: {f.name: f.metadata["key"] for f in fields(make())} for name, make in SECTIONS.items()
}


def default_config() -> Config:
    return Config()


def load_config(
    path: Path | None, environ: Mapping[str, str], *, user_path: Path | None = None
) -> Config:
    """Defaults ← the user config ← config.toml ← environment. Raises ConfigError naming the
    bad key. The committed config.toml may not set machine keys off this machine, nor ask
    personal keys for more capture or spending than the user's own value
    (repo/config_trust.py); the user config (`user_path`) and the environment may. Such a
    committed value is not applied and is listed in `Config.ignored` (doctor shows it)."""
    values = {s: {k: spec.default for k, spec in keys.items()} for s, keys in SCHEMA.items()}
    origins: dict[str, str] = {}
    source = None
    ignored: list[str] = []
    for where, committed in ((user_path, False), (path, True)):
        if where is None or not os.path.lexists(where):
            continue
        source = where if committed else source
        for section, key, raw in _read_table(where):
            named = f"{where}: {section}.{key}"
            if (section, key) in RETIRED_KEYS:
                ignored.append(f"{named}: ignored: {RETIRED_KEYS[section, key]}")
                continue
            value = _coerce(section, key, raw, named)
            problem = (
                committed_value_problem(section, key, value)
                or committed_personal_problem(section, key, value, values[section][key])
                if committed
                else None
            )
            if problem is not None:
                ignored.append(f"{named}: ignored: {problem}")
                continue
            values[section][key] = value
            origins[f"{section}.{key}"] = "committed" if committed else "user"
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX):
            continue
        rest = name[len(ENV_PREFIX) :]
        if rest in NON_CONFIG_ENV:
            continue
        retired = next(((s, k) for s, k in RETIRED_KEYS if rest.lower() == f"{s}_{k}"), None)
        if retired is not None:
            ignored.append(f"{name}: ignored: {RETIRED_KEYS[retired]}")
            continue
        section, key = _split_env_name(rest, name)
        values[section][key] = _coerce(section, key, raw, name, from_env=True)
        origins[f"{section}.{key}"] = "env"
    sections = {name: make(**values[name]) for name, make in SECTIONS.items()}
    return Config(**sections, source=source, ignored=tuple(ignored), origins=origins)


def load_config_or_defaults(
    path: Path | None, environ: Mapping[str, str], *, user_path: Path | None = None
) -> tuple[Config, str | None]:
    """For the hooks, which must answer whatever the repository holds: the config, else
    (broken config.toml) the defaults with the user config and LOCAL_RECALL_* variables still
    applied, else the bare defaults. The second value says what was wrong, for the log."""
    try:
        return load_config(path, environ, user_path=user_path), None
    except ConfigError as exc:
        problem = str(exc)
    for user in (user_path, None):
        try:
            return load_config(None, environ, user_path=user), problem
        except ConfigError as exc:
            problem = f"{problem}; {exc}"
    return Config(), problem


def _read_table(path: Path) -> list[tuple[str, str, Any]]:
    """(section, key, value) of a config file, read without following a symlink."""
    text = ""
    try:
        text = read_text_nofollow(path, MAX_CONFIG_BYTES)
        data = tomllib.loads(text)
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {toml_error_detail(text, str(exc))}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    found = []
    for section, table in data.items():
        if section not in SCHEMA:
            raise ConfigError(f"{path}: unknown section [{section}]")
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [{section}] must be a table")
        found += [(section, key, raw) for key, raw in table.items()]
    return found


def _split_env_name(rest: str, name: str) -> tuple[str, str]:
    lowered = rest.lower()
    for section, keys in SCHEMA.items():
        if lowered.startswith(section + "_"):
            key = lowered[len(section) + 1 :]
            if key in keys:
                return section, key
            raise ConfigError(f"{name}: unknown key '{key}' in section [{section}]")
    raise ConfigError(f"{name}: unknown setting (sections: {', '.join(SCHEMA)})")


def _coerce(section: str, key: str, raw: Any, where: str, *, from_env: bool = False) -> Any:
    spec = SCHEMA[section].get(key)
    if spec is None:
        raise ConfigError(
            f"{where}: unknown key (known in [{section}]: {', '.join(SCHEMA[section])})"
        )
    value = _parse_env(spec.type, raw, where) if from_env else raw
    if spec.type is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, spec.type) or (spec.type is not bool and isinstance(value, bool)):
        raise ConfigError(f"{where}: expected {spec.type.__name__}, got {value!r}")
    if isinstance(value, str) and key == "level":
        value = value.upper()
    if spec.choices is not None and value not in spec.choices:
        raise ConfigError(f"{where}: {value!r} is not one of {', '.join(map(str, spec.choices))}")
    if spec.minimum is not None and value < spec.minimum:
        raise ConfigError(f"{where}: {value!r} is below the minimum {spec.minimum}")
    if spec.maximum is not None and value > spec.maximum:
        raise ConfigError(f"{where}: {value!r} is above the maximum {spec.maximum}")
    return value


_BOOLS = {
    "1": True,
    "true": True,
    "yes": True,
    "on": True,
    "0": False,
    "false": False,
    "no": False,
    "off": False,
}
_PARSERS: dict[type, Callable[[str], Any]] = {int: int, float: float, str: str}


def _parse_env(kind: type, raw: str, where: str) -> Any:
    if kind is bool:
        if raw.strip().lower() not in _BOOLS:
            raise ConfigError(f"{where}: expected a boolean (true/false), got {raw!r}")
        return _BOOLS[raw.strip().lower()]
    try:
        return _PARSERS[kind](raw.strip() if kind is not str else raw)
    except ValueError:
        raise ConfigError(f"{where}: expected {kind.__name__}, got {raw!r}") from None
