"""Prompts with nothing to look up: "thanks", "continue", "yes do it" inject nothing, unsearched.

    if has_nothing_to_look_up(prompt): return ""   # before any search, on every path

A prompt is searched only when it holds at least one word that could name a topic: every word
is looked up in small hand-written sets of acknowledgements, agreement, continuation and filler
("ok", "go", "ahead", "again", "please"), plus the search's English stop words. Anything else —
"run the linter", "why does this raise a KeyError?" — is searched, and relevance decides
whether a memory answers it (a memory "Lint with make lint" should reach "run the linter").

Pure and cheap (one regex over the prompt's first few hundred characters): the prompt hook
calls it on every prompt before anything heavy is imported.
"""

from __future__ import annotations

import re
from typing import Final

from local_recall.search.text_terms import STOP_WORDS

# Longer prompts always carry something to look up (or are pasted text): not worth scanning.
MAX_CHAT_CHARS: Final = 120

_WORD: Final = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)

CHAT_WORDS: Final = (
    frozenset(
        """
    thanks thank thx ty cheers appreciated appreciate great good nice cool awesome perfect
    excellent amazing brilliant wonderful fine lovely neat sweet wow superb fantastic
    ok okay k kk alright right sure yes yeah yep yup yea aye no nope nah not correct exactly
    indeed agreed agree absolutely definitely certainly true done
    continue continuing proceed go ahead keep going carry on onward next resume move
    do it that this those these them one other same again more please pls plz now then
    just also too still already as before well so and or but let lets us me you we i
    try retry stop wait hold pause hang cancel abort never mind nevermind
    sounds looks seems lgtm works worked working ship looking good job work
    hi hello hey morning evening bye goodbye see later
    what why how yes lol haha hmm hm oh ah uh um ahh oops sorry
    is are was be can could would should will shall did does do
    much lot lots left where off very really happy
    """.split()  # noqa: SIM905 - a word list reads better as prose
    )
    | STOP_WORDS
)


def has_nothing_to_look_up(prompt: str) -> bool:
    """True when the prompt is chat or a bare go-ahead: no word in it could find a memory.
    Empty prompts count as nothing to look up; long prompts never do."""
    text = prompt.strip()
    if len(text) > MAX_CHAT_CHARS:
        return False
    found = _WORD.findall(text.lower())
    return all(word in CHAT_WORDS for word in found)
