"""config.toml and docs/configuration.md as text, generated from the schema (repo/config.py):
the commented file `local-recall init` writes and the table of every key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from local_recall.repo.config import ENV_PREFIX, SCHEMA


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
            lines.append(f"# {key} = {toml_literal(spec.default)}")
        lines.append("")
    return "\n".join(lines)


def toml_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value)


def render_config_table() -> str:
    """The markdown table in docs/configuration.md (tests/repo/test_config.py keeps them equal)."""
    rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for section, keys in SCHEMA.items():
        for key, spec in keys.items():
            allowed = f" One of: {', '.join(map(str, spec.choices))}." if spec.choices else ""
            env = f"`{ENV_PREFIX}{section.upper()}_{key.upper()}`"
            rows.append(
                f"| `{section}.{key}` | {spec.type.__name__} | `{toml_literal(spec.default)}` "
                f"| {spec.doc}{allowed} Env: {env} |"
            )
    return "\n".join(rows)


def refresh_config_docs(path: Path) -> None:
    """Rewrite the generated table in docs/configuration.md (developer tool:
    `python -c 'from local_recall.repo.config_render import refresh_config_docs as r;
    from pathlib import Path; r(Path("docs/configuration.md"))'`)."""
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition(_TABLE_START)
    _, _, tail = rest.partition(_TABLE_END)
    path.write_text(f"{head}{_TABLE_START}\n{render_config_table()}\n{_TABLE_END}{tail}", "utf-8")


_TABLE_START = "<!-- config-table:start -->"
_TABLE_END = "<!-- config-table:end -->"
