"""GitHub Copilot CLI: its hooks (hooks.py) and its project configuration (install_plan.py)."""
