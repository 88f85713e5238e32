from __future__ import annotations

from pathlib import Path

import pytest

from local_recall.errors import ConfigError
from local_recall.repo.config import load_config, render_default_config


def test_defaults_without_a_file(tmp_path: Path) -> None:
    config = load_config(tmp_path / "missing.toml", {})
    assert config.embedder.provider == "minilm"
    assert config.hooks.session_start_tokens == 1000


def test_file_then_environment_override(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[embedder]\nprovider = "ollama"\n[search]\ndefault_limit = 5\n')
    config = load_config(
        path, {"LOCAL_RECALL_SEARCH_DEFAULT_LIMIT": "7", "LOCAL_RECALL_ROOT": "/x"}
    )
    assert config.embedder.provider == "ollama"
    assert config.search.default_limit == 7
    assert load_config(path, {"LOCAL_RECALL_THINKING_ENABLED": "yes"}).thinking.enabled


@pytest.mark.parametrize(
    ("toml", "env", "named"),
    [
        ("[embedder]\nprovidr = 'x'\n", {}, "embedder.providr"),
        ("[nope]\n", {}, "[nope]"),
        ("[embedder]\nprovider = 'bert'\n", {}, "embedder.provider"),
        ("[search]\ndefault_limit = 'ten'\n", {}, "search.default_limit"),
        ("[search]\nmin_score = 2.0\n", {}, "search.min_score"),
        ("not toml = = =", {}, "not valid TOML"),
        ("", {"LOCAL_RECALL_SEARCH_LIMITT": "3"}, "LOCAL_RECALL_SEARCH_LIMITT"),
        ("", {"LOCAL_RECALL_BOGUS": "3"}, "LOCAL_RECALL_BOGUS"),
        ("", {"LOCAL_RECALL_THINKING_ENABLED": "maybe"}, "LOCAL_RECALL_THINKING_ENABLED"),
    ],
)
def test_bad_settings_name_the_key(
    tmp_path: Path, toml: str, env: dict[str, str], named: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as caught:
        load_config(path, env)
    assert named in str(caught.value)
    assert "\n" not in str(caught.value)


def test_rendered_default_config_loads_to_defaults(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(render_default_config())
    assert load_config(path, {}).values == load_config(None, {}).values


def test_docs_table_matches_schema() -> None:
    from local_recall.repo.config import render_config_table
    from tests.conftest import REPO_ROOT

    docs = (REPO_ROOT / "docs" / "configuration.md").read_text()
    start, end = "<!-- config-table:start -->\n", "\n<!-- config-table:end -->"
    table = docs.split(start, 1)[1].split(end, 1)[0]  # refresh_config_docs() writes it
    assert table == render_config_table(), (
        "docs/configuration.md is out of date: regenerate with "
        "local_recall.repo.config.refresh_config_docs(Path('docs/configuration.md'))"
    )


def test_schema_is_derived_from_the_typed_sections() -> None:
    """One declaration per key: the typed section's field (type from its default)."""
    from local_recall.repo.config import SCHEMA, Config

    config = Config()
    assert list(SCHEMA) == [
        "log",
        "embedder",
        "search",
        "hooks",
        "extraction",
        "thinking",
        "summaries",
        "daemon",
        "lifecycle",
        "review",
    ]
    for section, keys in SCHEMA.items():
        for key, spec in keys.items():
            value = getattr(getattr(config, section), key)
            assert value == spec.default and type(value) is spec.type, f"{section}.{key}"
    assert config.search.min_score == 0.0 and isinstance(config.hooks.prompt_tokens, int)


def test_sections_are_frozen() -> None:
    import dataclasses

    from local_recall.repo.config import Config

    with pytest.raises(dataclasses.FrozenInstanceError):
        Config().search.min_score = 0.5  # type: ignore[misc]
