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

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from local_recall.search.decision import MARGIN_CAP, Background, Decision
from local_recall.search.query import SearchHit
from local_recall.search.scoring import score_hit
from local_recall.text import one_line

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
    threshold: float  # hooks.prompt_min_score: full text at or over it
    injected: tuple[str, ...]  # ids of the memories the hook would show in full, in order
    degraded: str | None = None
    pointers: tuple[str, ...] = ()  # ids the hook would point at (one line each), in order
    pointer_threshold: float = 1.0  # hooks.prompt_pointer_min_score
    max_pointers: int = 0  # hooks.prompt_pointers
    pointer_ranks: int = 3  # only the best this many may point (context/prompt.py)
    held_back: tuple[str, ...] = ()  # unreviewed, with [review] inject_unreviewed = false
    full_tokens: int = 0  # hooks.prompt_full_tokens (0: no limit, pointers off)
    # [learning] (docs/hooks.md#what-is-learned): the configured cut-offs, the calibrated ones
    # and their evidence; None when the repository learns nothing
    learning: Mapping[str, Any] | None = None
    tracks: Mapping[str, Mapping[str, Any]] | None = None  # memory id -> its track record
    # memory id -> its tier's reason, as the hook's selection recorded it (context/prompt.py)
    reasons: Mapping[str, str] | None = None
    asks: bool = True  # the prompt asks something of this repository: pointers by rank
    pointer_gap: float = 0.0  # hooks.prompt_pointer_gap
    shown_text: str = ""  # the block the hook would inject ("" for nothing)

    def best_reached_by(self) -> int | None:
        """How many background probes reach the best hit's relevance (None: no background)."""
        if self.decision is None or self.decision.tail is None or self.background is None:
            return None
        tops = self.background.tops
        return len(tops) - bisect_left(tops, self.decision.relevance)

    def tier(self, hit_id: str) -> str:
        if hit_id in self.injected:
            return "full"
        return "pointer" if hit_id in self.pointers else "none"

    def tier_reason(self, rank: int, hit: SearchHit) -> str:
        """Why a candidate (rank from 0) got its tier, in a person's words: what the hook's
        selection recorded (context/selection.py)."""
        recorded = (self.reasons or {}).get(hit.id)
        if recorded:
            return recorded
        if hit.id in self.held_back:
            return "unreviewed, and [review] inject_unreviewed is off"
        return "not among the candidates the selection weighed"

    def to_json(self) -> dict[str, object]:
        return {
            "prompt": self.prompt,
            "searched": self.searched,
            "reason": self.reason or None,
            "memories": self.memories,
            "background": background_summary(self.background),
            "decision": None if self.decision is None else self.decision.to_json(),
            "best_reached_by": self.best_reached_by(),
            "threshold": self.threshold,
            "pointer_threshold": self.pointer_threshold,
            "max_pointers": self.max_pointers,
            "pointer_ranks": self.pointer_ranks,
            "pointer_gap": self.pointer_gap,
            "asks_of_repository": self.asks,
            "full_tokens": self.full_tokens,
            "injected": list(self.injected),
            "pointers": list(self.pointers),
            "degraded": self.degraded,
            "learning": None if self.learning is None else dict(self.learning),
            "candidates": [
                {
                    "id": hit.id,
                    "subject": hit.subject,
                    "repo": hit.repo,
                    "applies_to": hit.applies_to,
                    "score": round(hit.score, 4),
                    "relevance": round(relevance_of(hit), 4),
                    "injected": hit.id in self.injected,
                    "tier": self.tier(hit.id),
                    "tier_reason": self.tier_reason(rank, hit),
                    "signals": None if hit.signals is None else hit.signals.to_json(),
                    "track": (self.tracks or {}).get(hit.id),
                }
                for rank, hit in enumerate(self.hits)
            ],
            "context": self.shown_text,
        }

    def to_text(self) -> str:
        return explanation_text(self.to_json())


def explanation_text(data: Mapping[str, Any]) -> str:
    """An explanation's JSON (`Explanation.to_json`, maybe from the daemon) for a person."""
    lines = [f"prompt: {one_line(str(data.get('prompt', '')))[:200]}"]
    if not data.get("searched"):
        lines.append(f"not searched: {data.get('reason')}")
        lines.append("result: nothing shown")
        return "\n".join(lines)
    lines.append(f"store: {data.get('memories')} memories · " + _background_line(data))
    decision = data.get("decision")
    if isinstance(decision, Mapping):
        lines += _decision_lines(decision, data.get("best_reached_by"), data.get("background"))
    full, pointed = len(data.get("injected") or ()), len(data.get("pointers") or ())
    shown = [f"{full} in full"] if full else []
    shown += [f"{pointed} as pointer{'s' if pointed != 1 else ''}"] if pointed else []
    asks = data.get("asks_of_repository", True)
    lines.append(
        f"tiers: full text at score >= {data.get('threshold', 0):.2f} ({_full_room(data)}); "
        + (
            f"pointers by rank: the best not in full, then within {_num(data.get('pointer_gap'))}"
            f" logits of it (at most {data.get('max_pointers')})"
            if asks
            else "no pointers by rank: the prompt asks nothing of this repository"
        )
    )
    learning = data.get("learning")
    if isinstance(learning, Mapping):
        lines.append(_learning_line(learning))
    lines.append(f"result: {' and '.join(shown) if shown else 'nothing shown'}")
    if data.get("degraded"):
        lines.append(f"degraded: {data['degraded']}")
    candidates = [c for c in data.get("candidates") or () if isinstance(c, Mapping)]
    if candidates:
        lines.append("")
        lines.append(
            "candidates, best first — score: what the hook compares with the tiers; "
            "relevance: before the store-aware decision; meaning: cosine of the texts; "
            "words: share of the prompt's words it holds (in its subject/keywords)"
        )
    seen: set[tuple[object, object]] = set()
    for rank, candidate in enumerate(candidates, start=1):
        if (candidate.get("repo"), candidate.get("id")) in seen:
            continue  # an org hit of this repository's own memory: listed once
        seen.add((candidate.get("repo"), candidate.get("id")))
        lines.append(_candidate_line(rank, candidate))
    context = data.get("context")
    if isinstance(context, str) and context:
        lines += ["", "what the hook injects:", context]
    return "\n".join(lines)


