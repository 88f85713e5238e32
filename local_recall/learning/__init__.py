"""What local-recall learns from the agent's own sessions: which memories each session was
shown and what it did with them (outcomes.py, usage_log.py), and what is built from that
(docs/hooks.md#what-is-learned)."""
