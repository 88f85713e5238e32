"""The browser viewer (docs/ui.md): a Starlette app the daemon serves on 127.0.0.1 behind a
random token — list, search, review, staleness, consolidation, edit in place, live updates."""
