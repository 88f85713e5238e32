"""`.codex/config.toml` as `init --agent codex` edits it (install_plan.plan_config, pure, over
literal texts): init then uninstall gives the user's file back byte for byte, whatever it holds
around our table; init again sets only `command` and `args`; comments stay where the user put
them; a server we did not write, or a file that does not parse, is left as it is."""

from __future__ import annotations

import tomllib

import pytest

from local_recall.codex import install_plan as codex

LAUNCHER = ("/opt/lr/bin/local-recall",)
OTHER = ("/new/venv/bin/python", "-m", "local_recall")
OURS = '[mcp_servers.local-recall]\ncommand = "/opt/lr/bin/local-recall"\nargs = ["mcp"]\n'

# (the user's file before init, what the user adds after our table once it is there)
USERS_FILES = {
    "no file": (None, ""),
    "empty file": ("", ""),
    "keys only": ('model = "o3"\n', ""),
    "no trailing newline": ('model = "o3"', ""),
    "trailing blank lines": ('model = "o3"\n\n\n', ""),
    "a comment last": ('model = "o3"\n# the end\n', ""),
    "another server before": ('model = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n', ""),
    "a table after ours": ('model = "o3"\n', '\n[profiles.fast]\nmodel = "o4-mini"\n'),
    "a commented table after ours": (
        'model = "o3"\n',
        '\n# the tracker, for the on-call\n[mcp_servers.tracker]\ncommand = "tracker-mcp"\n',
    ),
    "a comment right under our last key": (
        None,
        '# the tracker\n\n# (its second line)\n[mcp_servers.tracker]\ncommand = "t"\n',
    ),
    "our env, then a commented table": (
        "[tui]\nnotifications = true\n",
        '\n[mcp_servers.local-recall.env]\nX = "1"\n# about profiles\n[profiles.a]\nmodel = "b"\n',
    ),
    "servers split around another table": (
        '[mcp_servers.other]\ncommand = "x"\n\n[tui]\nnotifications = true\n',
        "\n# the end of servers\n",
    ),
    "CRLF": ('model = "o3"\r\n\r\n[mcp_servers.other]\r\ncommand = "x"\r\n', ""),
    "CRLF, a commented table after ours": (
        'model = "o3"\r\n',
        '\r\n# next\r\n[profiles.fast]\r\nmodel = "o4-mini"\r\n',
    ),
    "dotted keys of another server": ('mcp_servers.other.command = "x"\n', ""),
}


def _without_ours(text: str | None) -> dict[str, object]:
    data = tomllib.loads(text or "")
    servers = data.get("mcp_servers", {})
    servers.pop("local-recall", None)
    if not servers:
        data.pop("mcp_servers", None)
    return data


@pytest.mark.parametrize("case", list(USERS_FILES))
def test_init_then_uninstall_gives_the_users_file_back_byte_for_byte(case: str) -> None:
    before, added = USERS_FILES[case]
    installed = codex.plan_config(before, LAUNCHER)
    assert installed is not None and installed.startswith(before or "")
    assert tomllib.loads(installed)["mcp_servers"]["local-recall"] == {
        "command": LAUNCHER[0],
        "args": ["mcp"],
    }
    edited = installed + added  # what the user wrote under our table after init
    assert codex.plan_config(edited, LAUNCHER) == edited  # init again: nothing to change
    moved = codex.plan_config(edited, OTHER)
    assert moved == edited.replace(
        'command = "/opt/lr/bin/local-recall"\nargs = ["mcp"]',
        'command = "/new/venv/bin/python"\nargs = ["-m", "local_recall", "mcp"]',
    )
    expected = (added.lstrip("\r\n") or None) if before is None else before + added
    if not added.startswith("\n[mcp_servers.local-recall."):  # our sub-table goes with us
        for text in (edited, moved):
            removed = codex.plan_config(text, None)
            assert removed == expected, case
    else:
        removed = codex.plan_config(edited, None)
        assert removed is not None and "[mcp_servers.local-recall" not in removed
        assert "# about profiles\n[profiles.a]" in removed
        assert _without_ours(removed) == _without_ours(edited)


def test_the_comment_above_the_next_table_is_that_tables_and_stays_with_it() -> None:
    """tomlkit files the lines above a header under the table before it: our table's end is its
    last key, so uninstall leaves them (tomlkit's own `del` dropped them)."""
    users = '\n# the tracker, for the on-call\n[mcp_servers.tracker]\ncommand = "tracker-mcp"\n'
    for before in (None, 'model = "o3"\n'):
        text = (codex.plan_config(before, LAUNCHER) or "") + users
        assert codex.plan_config(text, None) == (
            users.lstrip() if before is None else before + users
        )


