"""Installing into Claude Code: `plan.py` (pure: what settings.json, .mcp.json and the plugin
need), `apply.py` (carries the plan out, and undoes it), `guidance.py` (the skills and slash
commands from `../agent_files/`)."""
