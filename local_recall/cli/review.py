"""`review` (what the pipeline and agents wrote, accepted, edited or rejected by a person) and
`check` (the commit-time check of staged memory files). docs/team.md."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from local_recall.cli.app import AppContext, cli, emit_json, pass_app
from local_recall.cli.notices import skipped_files_notice
from local_recall.daemon.cli_queries import memory_row
from local_recall.errors import InvalidInput, RecallError
from local_recall.memory.model import Memory
from local_recall.memory.timestamps import format_timestamp
from local_recall.recall import look_alikes

NOT_A_TERMINAL = (
    "review is interactive and stdin is not a terminal: use `review --list`, `review --json`, "
    "`review accept ID…`, `review accept --all` or `review reject ID…`"
)
KEYS = "a=accept  e=edit  r=reject  s=skip  q=quit"


@cli.group(invoke_without_command=True)
@click.option("--list", "as_list", is_flag=True, help="List unreviewed memories, one a line.")
@click.option("--json", "as_json", is_flag=True, help="Print unreviewed memories as JSON.")
@click.pass_context
def review(ctx: click.Context, as_list: bool, as_json: bool) -> None:
    """Walk the memories no person has reviewed yet, and those a newer memory superseded:
    accept (keep), edit ($EDITOR), reject, skip.

    A rejected memory is deleted and its content hash kept in local-recall/rejected-hashes.txt
    (commit it), so no teammate's pipeline writes it again."""
    if ctx.invoked_subcommand is not None:
        return
    app = ctx.find_object(AppContext)
    assert app is not None  # the `cli` group made it
    if as_json or as_list:  # a file not read is in no queue: said every time, as `list` does
        skipped = skipped_files_notice(app.recall.scan().problems, app.settings.root)
        if skipped:
            click.echo(skipped, err=True)
    if as_json:
        queue = app.recall.unreviewed()
        alike = look_alikes(app.recall, [m.id for m in queue])
        emit_json(
            [{**m.to_json(), "looks_like": alike.get(m.id), "disputed": _reason(m)} for m in queue]
        )
    elif as_list:
        queue = app.recall.unreviewed()
        alike = look_alikes(app.recall, [m.id for m in queue])
        for memory in queue:
            click.echo(
                f"{format_timestamp(memory.occurred_at)[:10]}  {memory.id}  {memory.subject}"
                + (f"  [superseded by {memory.superseded_by}]" if memory.superseded_by else "")
                + (f"  [looks like {alike[memory.id]}]" if memory.id in alike else "")
                + (f"  [disputed: {memory.disputed.reason}]" if memory.disputed else "")
            )
    elif sys.stdin is None or not sys.stdin.isatty():
        raise InvalidInput(NOT_A_TERMINAL)
    else:
        _walk(app)


@review.command(name="accept")
@click.argument("ids", nargs=-1)
@click.option(
    "--all", "accept_all", is_flag=True, help="Accept every unreviewed memory (not superseded)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the accepted memories as JSON.")
@pass_app
def accept(app: AppContext, ids: Sequence[str], accept_all: bool, as_json: bool) -> None:
    """Mark memories reviewed (removes `review: unreviewed` from each file); a superseded
    memory is kept as still true (its `superseded_by` mark is removed), a disputed one as
    still right (the hook shows it again in full)."""
    if accept_all == bool(ids):
        raise InvalidInput("give memory ids, or --all (not both)")
    # --all never settles a contradiction: a superseded or disputed memory is kept only by its id
    queue = app.recall.unreviewed()
    wanted = (
        [m.id for m in queue if not m.superseded_by and not m.disputed] if accept_all else list(ids)
    )
    accepted = app.recall.accept(wanted)
    if as_json:
        emit_json([memory_row(m) for m in accepted])
    else:
        click.echo(f"accepted {len(accepted)} memor{'y' if len(accepted) == 1 else 'ies'}")