def test_a_comment_the_user_put_in_our_table_stays_until_our_table_goes() -> None:
    text = (
        'model = "o3"\n\n[mcp_servers.local-recall]  # memory for this repository\n'
        "# started by Codex for each session\n"
        'command = "/opt/lr/bin/local-recall"  # the venv on this machine\n'
        "startup_timeout_sec = 30\n"
        'args = ["mcp"]\n'
    )
    assert codex.plan_config(text, LAUNCHER) == text
    moved = codex.plan_config(text, OTHER)
    assert moved == text.replace(
        '"/opt/lr/bin/local-recall"  #', '"/new/venv/bin/python"  #'
    ).replace('args = ["mcp"]', 'args = ["-m", "local_recall", "mcp"]')
    assert codex.plan_config(moved, None) == 'model = "o3"\n'


def test_a_file_without_a_trailing_newline_after_our_table() -> None:
    installed = codex.plan_config('model = "o3"\n', LAUNCHER) or ""
    assert codex.plan_config(installed.rstrip("\n"), None) == 'model = "o3"\n'
    commented = installed + "# bye"  # one blank line stays between neighbours (remove_block)
    assert codex.plan_config(commented, None) == 'model = "o3"\n\n# bye'


@pytest.mark.parametrize(
    ("text", "uninstalled"),
    [
        (
            'model = "o3"\nmcp_servers.local-recall.command = "/opt/lr/bin/local-recall"\n'
            'mcp_servers.local-recall.args = ["mcp"]\n',
            'model = "o3"\n',
        ),
        (
            '[mcp_servers]\nlocal-recall.command = "/opt/lr/bin/local-recall"\n'
            'local-recall.args = ["mcp"]\nother.command = "x"\n',
            '[mcp_servers]\nother.command = "x"\n',
        ),
        (
            'mcp_servers = { local-recall = { command = "/opt/lr/bin/local-recall", '
            'args = ["mcp"] } }\n',
            None,
        ),
        (
            '[mcp_servers]\nlocal-recall = { command = "/opt/lr/bin/local-recall", args = ["mcp"] }'
            '\n# the profiles\n[profiles.a]\nmodel = "b"\n',
            '[mcp_servers]\n# the profiles\n[profiles.a]\nmodel = "b"\n',
        ),
    ],
    ids=["dotted keys", "dotted keys in [mcp_servers]", "inline", "inline in [mcp_servers]"],
)
def test_our_server_written_as_dotted_keys_or_an_inline_table(
    text: str, uninstalled: str | None
) -> None:
    """Not what init writes, but the same server: init again leaves it, a new launcher is set in
    place (appending a [table] would declare it twice, a file Codex refuses), uninstall takes it
    out. Someone else's server in that form is theirs."""
    assert codex.our_mcp_table(text) is not None
    assert codex.plan_config(text, LAUNCHER) == text
    moved = codex.plan_config(text, OTHER) or ""
    assert moved == text.replace('"/opt/lr/bin/local-recall"', '"/new/venv/bin/python"').replace(
        'args = ["mcp"]', 'args = ["-m", "local_recall", "mcp"]'
    )
    assert codex.plan_config(text, None) == uninstalled
    assert codex.plan_config(moved, None) == uninstalled
    foreign = text.replace("/opt/lr/bin/local-recall", "npx")
    assert codex.our_mcp_table(foreign) is None
    for launcher in (LAUNCHER, OTHER, None):
        assert codex.plan_config(foreign, launcher) == foreign


def test_our_server_goes_into_an_inline_mcp_servers_and_comes_out_again() -> None:
    text = 'mcp_servers = { other = { command = "x" } }\n'
    installed = codex.plan_config(text, LAUNCHER) or ""
    assert tomllib.loads(installed)["mcp_servers"] == {
        "other": {"command": "x"},
        "local-recall": {"command": LAUNCHER[0], "args": ["mcp"]},
    }
    assert codex.plan_config(installed, LAUNCHER) == installed
    assert codex.plan_config(installed, None) == text


def test_a_file_that_does_not_parse_is_never_rewritten() -> None:
    for text in ("model = \n", "[mcp_servers.local-recall]\ncommand = [\n", OURS + OURS):
        assert codex.our_mcp_table(text) is None
        for launcher in (LAUNCHER, None):
            assert codex.plan_config(text, launcher) == text


def test_a_header_written_unusually_and_a_name_already_in_the_file() -> None:
    """Our table is found by what it is, not by how its header is spelled; the name used to
    mark it while it is cut out may already be in the file."""
    text = (
        "# local-recall-removed\n"
        '[ mcp_servers . "local-recall" ]  # ours\ncommand = "/opt/lr/bin/local-recall"\n'
        'args = ["mcp"]\n\n[local-recall-removed]\nx = 1\n'
    )
    assert (
        codex.plan_config(text, None) == "# local-recall-removed\n\n[local-recall-removed]\nx = 1\n"
    )