def _learning_line(learning: Mapping[str, Any]) -> str:
    """The cut-offs this repository's sessions taught, from what (docs/hooks.md)."""
    got = learning.get("calibration")
    if not isinstance(got, Mapping):
        cut = "cut-offs as configured ([learning] calibrate = false)"
    else:
        cut = (
            f"cut-offs full {_num(learning.get('configured_min_score'))} -> "
            f"{_num(got.get('min_score'))}, pointer "
            f"{_num(learning.get('configured_pointer_min_score'))} -> "
            f"{_num(got.get('pointer_min_score'))} (pointers: {got.get('pointer_sessions')} "
            f"shown, {_num(got.get('follow_rate'))} followed; full text: "
            f"{got.get('full_sessions')} judged, {_num(got.get('relied_rate'))} relied on)"
        )
    order = "on" if learning.get("track_record") else "off"
    return (
        f"learned from {learning.get('outcomes', 0)} session outcomes: {cut}; track record {order}"
    )


def _num(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, int | float) else "-"


def _track_text(track: object) -> str:
    if not isinstance(track, Mapping):
        return ""
    counts = " ".join(
        f"{name} {track.get(name)}"
        for name in ("relied", "followed", "ignored", "disputed")
        if track.get(name)
    )
    return f" · track: {counts or 'none'} (order x{_num(track.get('factor'))})"


def _full_room(data: Mapping[str, Any]) -> str:
    room = data.get("full_tokens")
    return f"up to ~{room} tokens of it" if room else "as many as fit"


def _candidate_line(rank: int, candidate: Mapping[str, Any]) -> str:
    signals = candidate.get("signals")
    s = signals if isinstance(signals, Mapping) else {}
    cosine = s.get("cosine")
    meaning = "-" if not isinstance(cosine, int | float) else f"{cosine:.2f}"
    repo = candidate.get("repo")
    where = f"[{one_line(str(repo))}] " if repo else ""
    subject = one_line(str(candidate.get("subject", "")))[:SUBJECT_CHARS]
    return (
        f"{rank:2d}. {candidate.get('tier', 'none'):7s} score {candidate.get('score', 0):.2f} · "
        f"relevance {candidate.get('relevance', 0):.2f} · meaning {meaning} · words "
        f"{s.get('coverage') or 0:.0%} ({s.get('head_coverage') or 0:.0%}) · "
        f"{one_line(str(candidate.get('id', '')))[:8]} {where}{subject} — "
        f"{candidate.get('tier_reason', '')}{_track_text(candidate.get('track'))}"
    )


def _decision_lines(
    decision: Mapping[str, Any], reached_by: object, background: object
) -> list[str]:
    intent = decision.get("intent") or {}
    runner_up = decision.get("runner_up") or 0.0
    margin = decision.get("margin") or 0.0
    runner = "no runner-up" if runner_up <= 0 else f"runner-up {runner_up:.2f} ({_gap(margin)})"
    probes = background.get("probes") if isinstance(background, Mapping) else None
    if decision.get("tail") is None or not isinstance(reached_by, int):
        reach = "no background yet: relevance decides alone"
    else:
        reach = f"{reached_by} of {probes} prompts no memory answers match something this well"
    return [
        f"the prompt: names code {_yes(intent.get('names_code', 0))} · an instruction "
        f"{_yes(intent.get('instruction', 0))} · points at the conversation "
        f"{_yes(intent.get('deictic', 0))} · generic instruction words "
        f"{intent.get('generic', 0):.0%}",
        f"best match: relevance {decision.get('relevance', 0):.2f}, {runner} · {reach} → "
        f"chance it answers the prompt (the best hit's score): "
        f"{decision.get('probability', 0):.2f}",
    ]


def _gap(margin: float) -> str:
    if margin >= MARGIN_CAP:
        return "far behind"
    return "close behind" if margin < 1.0 else "well behind"


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


def _background_line(data: Mapping[str, Any]) -> str:
    summary = data.get("background")
    if not isinstance(summary, Mapping):
        return "no background yet (run `local-recall index`)"
    return (
        f"background: {summary.get('probes')} prompts no memory answers find a best match of "
        f"relevance {summary.get('median', 0):.2f} (median), {summary.get('p90', 0):.2f} (90th "
        f"percentile), {summary.get('max', 0):.2f} (highest) in this store"
    )


def _quantile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))]


def _yes(value: float) -> str:
    return "yes" if value >= 0.5 else "no"
