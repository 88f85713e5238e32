"""The user's own words in a prompt as an agent hands it to its prompt hook. Pure.

Gemini CLI 0.61 passes BeforeAgent a `prompt` that starts with the context the SessionStart hook
gave it — our `<local-recall-context>` block, HTML-escaped, inside its own `<hook_context>` —
and ends with what the user typed. Searched as it is, the query is our own index listing
(cut at MAX_QUERY_CHARS before the user's words are reached) and nothing answers the prompt.
So every context block a hook or the harness put there goes before the query is made, for every
agent: the user's words are what the memories must answer.

stdlib `re` only: the prompt hook imports this on every prompt.
"""

import re

# Blocks an agent's harness or a hook (ours or another's) wraps injected context in; the tags
# capture/transcripts/entries.py strips from transcripts, plus Gemini's <hook_context>. An
# unclosed tag drops the rest, as there: text after an opening tag is never the user's.
_INJECTED_BLOCK = re.compile(
    r"<(hook_context|local-recall-context|system-reminder|user-prompt-submit-hook"
    r"|session-start-hook)>.*?(?:</\1>|\Z)",
    re.DOTALL,
)
# Our own block as an agent shows it after HTML-escaping (Gemini escapes hook output).
_ESCAPED_OWN_BLOCK = re.compile(
    r"&lt;local-recall-context&gt;.*?(?:&lt;/local-recall-context&gt;|\Z)", re.DOTALL
)


def user_words(prompt: str) -> str:
    """`prompt` without the context blocks injected into it, stripped; "" when nothing else."""
    text = _INJECTED_BLOCK.sub(" ", prompt)
    return _ESCAPED_OWN_BLOCK.sub(" ", text).strip()
