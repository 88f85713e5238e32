"""The blocks every injected text is made of: `<local-recall-context>` … `</local-recall-context>`,
under Claude Code's size for hook context. Pure and light: a hook's process checks the daemon's
whole answer against it (hooks/answers.py) before printing it, importing nothing else."""

OPEN_TAG = "<local-recall-context>"
CLOSE_TAG = "</local-recall-context>"
# Claude Code replaces hook context longer than 10,000 characters by a 2 KB preview; stay
# well under it (the JSON envelope and any future prefix do not count against us, but a margin
# costs nothing).
MAX_CONTEXT_CHARS = 9_000


# What Claude Code takes whole as a hook's context: longer, it shows a 2 KB preview instead.
HOOK_CONTEXT_LIMIT = 10_000


def is_context(text: str) -> bool:
    """Whether `text` is what the renderers make: one block, or a few joined by newlines
    (SessionStart's health warning, summaries and index), each opened and closed once (a memory
    cannot open or close one: context/notes.py defangs the tags), all within Claude Code's
    limit. A hook's process prints the daemon's answer only then."""
    if len(text) > HOOK_CONTEXT_LIMIT or not text.startswith(OPEN_TAG):
        return False
    if not text.endswith(CLOSE_TAG):
        return False
    inner = text[len(OPEN_TAG) : -len(CLOSE_TAG)]
    return all(
        OPEN_TAG not in part and CLOSE_TAG not in part
        for part in inner.split(f"{CLOSE_TAG}\n{OPEN_TAG}")
    )
