"""What a coding agent is shown from its memory: at session start (the session summaries and an
index of memories) and on each prompt (the memories that answer it). `service.ContextService`
computes it from one `Recall`; the daemon serves it over its socket and every agent's hook calls
it directly when no daemon answers. The rest of this package is pure and light: the prompt
hook imports it on every prompt."""
