"""From Claude Code transcripts to memories: find, parse, condense, extract, the pipeline."""
