"""Why a prompt got the memories it got — or none: the decision's inputs, for people to read.

    explanation = Explanation(prompt, searched=True, reason="", hits=result.hits,
                              decision=result.decision, background=..., memories=...,
                              threshold=0.5, injected=("<id>", ...))
    print(explanation.to_text()); json.dumps(explanation.to_json())

`local-recall why "PROMPT"` builds one through the same code as the prompt hook (the chit-chat
filter, the search with the hook's limit, the store-aware decision, the hook's threshold and
budget) and prints it; the coding benchmark lists its misses with it. Pure: values in, text out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from local_recall.search.decision import Background, Decision
from local_recall.search.query import SearchHit
from local_recall.search.scoring import Signals, score_hit

SUBJECT_CHARS = 70


@dataclass(frozen=True, slots=True)
class Explanation:
    prompt: str
    searched: bool
    reason: str  # why it was not searched ("" when it was)
    hits: tuple[SearchHit, ...]
    decision: Decision | None
    background: Background | None
    memories: int  # memories in the store
    threshold: float  # hooks.prompt_min_score
    injected: tuple[str, ...]  # ids of the memories the hook would inject, in order
    degraded: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "prompt": self.prompt,
            "searched": self.searched,
            "reason": self.reason or None,
            "memories": self.memories,
            "background": background_summary(self.background),
            "decision": None if self.decision is None else self.decision.to_json(),
            "threshold": self.threshold,
            "injected": list(self.injected),
            "degraded": self.degraded,
            "candidates": [
                {
                    "id": hit.id,
                    "subject": hit.subject,
                    "applies_to": hit.applies_to,
                    "score": round(hit.score, 4),
                    "relevance": round(relevance_of(hit), 4),
                    "injected": hit.id in self.injected,
                    "signals": None if hit.signals is None else hit.signals.to_json(),
                }
                for hit in self.hits
            ],
        }

    def to_text(self) -> str:
        lines = [f"prompt: {' '.join(self.prompt.split())[:200]}"]
        if not self.searched:
            lines.append(f"not searched: {self.reason}")
            lines.append("decision: inject nothing")
            return "\n".join(lines)
        lines.append(f"store: {self.memories} memories · " + _background_line(self.background))
        decision = self.decision
        if decision is not None:
            intent = decision.intent
            lines.append(
                f"prompt's words: names code {_yes(intent.names_code)} · an instruction "
                f"{_yes(intent.instruction)} · points at the conversation {_yes(intent.deictic)} · "
                f"generic instruction words {intent.generic:.0%}"
            )
            tail = (
                "no background: relevance decides alone"
                if decision.tail is None
                else f"reached by {decision.tail:.0%} of the background"
            )
            lines.append(
                f"best relevance {decision.relevance:.2f} (runner-up {decision.runner_up:.2f}, "
                f"margin {decision.margin:.2f}) · {tail} → P(best answers) = "
                f"{decision.probability:.2f}"
            )
        verdict = (
            f"inject {len(self.injected)} memor{'y' if len(self.injected) == 1 else 'ies'}"
            if self.injected
            else "inject nothing"
        )
        lines.append(f"decision: threshold {self.threshold:.2f} → {verdict}")
        if self.degraded:
            lines.append(f"degraded: {self.degraded}")
        if self.hits:
            lines.append(
                "  #  score  relev  cosine  cover  head  fuzzy  unknown  in  id        subject"
            )
        for rank, hit in enumerate(self.hits, start=1):
            s = hit.signals or Signals(frozenset())
            cosine = "  -   " if s.cosine is None else f"{s.cosine:6.2f}"
            lines.append(
                f"{rank:3d}  {hit.score:5.2f}  {relevance_of(hit):5.2f}  {cosine}  "
                f"{s.coverage or 0:5.2f}  {s.head_coverage:4.2f}  {s.fuzzy or 0:5.2f}  "
                f"{s.unknown:7.2f}  {'*' if hit.id in self.injected else ' ':>2}  "
                f"{hit.id[:8]}  {' '.join(hit.subject.split())[:SUBJECT_CHARS]}"
            )
        return "\n".join(lines)


def relevance_of(hit: SearchHit) -> float:
    """The hit's relevance before the decision moved it (relevance.py)."""
    return hit.score if hit.signals is None else score_hit(hit.signals)


def background_summary(background: Background | None) -> dict[str, object] | None:
    if background is None:
        return None
    tops = background.tops
    return {
        "probes": len(tops),
        "computed_at_memories": background.memories,
        "median": round(_quantile(tops, 0.5), 4),
        "p90": round(_quantile(tops, 0.9), 4),
        "max": round(tops[-1], 4) if tops else 0.0,
    }


def _background_line(background: Background | None) -> str:
    summary = background_summary(background)
    if summary is None:
        return "no background yet (run `local-recall index`)"
    return (
        f"background: best relevance of {summary['probes']} unrelated prompts "
        f"(at {summary['computed_at_memories']} memories): median {summary['median']:.2f}, "
        f"p90 {summary['p90']:.2f}, max {summary['max']:.2f}"
    )


def _quantile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))]


def _yes(value: float) -> str:
    return "yes" if value >= 0.5 else "no"
