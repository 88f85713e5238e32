"""From Claude Code transcripts to memories, below the `Recall` facade (which calls it as
`Recall.sync_transcripts`): `transcripts/` (find, parse, condense), `extraction/` (prompt, the
`claude -p` and Ollama backends), `pipeline.py` (one pass, carrying out the pure plans of
`pipeline_plan.py` over the values of `progress.py`), `pipeline_state.py` (the state file),
`budget.py` (the daily budget), `writer.py` (writing memories), `report.py` (`PassReport`)."""
