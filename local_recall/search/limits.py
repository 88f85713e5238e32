"""The input limits of a search, defined once for every entry point (docs/search.md#limits).

No imports: the prompt hook reads these on every prompt. How each adapter applies them:

- query text: the search reads at most MAX_QUERY_CHARS characters (its head says what it is
  about, and the embedder reads ~256 tokens). Where the text is a prompt (hooks, the daemon's
  socket, the Python API) a longer one is cut; where someone typed it as a query (the MCP tool,
  `local-recall search`) it is refused with a message naming the limit.
- limit: 1..MAX_LIMIT hits, refused outside that range everywhere.
"""

MAX_QUERY_CHARS = 2_000
MAX_QUERY_TERMS = 48  # content words of a query; a pasted text is a bag of many more
MAX_LIMIT = 100
