"""The MCP server every coding agent can start (`local-recall mcp`, over stdio): `server.py`
(the tools over `Recall`; the only `mcp` import), `shapes.py` (pure: the rows and errors the
tools return), `stdin.py` (every request answered, even one the SDK cannot decode), `lazy.py`
(the warm Recall, its background syncs and its view of the files), `folder_events.py`
(inotify)."""
