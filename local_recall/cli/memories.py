"""Reading and writing memories by hand: `add`, `list`, `show`, `edit`, `rm`, and `scan` (secrets
in memory files, for CI and the pre-commit hook)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from local_recall.cli.app import AppContext, cli, emit_json, parse_when, pass_app
from local_recall.cli.notices import redaction_notice, skipped_files_notice, split_keywords
from local_recall.cli.render import list_output, skipped_problems
from local_recall.daemon.cli_queries import list_reply, memory_row
from local_recall.errors import InvalidInput, InvalidMemoryFile
from local_recall.memory.drafts import stored_scope
from local_recall.memory.timestamps import format_timestamp
from local_recall.repo.files import through_symlink
from local_recall.repo.layout import Layout


@cli.command()
@click.option("--subject", "-s", required=True, help="One line, 1-200 characters.")
@click.option("--body", "-b", default=None, help="Markdown body; read from stdin when absent.")
@click.option(
    "--keyword",
    "--keywords",
    "-k",
    "keywords",
    multiple=True,
    help="Repeat, or separate with commas (-k a,b); extracted automatically when none is given.",
)
@click.option(
    "--scope",
    default="global",
    show_default=True,
    help="global, file:<repo-relative path> or area:<name>.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the memory as JSON.")
@pass_app
def add(
    app: AppContext,
    subject: str,
    body: str | None,
    keywords: Sequence[str],
    scope: str,
    as_json: bool,
) -> None:
    """Add a memory and print its id (the existing id if the same content is already stored)."""
    if body is None:
        if sys.stdin is None or sys.stdin.isatty():
            raise InvalidInput("no body: pass --body or pipe the body on stdin")
        body = sys.stdin.read()
    given = split_keywords(keywords)
    result = app.recall.save(subject, body, keywords=given or None, scope=scope, source="cli")
    if result.created:
        stored = result.memory
        _notice(
            redaction_notice(
                [subject, body, *given], [stored.subject, stored.body, *stored.keywords]
            )
        )
    if as_json:
        emit_json({**memory_row(result.memory), "created": result.created})
    else:
        click.echo(result.memory.id)


def _notice(line: str | None) -> None:
    if line:
        click.echo(line, err=True)


@cli.command(name="list")
@click.option(
    "--scope", default=None, help="Only memories for this scope (file:src/ = under src/)."
)
@click.option("--no-global", is_flag=True, help="With --scope: leave out global memories.")
@click.option("--keyword", "-k", default=None, help="Only memories with this keyword.")
@click.option("--since", default=None, help="Only memories on or after this ISO date/time.")
@click.option("--until", default=None, help="Only memories on or before this ISO date/time.")
@click.option("--limit", "-n", type=click.IntRange(min=1), default=None, help="At most N.")
@click.option("--newest-first", is_flag=True, help="Newest first (default: oldest first).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
@pass_app
def list_command(
    app: AppContext,
    scope: str | None,
    no_global: bool,
    keyword: str | None,
    since: str | None,
    until: str | None,
    limit: int | None,
    newest_first: bool,
    as_json: bool,
) -> None:
    """List memories, sorted by when they occurred."""
    request = {
        "scope": scope,
        "include_global": not no_global,
        "keyword": keyword,
        "since": parse_when(since, "--since"),
        "until": parse_when(until, "--until"),
        "newest_first": newest_first,
        "limit": limit,
    }
    reply = list_reply(app.recall, request)
    _notice(skipped_files_notice(skipped_problems(reply), app.settings.root))
    click.echo(list_output(reply, as_json=as_json), nl=False)


@cli.command()
@click.argument("memory_id")
@click.option("--json", "as_json", is_flag=True, help="Print the memory as JSON.")
@pass_app
def show(app: AppContext, memory_id: str, as_json: bool) -> None:
    """Show one memory."""
    memory = app.recall.get(memory_id)
    duplicates = app.recall.duplicates(memory.id)
    if duplicates:  # never read, and they would survive an edit: name them
        names = ", ".join(repr(str(p)) for p in duplicates)
        click.echo(
            f"warning: {len(duplicates)} more file(s) claim this id and are not read: {names} "
            f"(`local-recall rm {memory.id}` removes them all)",
            err=True,
        )
    if as_json:
        emit_json({**memory.to_json(), "duplicates": [str(p) for p in duplicates]})
        return
    click.echo(f"id:          {memory.id}")
    click.echo(f"subject:     {memory.subject}")
    click.echo(f"applies_to:  {memory.applies_to}")
    click.echo(f"occurred_at: {format_timestamp(memory.occurred_at)}")
    click.echo(f"keywords:    {', '.join(memory.keywords)}")
    if memory.source:
        click.echo(f"source:      {memory.source}")
    if memory.disputed:  # a session found it wrong: `review` settles it
        click.echo(f"disputed:    {memory.disputed.reason}")
    click.echo(f"path:        {memory.path}")
    click.echo("")
    click.echo(memory.body)


@cli.command()
@click.argument("memory_id")
@click.option("--subject", "-s", default=None, help="New subject.")
@click.option("--body", "-b", default=None, help="New body ('-' reads it from stdin).")
@click.option(
    "--keyword",
    "--keywords",
    "-k",
    "keywords",
    multiple=True,
    help="Replace the keywords (repeat, or separate with commas).",
)
@click.option("--scope", default=None, help="New scope.")
@click.option("--json", "as_json", is_flag=True, help="Print the memory as JSON.")
@pass_app
def edit(
    app: AppContext,
    memory_id: str,
    subject: str | None,
    body: str | None,
    keywords: Sequence[str],
    scope: str | None,
    as_json: bool,
) -> None:
    """Change fields of a memory (the content hash is recomputed). Without options: open it in
    $EDITOR (subject, keywords, applies_to and body are taken from what you save)."""
    if body == "-":
        body = sys.stdin.read()
    if subject is None and body is None and not keywords and scope is None:
        _edit_in_editor(app, memory_id, as_json)  # no flags: the file in $EDITOR
        return
    given = split_keywords(keywords)
    memory = app.recall.update(
        memory_id, subject=subject, body=body, keywords=given or None, scope=scope
    )
    stored = [memory.subject if subject is not None else "", memory.body if body else ""]
    given_texts = [t for t in (subject, body) if t is not None] + given
    _notice(redaction_notice(given_texts, stored + (list(memory.keywords) if given else [])))
    if as_json:
        emit_json(memory_row(memory))
    else:
        click.echo(memory.id)


@cli.command()
@click.option("--scope", default="global", show_default=True, help="The scope to start with.")
@click.option(
    "--from",
    "from_file",
    type=click.Path(dir_okay=False, exists=True),
    default=None,
    help="Start from this draft (one a failed `new` kept) instead of the template.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the memory as JSON.")
@pass_app
def new(app: AppContext, scope: str, from_file: str | None, as_json: bool) -> None:
    """Write a new memory in $EDITOR (a memory file to fill in) and add it; print its id."""
    from local_recall.memory.hand_edit import new_memory_text, read_edited

    template = new_memory_text(app.settings.clock(), stored_scope(scope))
    start = Path(from_file).read_text("utf-8") if from_file else template
    text, draft = _in_editor(app, start, "new-memory")
    if text.strip() in ("", template.strip()):
        click.echo("not saved: the file was left unchanged", err=True)
        sys.exit(1)
    try:
        edited = read_edited(text, draft, app.settings.clock())
    except InvalidMemoryFile as exc:
        raise InvalidInput(
            f"not saved: {exc.reason}; your text is kept in {draft} "
            f"(`local-recall new --from {draft}`)"
        ) from None
    keywords = list(edited.keywords) or None
    result = app.recall.save(
        edited.subject, edited.body, keywords=keywords, scope=edited.applies_to, source="cli"
    )
    draft.unlink(missing_ok=True)
    stored = result.memory
    _notice(redaction_notice([edited.subject, edited.body], [stored.subject, stored.body]))
    if not result.created:
        click.echo(f"local-recall: the same text is already memory {stored.id}", err=True)
    if as_json:
        emit_json({**memory_row(stored), "created": result.created})
    else:
        click.echo(stored.id)


def _in_editor(app: AppContext, text: str, name: str) -> tuple[str, Path]:
    """Open `text` in the user's editor ($VISUAL, $EDITOR, else vi) as a file in the state
    folder (kept there if what was saved cannot be used); the saved text and that file."""
    from local_recall.repo.files import write_text_atomic

    environ = app.settings.environ
    editor = environ.get("VISUAL") or environ.get("EDITOR") or "vi"
    draft = app.recall.layout.state_dir / f"{name}.md"
    draft.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(draft, text)
    try:
        click.edit(filename=str(draft), editor=editor, env=dict(environ))
    except click.ClickException as exc:
        raise InvalidInput(f"cannot run the editor {editor!r}: {exc.format_message()}") from None
    return draft.read_text("utf-8"), draft


def _edit_in_editor(app: AppContext, memory_id: str, as_json: bool) -> None:
    from local_recall.memory.hand_edit import read_edited

    memory = app.recall.get(memory_id)
    assert memory.path is not None
    before = memory.path.read_text("utf-8")
    text, draft = _in_editor(app, before, f"edit-{memory.id}")
    if text == before:
        draft.unlink(missing_ok=True)
        click.echo("unchanged", err=True)
        return
    try:
        edited = read_edited(text, draft, app.settings.clock(), memory.id)
    except InvalidMemoryFile as exc:
        raise InvalidInput(f"not saved: {exc.reason}; your text is kept in {draft}") from None
    updated = app.recall.update(
        memory.id,
        subject=edited.subject,
        body=edited.body,
        keywords=list(edited.keywords),
        scope=edited.applies_to,
    )
    draft.unlink(missing_ok=True)
    _notice(redaction_notice([edited.subject, edited.body], [updated.subject, updated.body]))
    if as_json:
        emit_json(memory_row(updated))
    else:
        click.echo(updated.id)


@cli.command()
@click.argument("memory_id")
@click.option("--json", "as_json", is_flag=True, help="Print what was deleted as JSON.")
@pass_app
def rm(app: AppContext, memory_id: str, as_json: bool) -> None:
    """Delete a memory: its file and any other file claiming the same id (upper case, no
    dashes)."""
    deleted = app.recall.forget(memory_id)
    memory = deleted.memory
    if as_json:
        paths = [str(p) for p in deleted.paths]
        emit_json({"deleted": memory.id, "path": paths[0], "paths": paths})
    else:
        click.echo(f"deleted {memory.id}")
        if len(deleted.paths) > 1:  # the other spellings are worth naming: they were a surprise
            for path in deleted.paths:
                click.echo(f"  removed {path}")


def _files_inside(folder: Path) -> list[str]:
    """The `*.md` files under `folder`, walked without following a symbolic link."""
    if through_symlink(folder):
        raise InvalidInput(f"{folder} is a symbolic link; not followed")
    found = []
    for parent, _, names in os.walk(folder):
        found += [
            path
            for path in (os.path.join(parent, name) for name in names if name.endswith(".md"))
            if not os.path.islink(path) and os.path.isfile(path)
        ]
    return sorted(found)


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print findings as a JSON array.")
@pass_app
def scan(app: AppContext, paths: Sequence[str], as_json: bool) -> None:
    """Report secrets in memory files (default: all of local-recall/). Exit 1 if any is found.

    Prints path, line and kind — never the secret. For CI and the pre-commit hook."""
    from local_recall.redaction.secrets import scan_paths

    # By default the repository's own files, never through a committed symlink
    targets = list(paths) or _files_inside(Layout(app.settings.root).recall_dir)
    missing = [p for p in targets if not Path(p).exists()]
    if missing:
        raise InvalidInput(f"no such file or folder: {missing[0]}")
    findings = scan_paths(targets)
    if as_json:
        emit_json([{"path": str(f.path), "line": f.line, "kind": f.kind} for f in findings])
    else:
        for finding in findings:
            click.echo(f"{finding.path}:{finding.line}: {finding.kind}")
        if not findings:
            click.echo(f"no secrets found in {len(targets)} path(s)", err=True)
    if findings:
        sys.exit(1)
