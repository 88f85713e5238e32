"""Console entry point. `local-recall hook ...` is dispatched before anything heavy is imported
(not even click): a hook runs on every prompt and must start in a few milliseconds. `search` and
`list` first ask the running daemon the same way (cli/warm.py)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["hook"]:
        if args[1:2] == ["--agent"] and len(args) > 2 and args[2] != "claude":
            return _agent_hook(args[2], args[3:])
        if args[1:2] == ["--agent"]:
            args = ["hook", *args[3:]]
        from local_recall.claude_code.hooks.events import run_hook

        return int(run_hook(args[1:]))
    if any(command in args[:3] for command in ("search", "list", "why")):
        from local_recall.cli.warm import run_warm  # the daemon answers, if one runs

        warm = run_warm(args)
        if warm is not None:
            return warm
    from local_recall.cli.main import run_cli

    return run_cli(args)


def _agent_hook(agent: str, args: list[str]) -> int:
    """`local-recall hook --agent <codex|gemini|copilot> <event>`; an unknown agent does nothing
    (exit 0: a hook never breaks a session)."""
    if agent == "codex":
        from local_recall.codex.hooks import run_hook
    elif agent == "gemini":
        from local_recall.gemini.hooks import run_hook
    elif agent == "copilot":
        from local_recall.copilot.hooks import run_hook
    else:
        return 0
    return int(run_hook(args))


if __name__ == "__main__":
    sys.exit(main())
