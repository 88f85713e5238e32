"""Claude Code's hooks: `events.py` (`local-recall hook <event>`: its events, deadlines and
output shape, over the shared answers of `local_recall.hooks`) and `payload.py` (its stdin
JSON, pure)."""
