"""The per-repository background process: `control.py` (start/stop/status, the lock; used by
the CLI and the hooks), `schedule.py` (pure decisions), `runtime.py` (the running daemon),
`status.py` (state/daemon.json), `watches.py` (watchdog), `query_server.py` / `query_client.py`
(the socket) and `query_service.py` (what its requests mean: the library's ContextService)."""
