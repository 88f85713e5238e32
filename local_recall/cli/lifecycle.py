"""A memory's life in the team's repository: `stale`, `review still-true` (on the review group
of review.py), `consolidate` (docs/team.md)."""

from __future__ import annotations

import dataclasses
import shutil
import sys
import textwrap
from collections.abc import Sequence

import click

from local_recall.cli.app import AppContext, cli, emit_json, pass_app
from local_recall.cli.notices import skipped_files_notice
from local_recall.cli.review import review
from local_recall.errors import InvalidInput
from local_recall.lifecycle.consolidation import Proposal
from local_recall.memory.model import Memory
from local_recall.memory.timestamps import format_timestamp


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array: memory and reason.")
@click.option("--refresh", is_flag=True, help="Recompute even if HEAD has not moved.")
@pass_app
def stale(app: AppContext, as_json: bool, refresh: bool) -> None:
    """Memories the code has moved past: an anchor file deleted, renamed or much changed."""
    found = app.recall.stale_memories(refresh=refresh)
    skipped = skipped_files_notice(app.recall.scan().problems, app.settings.root)
    if skipped:  # a file not read cannot be judged: said every time, as list and search do
        click.echo(skipped, err=True)
    if as_json:
        emit_json(
            [
                {"id": m.id, "subject": m.subject, "path": str(m.path or ""), **s.to_json()}
                for m, s in found
            ]
        )
        return
    for memory, reason in found:
        click.echo(f"{memory.id}  {memory.subject}\n    stale: {reason.detail}")
    if not found:
        click.echo("no stale memories")


@review.command(name="still-true")
@click.argument("memory_ids", nargs=-1, required=True)
@pass_app
def still_true(app: AppContext, memory_ids: Sequence[str]) -> None:
    """Stale memories that still hold: re-anchored at the current commit (renamed anchors
    follow the rename), so they are no longer stale."""
    for memory_id in memory_ids:
        memory = app.recall.mark_still_true(memory_id)
        click.echo(f"{memory.id} re-anchored at HEAD")
    app.recall.lifecycle_snapshot()


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="List the groups and proposals as JSON.")
@click.option("--apply", "apply_all", is_flag=True, help="Merge every group --json lists.")
@pass_app
def consolidate(app: AppContext, as_json: bool, apply_all: bool) -> None:
    """Find near-duplicate memories and merge each group into one. Interactive by default;
    nothing is merged without a person or --apply."""
    interactive = not as_json and not apply_all
    if interactive and not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise InvalidInput("consolidate is interactive: use --json to list, --apply to merge")
    recall = app.recall
    proposals = recall.consolidation_plan()
    found = {m.id: m for m in recall.list()}
    if as_json and not apply_all:
        emit_json([_group_json(p, found) for p in proposals])
        return
    if apply_all:
        applied = recall.apply_consolidation(proposals)
        if as_json:
            emit_json(applied.to_json())
        else:
            click.echo(f"merged {len(applied.removed)} memories into {len(applied.kept)}")
        return
    if not proposals:
        click.echo("no near-duplicate memories")
        return
    merged = 0
    for number, proposal in enumerate(proposals, 1):
        members = [found[i] for i in (proposal.keep, *proposal.remove) if i in found]
        click.echo(f"\n── group {number} of {len(proposals)} " + "─" * 40)
        click.echo(_side_by_side(members))
        click.echo(f"proposed: keep [1] with keywords {', '.join(proposal.keywords)}")
        choice = click.prompt(
            f"merge keeping [1-{len(members)}], skip [s], quit [q]",
            type=click.Choice(["s", "q", *map(str, range(1, len(members) + 1))]),
            default="1",
            show_choices=False,
        )
        if choice == "q":
            break
        if choice == "s":
            continue
        chosen = _keeping(proposal, members[int(choice) - 1])
        recall.apply_consolidation([chosen])
        merged += 1
    click.echo(f"merged {merged} group(s)")


def _keeping(proposal: Proposal, memory: Memory) -> Proposal:
    """The proposal with another member kept (its subject and body win)."""
    if memory.id == proposal.keep:
        return proposal
    others = tuple(i for i in (proposal.keep, *proposal.remove) if i != memory.id)
    return dataclasses.replace(
        proposal, keep=memory.id, remove=others, subject=memory.subject, body=memory.body
    )


def _group_json(proposal: Proposal, found: dict[str, Memory]) -> dict[str, object]:
    members = [found[i] for i in (proposal.keep, *proposal.remove) if i in found]
    return {
        "memories": [
            {"id": m.id, "subject": m.subject, "occurred_at": format_timestamp(m.occurred_at)}
            for m in members
        ],
        "proposal": proposal.to_json(),
    }


def _side_by_side(members: Sequence[Memory], max_lines: int = 12) -> str:
    """The members in columns (up to three per row), numbered; the first is the proposed one."""
    width = max(60, shutil.get_terminal_size((100, 24)).columns)
    rows = []
    for start in range(0, len(members), 3):
        chunk = members[start : start + 3]
        col = (width - 3 * (len(chunk) - 1)) // len(chunk)
        cells = []
        for n, m in enumerate(chunk, start + 1):
            text = [f"[{n}] {m.subject}", f"{m.id[:8]} · {format_timestamp(m.occurred_at)[:10]}"]
            text += textwrap.wrap(" ".join(m.body.split()), col)[:max_lines]
            cells.append([line[:col].ljust(col) for line in text])
        height = max(len(c) for c in cells)
        for line in range(height):
            parts = [c[line] if line < len(c) else " " * col for c in cells]
            rows.append(" │ ".join(parts).rstrip())
        rows.append("")
    return "\n".join(rows)
