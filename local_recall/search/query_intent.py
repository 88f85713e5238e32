"""Prompts with nothing to look up: "thanks", "continue", "yes do it" inject nothing, unsearched.

    if has_nothing_to_look_up(prompt): return ""   # before any search, on every path
    intent = prompt_intent(prompt)                 # an input of the inject / skip decision

A prompt is searched only when it holds at least one word that could name a topic: every word
is looked up in small hand-written sets of acknowledgements, agreement, continuation and filler
("ok", "go", "ahead", "again", "please"), plus the search's English stop words. Anything else —
"run the linter", "why does this raise a KeyError?" — is searched, and relevance decides
whether a memory answers it (a memory "Lint with make lint" should reach "run the linter").

Pure and cheap (one regex over the prompt's first few hundred characters): the prompt hook
calls it on every prompt before anything heavy is imported.
"""

from __future__ import annotations

import builtins
import re
from functools import lru_cache
from typing import Final, NamedTuple

from local_recall.search.text_terms import STOP_WORDS

# Longer prompts always carry something to look up (or are pasted text): not worth scanning.
MAX_CHAT_CHARS: Final = 120
# The intent of a prompt is read from its head: a pasted log says nothing more.
MAX_INTENT_CHARS: Final = 600

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


# --- what the prompt asks for: inputs of the inject / skip decision (decision.py) ------------

# Something that could be looked up by name: an identifier (snake_case, dotted.name, CamelCase,
# SCREAMING_CASE), a path or file name, a command-line flag, an error type, a version number, a
# quoted literal.
_NAMES_CODE: Final = re.compile(
    r"\b_*[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+\b"  # snake_case, _private, SCREAMING_CASE
    r"|\b[A-Za-z_]\w*\.[A-Za-z_]\w*"  # dotted.name, file.py
    r"|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z0-9]+[A-Z]\w*"  # camelCase, PascalCase
    r"|\w/\w"  # a path
    r"|(?:^|\s)--?[a-z][\w-]*"  # --flag
    r"|\b\w+(?:Error|Exception|Warning)\b"  # an error type
    r"|\b\d+\.\d+"  # a version
    r"|`[^`]+`",  # `code`
)
# Words pointing at the conversation or the code on screen rather than naming a topic.
DEICTIC_WORDS: Final = frozenset(
    "this these those here above below".split()  # noqa: SIM905
)
# Verbs that open an instruction about the work at hand ("add a test for this", "fix the typo"):
# the prompt asks for an action, not for something the repository's memory knows.
INSTRUCTION_VERBS: Final = frozenset(
    """add fix write make rename remove delete extract move use convert explain show open run
    refactor simplify split update change create implement clean format sort reduce check review
    try undo revert commit push print replace translate optimise optimize handle return parse
    read describe draft summarise summarize list search apply do give improve correct tidy inline
    turn break log look tell generate insert append drop rewrite call print test debug profile
    stage squash merge rebase keep continue finish complete""".split()  # noqa: SIM905
)


class Intent(NamedTuple):
    """What a prompt's own words say about whether a memory could answer it (0.0 or 1.0 each,
    `generic` a share). A NamedTuple: one is made per query, and the module stays cheap."""

    names_code: float  # it names an identifier, path, flag, error type, version or `literal`
    instruction: float  # it opens with a verb telling the agent what to do ("add", "fix", ...)
    # and names nothing that could be looked up: an instruction about the work at hand
    deictic: float  # it points at the conversation: "this", "it", "above", "again"...
    generic: float  # share of its content words that generic instructions use (the probes')


@lru_cache(maxsize=1)
def generic_stems() -> frozenset[str]:
    """The stems of the background probes' instructions: the vocabulary of talk about the
    conversation itself ("fix", "typo", "test", "file", "function", ...)."""
    from local_recall.search.background_probes import INSTRUCTIONS
    from local_recall.search.relevance import content_words, stem

    return frozenset(stem(w) for text in INSTRUCTIONS for w in content_words(text))


def prompt_intent(prompt: str) -> Intent:
    """The Intent of a prompt (its first MAX_INTENT_CHARS characters)."""
    from local_recall.search.relevance import content_words, stem

    text = prompt.strip()[:MAX_INTENT_CHARS]
    lowered = _WORD.findall(text.lower())
    content = content_words(text)
    generic = generic_stems()
    share = sum(stem(w) in generic for w in content) / len(content) if content else 1.0
    names = 1.0 if _NAMES_CODE.search(text) else 0.0
    return Intent(
        names_code=names,
        instruction=1.0 if names == 0.0 and lowered and lowered[0] in INSTRUCTION_VERBS else 0.0,
        deictic=1.0 if any(w in DEICTIC_WORDS for w in lowered) else 0.0,
        generic=share,
    )


# Verbs of an edit to the code at hand ("add error handling", "rename foo to bar"): such a
# prompt asks the agent to change what is on screen, not what the repository's memory knows.
# Questions in the imperative ("explain why…", "show me where…", "run the linter") are not
# among them: a memory may answer those.
EDIT_VERBS: Final = frozenset(
    """add fix write rename remove delete extract move convert refactor simplify split use open
    update change create implement clean format sort reduce undo revert commit push replace
    translate optimise optimize handle inline tidy correct improve rewrite insert append drop
    generate draft stage squash merge rebase keep continue finish complete print turn break
    summarise summarize upgrade downgrade bump pin
    """.split()  # noqa: SIM905
)
# Words a request opens with before its verb ("now add…", "can you please fix…").
_LEAD_IN: Final = frozenset(
    "now then so ok okay please pls can could would will you u just also and lets let us".split()  # noqa: SIM905
)
# A Python error pasted on its own ("KeyError: 'name'"): the builtin type and its message
# name nothing of the project.
_PASTED_ERROR: Final = re.compile(r"^\s*[A-Z][A-Za-z]*(?:Error|Exception|Warning)\s*:")
_BUILTIN_NAMES: Final = frozenset(dir(builtins)) | frozenset({"NoneType"})


# Words that point at what is on screen or was just said. "here" asks about this project as
# often as about the screen ("how are tests run here?"); "again" repeats the last request.
_ON_SCREEN: Final = (DEICTIC_WORDS - {"here"}) | {"again"}


def names_project_code(prompt: str) -> bool:
    """Whether the prompt names an identifier, path, flag, version or `literal` that is not
    one of Python's own names (`KeyError`, `NoneType`)."""
    return any(
        match.group().strip() not in _BUILTIN_NAMES
        for match in _NAMES_CODE.finditer(prompt[:MAX_INTENT_CHARS])
    )


def asks_of_repository(prompt: str) -> bool:
    """Whether a prompt asks something this repository's memory may know, so that its best
    candidates are worth a pointer line each. It does not when it is an edit of the code at
    hand ("add error handling", "now rename foo", "add caching to get_user"), a bare Python
    error pasted without anything of the project named, or a prompt about what is on screen or
    what was just said ("why does this return None?", "run it again"); otherwise it does when
    it names something of the project that can be looked up (an identifier, a path, a flag, a
    version) or asks or reports something about it (docs/hooks.md#full-text-pointers-nothing).
    """
    text = prompt.strip()
    head = text[:MAX_INTENT_CHARS]
    first = next((w for w in head.lower().split() if w.strip(",.!?:;") not in _LEAD_IN), "")
    if first.strip(",.!?:;") in EDIT_VERBS:  # a word, not an identifier such as open_in_browser
        return False
    if names_project_code(text):
        return True
    if _PASTED_ERROR.match(text):
        return False
    words = _WORD.findall(head.lower())
    return not any(w in _ON_SCREEN for w in words)
