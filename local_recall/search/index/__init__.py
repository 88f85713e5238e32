"""The search index: a LanceDB database in `local-recall/index/`, derived from the memory files
and rebuildable from them. `plan.py` (pure: what a sync changes), `sync.py` (carries it out),
`tables.py` (the connection, tables, meta file, maintenance), `rows.py` (`MemoryIndex`: the
memory rows), `queries.py` and `candidates.py` (a search's vector and full-text candidates),
`schema.py` (the columns). lancedb is imported in tables.py and queries.py only."""
