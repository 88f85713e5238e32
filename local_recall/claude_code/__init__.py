"""Claude Code's side of local-recall, and only that: its hook events, stdin and output shape
(`hooks/`), and what `init` writes into its settings, `.mcp.json`, skills and slash commands
(`install/`, with the shipped `agent_files/`). What a hook answers is the same for every agent
(`local_recall.hooks`, `local_recall.context`); so is the MCP server (`local_recall.mcp_server`).
Another agent's adapter is a sibling package shaped like this one."""
