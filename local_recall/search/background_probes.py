"""Prompts that no memory of any store should answer: the probes of a store's background.

The indexer searches the store with each probe and keeps the best relevance each one reaches
(search/background.py): how close "some memory" comes to a prompt that asks nothing of this store.
In a store of 20 memories an unrelated prompt finds little; in one of 5,000 something is always
close. decision.py compares a prompt's best match with that distribution.

Two kinds, both written for this list and kept out of every benchmark's prompts (a test checks):
instructions and chat about the conversation or the code on screen, as a developer types them
to a coding agent; and questions about people, plans and places that a repository's memory
would not hold. Changing the list changes every store's background: bump PROBES_VERSION so the
indexer recomputes them.
"""

from __future__ import annotations

from typing import Final

PROBES_VERSION: Final = 1

INSTRUCTIONS: Final = (
    "continue from here",
    "ok do that",
    "yes, go with the second option",
    "thank you, that fixed it",
    "awesome, works now",
    "hmm, not quite",
    "please try once more",
    "look at the code above",
    "read this file and tell me what it does",
    "what is this variable for?",
    "explain the stack trace I pasted",
    "what does this warning mean?",
    "correct the spelling in this comment",
    "fix a typo in the readme",
    "improve the wording of this docstring",
    "give this function a better name",
    "add comments to this block",
    "add a test for this function",
    "write tests for the new class",
    "the test fails, can you fix it?",
    "why does this assertion fail?",
    "make this code cleaner",
    "break this function into smaller pieces",
    "turn this loop into a comprehension",
    "change the return type to a list",
    "remove the debug output",
    "delete this unused function",
    "tidy up the imports at the top",
    "reformat this file",
    "add type hints to these functions",
    "make the function async",
    "handle the case where the input is empty",
    "add a try/except around this call",
    "log the error instead of printing it",
    "use a dict instead of a list here",
    "replace the magic number with a constant",
    "rename the class to something more descriptive",
    "move this helper into its own file",
    "inline this variable",
    "optimise this for speed",
    "it is too slow, profile it",
    "show me the output",
    "print the full error",
    "show the git status",
    "stage everything and commit",
    "write a short commit message",
    "create a branch for this work",
    "open a PR with these changes",
    "describe the change for the changelog",
    "draft the release notes",
    "explain your reasoning",
    "summarise the discussion so far",
    "what should we do next?",
    "list the files you edited",
    "go back to the previous version",
    "undo that change",
    "apply the same fix to the other function",
    "do the same in the test file",
    "search the codebase for usages of this",
    "where is this class defined?",
    "check the edge cases",
    "is there a bug in this loop?",
    "can this raise an exception?",
    "review my changes",
    "add an example to the docs",
    "update the docs to match",
    "translate this comment to English",
    "make the error message friendlier",
    "add a flag to skip this step",
    "parse the arguments with argparse",
    "read the config from a file instead",
    "return early if the list is empty",
    "sort these by name",
    "NameError: name 'x' is not defined",
    "IndexError: tuple index out of range",
    "ImportError: cannot import name 'foo'",
    "RuntimeError: something went wrong",
)

QUESTIONS: Final = (
    "what time is the meeting tomorrow?",
    "who is on holiday next week?",
    "what did the manager say in the last one-on-one?",
    "where did we have lunch on Friday?",
    "when is the next team offsite?",
    "what is the wifi password in the office?",
    "how was the weekend?",
    "what are the plans for the summer?",
    "who won the game last night?",
    "what is the weather like today?",
    "what should I cook for dinner?",
    "which movie did she recommend?",
    "when is his birthday?",
    "where did they go on vacation?",
    "what is the name of her dog?",
    "how many people work in the company?",
    "who is the new hire on the team?",
    "what is the budget for next quarter?",
    "when does the contract with the vendor end?",
    "what is the phone number of the front desk?",
    "who approves expense reports?",
    "what was decided in the board meeting?",
    "which hotel did we book for the conference?",
    "what is the address of the new office?",
    "how long is the commute?",
    "what is the deadline for the grant application?",
    "who is organising the party?",
    "what gift should we buy for the retirement?",
    "how do I book a meeting room?",
    "what did the customer complain about last month?",
)

PROBES: Final = INSTRUCTIONS + QUESTIONS
