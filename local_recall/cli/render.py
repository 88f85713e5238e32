"""What `search` and `list` print, from their JSON reply (daemon/cli_queries.py): the same
function whether the daemon or the CLI's own process answered. Light (no click): the warm path
imports it."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from local_recall.errors import InvalidMemoryFile


def search_output(reply: Mapping[str, Any], *, as_json: bool, org: bool) -> tuple[str, list[str]]:
    """(stdout, stderr lines) of `local-recall search`."""
    err = [f"warning: {printable(note)}" for note in reply.get("notes") or ()]
    hits: Sequence[Mapping[str, Any]] = reply.get("hits") or ()
    if as_json:
        out = json_text(list(hits))
    else:
        lines = []
        for hit in hits:
            life = (
                ("disputed", hit.get("disputed")),
                ("stale", hit.get("stale")),
                ("branch", hit.get("branch")),
            )
            flags = "".join(f"  [{name}: {value}]" for name, value in life if value)
            repo = hit.get("repo")
            where = f"[{repo}]  " if repo else ("[this repo]  " if org else "")
            line = f"{where}{hit['id']}  {hit['applies_to']:<20}  {hit['subject']}{flags}"
            lines.append(f"{hit['score']:.2f}  {printable(line)}\n")
        out = "".join(lines)
    return out, err


# C0 and C1 controls and Unicode's line separators: what a terminal acts on instead of showing
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text: str) -> str:
    """One line a terminal shows as it is: a control character (an escape sequence's ESC, a
    line break) is written as its `\\xNN` text. Another repository's memory (`--org`) may hold
    anything."""
    return _CONTROL.sub(lambda found: f"\\x{ord(found.group()):02x}", text)


def search_warnings(
    reply: Mapping[str, Any], *, as_json: bool, query: str | None = None, org: bool = False
) -> list[str]:
    """What follows the hits on stderr (the text output only): why the search ran degraded,
    and that nothing matched (an empty stdout alone reads like nothing ran)."""
    if as_json:
        return []
    degraded = reply.get("degraded")
    lines = [f"warning: {degraded}"] if degraded else []
    if not reply.get("hits") and query is not None:
        where = " in this repository or the org index" if org else ""
        lines.append(f'no memory matched "{printable(query)}"{where}')
    return lines


def list_output(reply: Mapping[str, Any], *, as_json: bool) -> str:
    rows: Sequence[Mapping[str, Any]] = reply.get("rows") or ()
    if as_json:
        return json_text(list(rows))
    lines = (
        f"{str(row['occurred_at'])[:10]}  {row['id']}  {row['applies_to']:<20}  {row['subject']}"
        + disputed_flag(row)
        for row in rows
    )
    return "".join(printable(line) + "\n" for line in lines)


def disputed_flag(row: Mapping[str, Any]) -> str:
    """`  [disputed: why]` for a memory's JSON whose frontmatter holds a dispute, else ""."""
    dispute = row.get("disputed")
    reason = dispute.get("reason") if isinstance(dispute, Mapping) else dispute
    return f"  [disputed: {reason}]" if isinstance(reason, str) and reason else ""


def skipped_problems(reply: Mapping[str, Any]) -> list[InvalidMemoryFile]:
    return [InvalidMemoryFile(Path(path), reason) for path, reason in reply.get("skipped") or ()]


def json_text(data: Any) -> str:
    """As `emit_json` prints it."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def why_output(reply: Mapping[str, Any], *, as_json: bool) -> str:
    """`local-recall why` from the daemon's reply (op `cli_why`), as the CLI's own process
    prints it (cli/why.py)."""
    explanation = reply.get("explanation")
    data = explanation if isinstance(explanation, Mapping) else {}
    if as_json:
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    from local_recall.search.explain import explanation_text

    return explanation_text(data) + "\n"
