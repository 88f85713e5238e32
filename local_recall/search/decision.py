"""Does the best memory answer the prompt, given the store it came from? The inject / skip decision.

    decision = decide(relevances, background, prompt_intent(prompt))   # relevances best first
    scores = [shifted(r, decision) for r in relevances]
    inject the hits whose score >= hooks.prompt_min_score

relevance.py says how likely one memory answers a query from absolute evidence (cosine, words,
identifiers). That is not enough to decide: a store of 5,000 memories always has something
close to any prompt, a store of 20 rarely does, and a prompt that asks nothing ("fix the typo
in the docstring") can match a memory word for word. The decision weighs, per prompt:

* the best relevance (`relevance`) and how far it stands above the runner-up (`margin`);
* the store's background (`tail`): the share of the store's background probes — prompts that no
  memory should answer, searched by the indexer (background.py) — whose best relevance in this
  store reaches this prompt's. A best match that most unrelated prompts also reach in this store
  is no evidence; one that none reaches is;
* the prompt's own words (`Intent`, query_intent.py): does it name something that can be looked
  up, is it an instruction about the work at hand, does it point at the conversation, is it
  made of generic instruction words.

A logistic model (fitted by benchmarks/decision_fit.py, constants below) turns them into the
probability that the best memory answers the prompt. Every hit of the query is then shifted by
the same amount on the logit scale (`shifted`), so the best hit's score *is* that probability,
the order of hits never changes, and one threshold (hooks.prompt_min_score) means the same at
every store size. Runners-up get only part of an upward shift (RUNNER_UP_SHARE): a confident
best match does not drag weak neighbours into the prompt.

Without a background (an index built before this version, or none yet) the decision is the
relevance alone, as before, and says so (`Decision.tail is None`).

Pure: numbers in, numbers out. Same inputs on every path (daemon, the hook's in-process
fallback, CLI, MCP), so every path decides alike.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from local_recall.search.query_intent import Intent

# --- the fitted constants (benchmarks/decision_fit.py) ---------------------------------------

FIT_NOTE: Final = (
    "benchmarks/decision_fit.py --negative-rate 0.05: the coding benchmark's tune projects (pip, "
    "pydantic; stores of ~25 and ~500 memories; their questions, checked no-answer questions and "
    "the tune generic prompts) and LoCoMo dev conversations 26, 30, 41 (own questions, the next "
    "conversation's questions, generic_prompts.FIT), the two domains weighted alike; label: the "
    "store holds the prompt's answer. Held out: the coding benchmark's held-out projects and "
    "generic prompts, LoCoMo 42, 43."
)
# Intercept, then one weight per entry of `inputs_vector()`: logit(best relevance), log(tail),
# margin, names_code, instruction, deictic, generic. The intercept is shifted so that 0.5 lets
# at most 5 % of each tuning group's no-answer prompts through (the strictest group decides).
WEIGHTS: Final = (-2.5368, 2.1862, -0.2016, 0.2323, -0.4235, -2.3217, -3.8316, -0.4111)
# Share of an upward shift that runners-up receive (1.0: the same shift as the best hit).
RUNNER_UP_SHARE: Final = 0.5

LOGIT_CLIP: Final = 8.0  # relevance 0.9997: beyond this the logit says nothing more
MARGIN_CAP: Final = 4.0  # a runner-up this far below (logit) is as good as none
MIN_TAIL: Final = 1e-3


def logit(p: float) -> float:
    p = min(max(p, 1e-9), 1 - 1e-9)
    return max(-LOGIT_CLIP, min(LOGIT_CLIP, math.log(p / (1 - p))))


def sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


@dataclass(frozen=True, slots=True)
class Background:
    """A store's background: the best relevance each background probe reached in it (sorted),
    computed by the indexer for `memories` memories with probe set `version`."""

    tops: tuple[float, ...]
    memories: int
    version: int
    embedder: str

    def tail(self, relevance: float) -> float:
        """The (smoothed) share of probes whose best relevance is at least `relevance`."""
        n = len(self.tops)
        above = n - bisect_left(self.tops, relevance)
        return max(MIN_TAIL, (above + 0.5) / (n + 1))

    def to_json(self) -> dict[str, object]:
        return {
            "version": self.version,
            "memories": self.memories,
            "embedder": self.embedder,
            "tops": [round(t, 6) for t in self.tops],
        }


def background_from_json(data: object) -> Background | None:
    """A Background from `to_json` output; None for anything else (a hostile file included)."""
    if not isinstance(data, dict):
        return None
    version, memories, embedder, tops = (
        data.get("version"),
        data.get("memories"),
        data.get("embedder"),
        data.get("tops"),
    )
    if not isinstance(version, int) or not isinstance(memories, int) or memories < 0:
        return None
    if not isinstance(embedder, str) or not isinstance(tops, list) or not 0 < len(tops) <= 10_000:
        return None
    values = []
    for top in tops:
        if isinstance(top, bool) or not isinstance(top, int | float) or not 0 <= top <= 1:
            return None
        values.append(float(top))
    return Background(tuple(sorted(values)), memories, version, embedder)


@dataclass(frozen=True, slots=True)
class Decision:
    """The decision's inputs and result for one prompt (what `local-recall why` shows)."""

    relevance: float  # the best hit's relevance (0 when there is no hit)
    runner_up: float  # the second best's (0 when none)
    tail: float | None  # share of background probes reaching `relevance`; None: no background
    intent: Intent
    probability: float  # that the best hit answers the prompt: the best hit's score
    shift: float  # logit shift applied to every hit (runners-up: RUNNER_UP_SHARE of it if > 0)

    @property
    def margin(self) -> float:
        return margin(self.relevance, self.runner_up)

    def to_json(self) -> dict[str, object]:
        return {
            "relevance": round(self.relevance, 4),
            "runner_up": round(self.runner_up, 4),
            "margin": round(self.margin, 4),
            "tail": None if self.tail is None else round(self.tail, 4),
            "intent": self.intent._asdict(),
            "probability": round(self.probability, 4),
            "shift": round(self.shift, 4),
        }


