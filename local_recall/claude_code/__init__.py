"""The Claude Code integration: hooks, what they inject, install, the MCP server."""
