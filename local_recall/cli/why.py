"""`local-recall why PROMPT`: what the prompt hook would show for PROMPT, and why
(context/why.py). A running daemon answers it warm (cli/warm.py, op `cli_why`); this is the
CLI's own process, when none does. Printed: each candidate's tier and why, its signals,
relevance and score, the store's background, the decision's inputs and the result.
"""

from __future__ import annotations

import click

from local_recall.cli.app import AppContext, cli, emit_json, pass_app
from local_recall.context.why import explain_prompt


@cli.command()
@click.argument("prompt")
@click.option("--json", "as_json", is_flag=True, help="Print the explanation as JSON.")
@pass_app
def why(app: AppContext, prompt: str, as_json: bool) -> None:
    """Show what the prompt hook would show for PROMPT — each memory in full, as a pointer, or
    not at all — and why."""
    explanation = explain_prompt(app.recall, prompt, sync=True)
    if as_json:
        emit_json(explanation.to_json())
    else:
        click.echo(explanation.to_text())


__all__ = ["explain_prompt", "why"]  # explain_prompt: where benchmarks and tests found it
