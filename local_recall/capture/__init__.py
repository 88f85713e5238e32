"""From coding-agent sessions to memories, below the `Recall` facade (which calls it as
`Recall.sync_transcripts`). One pass (`pipeline.py`) reads top to bottom: observe
(`sources.py`: an agent's session files — Claude Code's in `transcripts/`, the others' in
`sessions/` — one observation each; `ledger.py`: progress and daily spend, loaded together)
-> plan (`pipeline_plan.py`, pure, over the values of `progress.py`) -> carry out
(`executor.py`: read, chunk, extract with `extraction/`, write with `writer.py`, note what each
session did with the memories it was shown with `session_signals.py`; then `summaries.py`) ->
report (`report.py`: one `Tally`, its `PassReport` derived). The files: `progress_file.py`
(state/pipeline.json), `budget.py` (state/budget.json)."""