@review.command(name="reject")
@click.argument("ids", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print the rejected memories as JSON.")
@pass_app
def reject(app: AppContext, ids: Sequence[str], as_json: bool) -> None:
    """Delete memories (reviewed or not) and remember their content hashes, so the pipeline
    never writes them again."""
    rejected = app.recall.reject(list(ids))
    if as_json:
        emit_json([{"rejected": m.id, "content_hash": m.content_hash} for m in rejected])
    else:
        for memory in rejected:
            click.echo(f"rejected {memory.id}")


@review.command(name="merge")
@click.argument("memory_id")
@click.argument("other", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print what was kept and removed as JSON.")
@pass_app
def merge(app: AppContext, memory_id: str, other: str | None, as_json: bool) -> None:
    """Merge a memory with the one it looks like (or OTHER) into one, as `consolidate` does:
    the better-written kept, with the keywords, anchors and provenance of both."""
    first = app.recall.get(memory_id).id
    if other is None:
        other = look_alikes(app.recall, [first]).get(first)
        if other is None:
            raise InvalidInput(f"{first} looks like no other memory: give the one to merge with")
    applied = app.recall.lifecycle.merge([first, app.recall.get(other).id])
    if as_json:
        emit_json(applied.to_json())
    else:
        click.echo(f"merged into {applied.kept[0].id}; removed {', '.join(applied.removed)}")


def _walk(app: AppContext) -> None:
    queue = app.recall.unreviewed()
    if not queue:
        click.echo("nothing to review")
        return
    done = {"accepted": 0, "edited": 0, "rejected": 0, "skipped": 0, "merged": 0}
    stale = _stale_reasons(app)
    alike = look_alikes(app.recall, [m.id for m in queue])
    merged: set[str] = set()
    for number, memory in enumerate(queue, start=1):
        if memory.id in merged:  # merged away with an earlier one
            continue
        twin = alike.get(memory.id) if alike.get(memory.id) not in merged else None
        _show(memory, number, len(queue), stale.get(memory.id), _reason(memory))
        if twin is not None:
            click.secho(f"looks like {twin}: {_subject(app, twin)}", fg="yellow")
        action = _ask(still_true=memory.id in stale, can_merge=twin is not None)
        if action == "q":
            break
        if action == "m" and twin is not None:
            applied = app.recall.lifecycle.merge([memory.id, twin])
            merged.update(applied.removed)
            click.echo(f"merged into {applied.kept[0].id}")
            done["merged"] += 1
            continue
        if action == "t":  # stale, but a person says it still holds: re-anchor it at HEAD
            app.recall.mark_still_true(memory.id)
        if action == "e":
            if not _edit(app, memory):
                click.echo("unchanged: skipped")
                done["skipped"] += 1
                continue
            done["edited"] += 1
        if action in ("a", "e", "t"):
            app.recall.accept([memory.id])
            done["accepted"] += 1
        elif action == "r":
            app.recall.reject([memory.id])
            done["rejected"] += 1
        else:
            done["skipped"] += 1
    click.echo(", ".join(f"{key} {count}" for key, count in done.items()))


def _stale_reasons(app: AppContext) -> dict[str, str]:
    try:
        return {memory.id: why.detail for memory, why in app.recall.stale_memories()}
    except RecallError:  # not a git repository, git missing: nothing is known to be stale
        return {}


def _show(
    memory: Memory, number: int, total: int, stale: str | None, disputed: str | None = None
) -> None:
    click.echo("")
    click.secho(f"[{number}/{total}] {memory.subject}", bold=True)
    where = [format_timestamp(memory.occurred_at), memory.id, memory.applies_to]
    if memory.branch or memory.commit:
        where.append(f"{memory.branch or '(detached)'}@{(memory.commit or '?')[:12]}")
    click.echo("  ".join(where))
    if memory.files:
        click.echo("files: " + ", ".join(memory.files))
    if stale:
        click.secho(f"stale: {stale}", fg="yellow")
    if disputed:  # a=it holds, e=fix it, r=it is wrong: each settles it
        click.secho(f"disputed by a session: {disputed}", fg="yellow")
    if memory.superseded_by:  # a=keep it (the mark is removed), r=reject (delete) it
        why = f": {memory.superseded_reason}" if memory.superseded_reason else ""
        click.secho(f"superseded by {memory.superseded_by}{why}", fg="yellow")
    click.echo("")
    click.echo(memory.body)
    click.echo("")


def _reason(memory: Memory) -> str | None:
    """Why a session found it wrong (its `disputed:` key), None when none did."""
    return memory.disputed.reason if memory.disputed else None


def _subject(app: AppContext, memory_id: str) -> str:
    try:
        return app.recall.get(memory_id).subject
    except RecallError:
        return "(unreadable)"


def _ask(*, still_true: bool, can_merge: bool = False) -> str:
    keys = "aersq" + ("t" if still_true else "") + ("m" if can_merge else "")
    extra = ("  t=still true" if still_true else "") + ("  m=merge" if can_merge else "")
    while True:
        click.echo(f"{KEYS}{extra} > ", nl=False)
        key = click.getchar().lower()
        click.echo(key)
        if len(key) == 1 and key in keys:
            return key
        if key in ("\x03", "\x04"):  # ctrl-c, ctrl-d
            return "q"


def _edit(app: AppContext, memory: Memory) -> bool:
    """Open $EDITOR on `subject`, a blank line, the body. False when nothing changed."""
    original = f"{memory.subject}\n\n{memory.body}\n"
    edited = click.edit(original, extension=".md", require_save=True)
    if edited is None or edited == original:
        return False
    subject, _, body = edited.strip("\n").partition("\n")
    if not subject.strip() or not body.strip():
        click.echo("the first line is the subject, then the body; neither may be empty")
        return False
    app.recall.update(memory.id, subject=subject, body=body.strip("\n"))
    return True


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print every checked file as JSON.")
@pass_app
def check(app: AppContext, paths: Sequence[str], as_json: bool) -> None:
    """Refuse memory files that hold a secret, invalid frontmatter or git conflict markers
    (default: the memory files staged for commit). One line per bad file; exit 1 if any."""
    from local_recall.lifecycle.commit_check import check_paths, check_staged

    settings = app.settings
    results = check_paths(paths) if paths else check_staged(settings.root, settings.environ)
    bad = [result for result in results if result.problems]
    if as_json:
        emit_json([{"path": r.path, "problems": list(r.problems)} for r in results])
    else:
        for result in bad:
            click.echo(result.line)
        if not bad:
            click.echo(f"{len(results)} memory file(s) checked: no problems", err=True)
    if bad:
        sys.exit(1)