def margin(best: float, runner_up: float) -> float:
    """How far the best hit stands above the runner-up, in logits, capped at MARGIN_CAP."""
    if runner_up <= 0:
        return MARGIN_CAP
    return min(MARGIN_CAP, max(0.0, logit(best) - logit(runner_up)))


def inputs_vector(
    relevance: float, runner_up: float, tail: float, intent: Intent
) -> tuple[float, ...]:
    """The model's inputs, in WEIGHTS order (the intercept excluded)."""
    return (
        logit(relevance),
        math.log(tail),
        margin(relevance, runner_up),
        intent.names_code,
        intent.instruction,
        intent.deictic,
        intent.generic,
    )


def answer_probability(
    relevance: float,
    runner_up: float,
    tail: float,
    intent: Intent,
    weights: Sequence[float] = WEIGHTS,
) -> float:
    values = inputs_vector(relevance, runner_up, tail, intent)
    return sigmoid(weights[0] + sum(w * v for w, v in zip(weights[1:], values, strict=True)))


def decide(
    relevances: Sequence[float],
    background: Background | None,
    intent: Intent,
    weights: Sequence[float] = WEIGHTS,
) -> Decision:
    """The decision for a prompt whose hits have these relevances (best first)."""
    best = relevances[0] if relevances else 0.0
    second = relevances[1] if len(relevances) > 1 else 0.0
    if background is None or best <= 0:
        return Decision(best, second, None, intent, best, 0.0)
    tail = background.tail(best)
    probability = answer_probability(best, second, tail, intent, weights)
    return Decision(best, second, tail, intent, probability, logit(probability) - logit(best))


def shifted(relevance: float, decision: Decision, share: float = RUNNER_UP_SHARE) -> float:
    """A hit's score: its relevance moved by the decision's shift. The best hit (and any tied
    with it) gets `decision.probability`; runners-up `share` of an upward shift and all of a
    downward one, so the order never changes. 0 stays 0 (no evidence at all)."""
    if relevance <= 0 or decision.shift == 0:
        return relevance
    if relevance >= decision.relevance:
        return decision.probability
    step = decision.shift if decision.shift < 0 else share * decision.shift
    return sigmoid(logit(relevance) + step)


def least_relevance(floor: float, decision: Decision, share: float = RUNNER_UP_SHARE) -> float:
    """The least relevance a runner-up needs for `shifted` to reach `floor` (a hair below, so
    float rounding never drops one that reaches it); 0 for no floor."""
    if floor <= 0:
        return 0.0
    if floor >= 1:
        return 1.0
    step = decision.shift if decision.shift <= 0 else share * decision.shift
    return max(0.0, sigmoid(logit(floor) - step) - 1e-9)


def decide_ranked(
    ranked: Sequence[tuple[str, float]], background: Background | None, intent: Intent
) -> tuple[list[tuple[str, float]], Decision]:
    """`ranked`: (key, relevance), best first. Each key's score, in the same order, and the
    decision they came from."""
    decision = decide([relevance for _, relevance in ranked[:2]], background, intent)
    return [(key, shifted(relevance, decision)) for key, relevance in ranked], decision
