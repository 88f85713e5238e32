from __future__ import annotations

from pathlib import Path

import pytest

from local_recall.errors import ConfigError
from local_recall.repo.config import load_config
from local_recall.repo.config_render import render_default_config


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
    from local_recall.repo.config_render import render_config_table
    from tests.conftest import REPO_ROOT

    docs = (REPO_ROOT / "docs" / "configuration.md").read_text()
    start, end = "<!-- config-table:start -->\n", "\n<!-- config-table:end -->"
    table = docs.split(start, 1)[1].split(end, 1)[0]  # refresh_config_docs() writes it
    assert table == render_config_table(), (
        "docs/configuration.md is out of date: regenerate with "
        "local_recall.repo.config_render.refresh_config_docs(Path('docs/configuration.md'))"
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
        "org",
        "learning",
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


# --- personal keys: privacy and spending are each user's ------------------------------------------


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_committed_config_cannot_turn_on_capture_or_spending(tmp_path: Path) -> None:
    committed = write(
        tmp_path / "repo" / "config.toml",
        "[thinking]\nenabled = true\n"
        "[extraction]\nmodel = 'opus'\ndaily_max_calls = 100000\ndaily_max_tokens = 0\n"
        "max_attempts = 50\n",
    )
    config = load_config(committed, {})
    assert config.thinking.enabled is False
    assert config.extraction.model == "haiku"
    assert config.extraction.daily_max_calls == 200
    assert config.extraction.daily_max_tokens == 2_000_000
    assert config.extraction.max_attempts == 3
    ignored = "\n".join(config.ignored)
    for key in (
        "thinking.enabled",
        "extraction.model",
        "extraction.daily_max_calls",
        "extraction.daily_max_tokens",
        "extraction.max_attempts",
    ):
        assert key in ignored, key
    assert all("user config" in line or "environment" in line for line in config.ignored)
    assert {config.origin("thinking", "enabled"), config.origin("extraction", "model")} == {
        "default"
    }


def test_a_committed_config_may_make_things_more_private_or_cheaper(tmp_path: Path) -> None:
    committed = write(
        tmp_path / "repo" / "config.toml",
        "[extraction]\nenabled = false\ndaily_max_calls = 20\n[summaries]\nenabled = false\n"
        "[thinking]\nenabled = false\n",
    )
    config = load_config(committed, {})
    assert config.extraction.enabled is False and config.summaries.enabled is False
    assert config.extraction.daily_max_calls == 20 and config.ignored == ()
    assert config.origin("extraction", "daily_max_calls") == "committed"


def test_personal_values_come_from_the_user_config_or_the_environment(tmp_path: Path) -> None:
    user = write(
        tmp_path / "home" / "config.toml",
        "[thinking]\nenabled = true\n[extraction]\nmodel = 'sonnet'\ndaily_max_calls = 1000\n",
    )
    committed = write(tmp_path / "repo" / "config.toml", "[extraction]\ndaily_max_calls = 5000\n")
    config = load_config(committed, {}, user_path=user)
    assert config.thinking.enabled is True and config.extraction.model == "sonnet"
    assert config.extraction.daily_max_calls == 1000  # the team may not raise my limit
    assert "extraction.daily_max_calls" in "\n".join(config.ignored)
    assert config.origin("thinking", "enabled") == "user"
    assert config.origin("extraction", "daily_max_calls") == "user"

    write(committed, "[extraction]\ndaily_max_calls = 500\n[search]\ndefault_limit = 4\n")
    env = {"LOCAL_RECALL_EXTRACTION_MODEL": "opus"}
    config = load_config(committed, env, user_path=user)
    assert config.extraction.daily_max_calls == 500  # lower: the team's cap applies
    assert config.extraction.model == "opus"
    assert config.origin("extraction", "daily_max_calls") == "committed"
    assert config.origin("extraction", "model") == "env"
    assert config.origin("search", "default_limit") == "committed"
    assert config.origin("search", "min_score") == "default"


def test_doctor_says_where_each_value_came_from(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    from tests.conftest import clean_env, git_init

    root = git_init(tmp_path / "repo")
    write(
        root / "local-recall" / "config.toml",
        "[thinking]\nenabled = true\n[search]\ndefault_limit = 4\n",
    )
    (root / "local-recall" / "episodic-memory").mkdir()
    user_dir = tmp_path / "user"
    write(user_dir / "config.toml", "[extraction]\nmodel = 'sonnet'\n")
    env = clean_env(
        {"LOCAL_RECALL_CONFIG_DIR": str(user_dir), "LOCAL_RECALL_EXTRACTION_DAILY_MAX_CALLS": "7"}
    )
    done = subprocess.run(
        [sys.executable, "-m", "local_recall", "doctor", "--json"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    rows = json.loads(done.stdout)
    values = {r["detail"].split(" = ")[0]: r["detail"] for r in rows if r["name"] == "config value"}
    assert values["extraction.model"].endswith("(user)"), values
    assert values["extraction.daily_max_calls"].endswith("(env)")
    assert values["search.default_limit"].endswith("(committed)")
    assert values["thinking.enabled"] == "thinking.enabled = false (default)"
    ignored = [r["detail"] for r in rows if r["name"] == "config" and r["status"] == "warn"]
    assert any("thinking.enabled" in line and "ignored" in line for line in ignored)


def test_a_committed_org_uri_is_kept_unless_it_carries_credentials(tmp_path: Path) -> None:
    from local_recall.repo.config import load_config

    path = tmp_path / "config.toml"
    path.write_text('[org]\nuri = "s3://team-bucket/recall"\n')
    assert load_config(path, {}).org.uri == "s3://team-bucket/recall"
    path.write_text('[org]\nuri = "s3://AKIAEXAMPLE:secret@team-bucket/recall"\n')
    config = load_config(path, {})
    assert config.org.uri == ""
    assert "credentials come from the environment" in config.ignored[0]
    # the user's own environment may say anything
    assert load_config(path, {"LOCAL_RECALL_ORG_URI": "s3://mine/x"}).org.uri == "s3://mine/x"


def test_a_committed_config_cannot_choose_an_agent_cli_extractor() -> None:
    """`codex` / `gemini` run a program and spend the user's own subscription: only the user
    picks them; a committed `ollama` (cheaper) still applies."""
    from local_recall.repo.config_trust import committed_personal_problem

    for agent in ("codex", "gemini"):
        assert committed_personal_problem("extraction", "extractor", agent, "claude")
        assert committed_personal_problem("extraction", "extractor", "claude", agent)
    assert committed_personal_problem("extraction", "extractor", "ollama", "claude") is None


def test_a_retired_key_still_loads_and_is_listed_as_ignored(tmp_path: Path) -> None:
    """`search.ann_threshold` (the index now chooses its engines itself): an old config.toml
    or variable loads without error; doctor lists it as ignored."""
    path = tmp_path / "config.toml"
    path.write_text("[search]\nann_threshold = 5000\ndefault_limit = 7\n")
    config = load_config(path, {"LOCAL_RECALL_SEARCH_ANN_THRESHOLD": "20000"})
    assert config.search.default_limit == 7
    assert not hasattr(config.search, "ann_threshold")
    ignored = "\n".join(config.ignored)
    assert "search.ann_threshold: ignored: retired" in ignored
    assert "LOCAL_RECALL_SEARCH_ANN_THRESHOLD: ignored: retired" in ignored
    with pytest.raises(ConfigError, match="unknown key"):
        load_config(None, {"LOCAL_RECALL_SEARCH_ANN_THRESHOLDS": "1"})
