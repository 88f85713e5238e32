"""What `init --agent` writes for Codex, Gemini CLI and Copilot CLI: pure plans over file texts
(plan.py helpers, each agent's install_plan.py) carried out by files.py. docs/agents.md."""
