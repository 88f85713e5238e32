"""Configuration: `local-recall/config.toml` (committed) + `LOCAL_RECALL_*` overrides.

Every key, its type and default lives in `SCHEMA` (docs/configuration.md is its prose twin).
Validation is strict: an unknown key or a bad value is one `ConfigError` naming the key.
An override is `LOCAL_RECALL_<SECTION>_<KEY>`, e.g. `LOCAL_RECALL_EMBEDDER_PROVIDER=ollama`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from local_recall.errors import ConfigError

ENV_PREFIX = "LOCAL_RECALL_"
# LOCAL_RECALL_* variables that are not config keys (they select the repo or mark a process).
NON_CONFIG_ENV = frozenset({"ROOT", "EXTRACTOR", "CLAUDE_BIN", "CONFIG_DIR"})
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


@dataclass(frozen=True, slots=True)
class Key:
    type: type
    default: Any
    doc: str
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None


SCHEMA: dict[str, dict[str, Key]] = {
    "log": {
        "level": Key(str, "INFO", "Level written to local-recall/recall.log.", LOG_LEVELS),
    },
    "embedder": {
        "provider": Key(
            str, "minilm", "minilm (embedded, no service) or ollama.", ("minilm", "ollama")
        ),
        "model": Key(str, "", "Model name; empty = the provider's default."),
        "ollama_host": Key(str, "", "Ollama URL; empty = $OLLAMA_HOST or http://127.0.0.1:11434."),
        "timeout_seconds": Key(float, 30.0, "Timeout of one embedding request.", minimum=0.1),
    },
    "search": {
        "default_limit": Key(int, 10, "Hits returned when no limit is given.", minimum=1),
        "min_score": Key(float, 0.0, "Hits below this score are dropped.", minimum=0, maximum=1),
        "ann_threshold": Key(
            int,
            5_000,
            "Build an ANN vector index once the store has this many memories.",
            minimum=256,
        ),
    },
    "hooks": {
        "session_start_tokens": Key(
            int, 1000, "Token budget of the SessionStart index.", minimum=0
        ),
        "prompt_tokens": Key(int, 1500, "Token budget of memories added to a prompt.", minimum=0),
        "prompt_min_score": Key(
            float, 0.35, "Prompt hits under this score are not injected.", minimum=0, maximum=1
        ),
        "query_timeout_ms": Key(
            int, 300, "How long the prompt hook waits for the daemon's answer.", minimum=10
        ),
        "start_daemon": Key(bool, True, "SessionStart starts the daemon if none is running."),
    },
    "extraction": {
        "enabled": Key(bool, True, "Extract memories from Claude Code transcripts."),
        "extractor": Key(str, "claude", "claude (claude -p) or ollama.", ("claude", "ollama")),
        "model": Key(str, "haiku", "Model for extraction (claude -p --model / Ollama model)."),
        "claude_path": Key(str, "", "Path of the claude CLI; empty = found on PATH."),
        "timeout_seconds": Key(float, 180.0, "Timeout of one extraction call.", minimum=1),
        "max_attempts": Key(int, 3, "Attempts per chunk before it is left for later.", minimum=1),
        "chunk_chars": Key(int, 24_000, "Condensed transcript size per request.", minimum=1000),
        "daily_max_calls": Key(
            int, 200, "Extraction calls per day (UTC); 0 = no limit.", minimum=0
        ),
        "daily_max_tokens": Key(
            int, 2_000_000, "Input+output tokens per day (UTC); 0 = no limit.", minimum=0
        ),
        "near_duplicate_threshold": Key(
            float, 0.9, "Skip a new memory this similar to an existing one.", minimum=0, maximum=1
        ),
        "min_turns": Key(int, 2, "Sessions with fewer new turns wait for more.", minimum=1),
        "idle_minutes": Key(
            float, 10.0, "A session quiet this long is processed even below min_turns.", minimum=0
        ),
    },
    "thinking": {
        "enabled": Key(bool, False, "Store Claude's thinking + answer in thinking-memory/."),
    },
    "daemon": {
        "full_pass_seconds": Key(float, 300.0, "Period of the full pass.", minimum=5),
        "debounce_seconds": Key(
            float, 2.0, "Quiet time before a changed transcript is processed.", minimum=0
        ),
        "idle_exit_minutes": Key(
            float, 0.0, "Exit after this long without work or queries; 0 = never.", minimum=0
        ),
    },
}


@dataclass(frozen=True, slots=True)
class Config:
    """Validated settings. `get(section, key)` is typed by SCHEMA; sections are read-only dicts."""

    values: Mapping[str, Mapping[str, Any]]
    source: Path | None = None

    def get(self, section: str, key: str) -> Any:
        return self.values[section][key]

    def section(self, section: str) -> Mapping[str, Any]:
        return self.values[section]


def default_config() -> Config:
    return Config({s: {k: spec.default for k, spec in keys.items()} for s, keys in SCHEMA.items()})


def load_config(path: Path | None, environ: Mapping[str, str]) -> Config:
    """Defaults ← config.toml ← environment. Raises ConfigError naming the bad key."""
    values = {s: {k: spec.default for k, spec in keys.items()} for s, keys in SCHEMA.items()}
    source = None
    if path is not None and path.is_file():
        source = path
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
        for section, table in data.items():
            if section not in SCHEMA:
                raise ConfigError(f"{path}: unknown section [{section}]")
            if not isinstance(table, dict):
                raise ConfigError(f"{path}: [{section}] must be a table")
            for key, raw in table.items():
                values[section][key] = _coerce(section, key, raw, f"{path}: {section}.{key}")
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX):
            continue
        rest = name[len(ENV_PREFIX) :]
        if rest in NON_CONFIG_ENV:
            continue
        section, key = _split_env_name(rest, name)
        values[section][key] = _coerce(section, key, raw, name, from_env=True)
    return Config(values, source)


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


def render_default_config() -> str:
    """The commented config.toml that `local-recall init` writes."""
    lines = [
        "# local-recall settings, shared by the team (committed). All keys: docs/configuration.md",
        "# Override any key for one machine with LOCAL_RECALL_<SECTION>_<KEY>.",
        "",
    ]
    for section, keys in SCHEMA.items():
        lines.append(f"[{section}]")
        for key, spec in keys.items():
            lines.append(f"# {spec.doc}")
            lines.append(f"# {key} = {_toml_literal(spec.default)}")
        lines.append("")
    return "\n".join(lines)


def _toml_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value)


def render_config_table() -> str:
    """The markdown table in docs/configuration.md (tests/test_config.py keeps them equal)."""
    rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for section, keys in SCHEMA.items():
        for key, spec in keys.items():
            allowed = f" One of: {', '.join(map(str, spec.choices))}." if spec.choices else ""
            env = f"`{ENV_PREFIX}{section.upper()}_{key.upper()}`"
            rows.append(
                f"| `{section}.{key}` | {spec.type.__name__} | `{_toml_literal(spec.default)}` "
                f"| {spec.doc}{allowed} Env: {env} |"
            )
    return "\n".join(rows)


def refresh_config_docs(path: Path) -> None:
    """Rewrite the generated table in docs/configuration.md (developer tool:
    `python -c 'from local_recall.repo.config import refresh_config_docs as r; from pathlib import
    Path; r(Path("docs/configuration.md"))'`)."""
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition(_TABLE_START)
    _, _, tail = rest.partition(_TABLE_END)
    path.write_text(f"{head}{_TABLE_START}\n{render_config_table()}\n{_TABLE_END}{tail}", "utf-8")


_TABLE_START = "<!-- config-table:start -->"
_TABLE_END = "<!-- config-table:end -->"
