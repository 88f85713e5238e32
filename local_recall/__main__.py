"""Console entry point. `local-recall hook ...` is dispatched before anything heavy is imported
(not even click): a hook runs on every prompt and must start in a few milliseconds."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["hook"]:
        from local_recall.claude_code.hooks.events import run_hook

        return int(run_hook(args[1:]))
    from local_recall.cli import run_cli

    return run_cli(args)


if __name__ == "__main__":
    sys.exit(main())
