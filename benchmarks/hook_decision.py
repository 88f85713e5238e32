"""The prompt hook's decision, measured with the real hook process on LoCoMo dev stores.

    .venv/bin/python benchmarks/hook_decision.py [--data DIR] [--workdir DIR] [--json OUT]
        [--conversations conv-42,conv-43] [--positives 24] [--foreign 20] [--generic 10]

DIR holds LoCoMo conversations as `conv-*.json` (default: $LOCOMO_DATA, else
benchmarks/data/locomo-dev/, which `python benchmarks/locomo_data.py` fills). Each conversation's
observations become one memory store (as in locomo.py), indexed once. Prompts per store:
`--positives` of its own questions (the answer is in the store), and negatives with nothing to
find: `--foreign` questions of the next conversation (other people) and `--generic` everyday
coding prompts (generic_prompts.EVAL). Each prompt is fed, as Claude Code does, as JSON on the
stdin of a new `local-recall hook user-prompt-submit` process — once with the repository's
daemon running (the normal case) and once with no daemon (the in-process fallback).

Figures: evidence injected (positives whose injected context shows a memory carrying one of the
question's evidence dia_ids in full), something injected on negatives, tokens injected per prompt
(characters / 4; mean and p95), and agreement (same inject / skip decision on both paths).
The library measured is the one in this script's tree (PYTHONPATH is set to it).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(PROJECT))

import generic_prompts  # noqa: E402
import locomo  # noqa: E402
from harness import SCRIPT, daemon, fallbacks, hook_env, percentile, wait_until_ready  # noqa: E402
from locomo_data import data_dir  # noqa: E402

CHARS_PER_TOKEN = 4
_SHOWN = re.compile(r"^id ([0-9a-f-]{36}) ·", re.MULTILINE)
# a short id: the shortest unique prefix, 8 hex digits or more (a prefix)
_POINTER = re.compile(r"^- ([0-9a-f]{8,32}|[0-9a-f-]{36}) ", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Prompt:
    store: str
    text: str
    kind: str  # "positive", "foreign" or "generic"
    evidence: frozenset[str]


@dataclass(frozen=True, slots=True)
class Decision:
    injected: bool
    shown: tuple[str, ...]  # memory ids injected in full
    pointers: tuple[str, ...]
    tokens: int
    seconds: float


def prompts_for(
    conversations: dict[str, dict[str, Any]], positives: int, foreign: int, generic: int, seed: int
) -> list[Prompt]:
    rng = random.Random(seed)
    names = sorted(conversations)
    chosen: list[Prompt] = []
    for i, name in enumerate(names):
        own = locomo.questions(conversations[name])
        for q in rng.sample(own, min(positives, len(own))):
            chosen.append(Prompt(name, q.text, "positive", q.evidence))
        other = locomo.questions(conversations[names[(i + 1) % len(names)]])
        if len(names) > 1:
            for q in rng.sample(other, min(foreign, len(other))):
                chosen.append(Prompt(name, q.text, "foreign", frozenset()))
        for text in rng.sample(generic_prompts.EVAL, min(generic, len(generic_prompts.EVAL))):
            chosen.append(Prompt(name, text, "generic", frozenset()))
    return chosen


def build_store(root: Path, conv: dict[str, Any]) -> dict[str, frozenset[str]]:
    """The conversation's observations as memory files in a git repository, indexed."""
    from local_recall.search.embedders import MiniLMEmbedder

    items = locomo.corpus(conv, "obs")
    fresh = not (root / "local-recall").is_dir()
    root.mkdir(parents=True, exist_ok=True)
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    recall = locomo.open_store(root, MiniLMEmbedder())
    labels = locomo.load(recall, items) if fresh else locomo._labels(recall, items)
    recall.sync_index()
    return labels


def run_hook(repo: Path, prompt: str, env: dict[str, str]) -> Decision:
    payload = {  # every prompt its own session: none was shown anything before
        "session_id": f"hook-decision-{uuid.uuid4()}",
        "cwd": str(repo),
        "prompt": prompt,
        "hook_event_name": "UserPromptSubmit",
    }
    started = time.perf_counter()
    done = subprocess.run(
        [str(SCRIPT), "hook", "user-prompt-submit"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        cwd=repo,
        check=False,
        timeout=60,
    )
    return decision(done.stdout.decode("utf-8"), time.perf_counter() - started)


def decision(output: str, seconds: float) -> Decision:
    context = ""
    if output.strip():
        context = json.loads(output)["hookSpecificOutput"]["additionalContext"]
    return Decision(
        injected=bool(context),
        shown=tuple(_SHOWN.findall(context)),
        pointers=tuple(_POINTER.findall(context)),
        tokens=len(context) // CHARS_PER_TOKEN,
        seconds=seconds,
    )


def run_mcp(repo: Path, texts: Sequence[str], env: dict[str, str]) -> list[Decision]:
    """The same prompts through the MCP server's prompt hook (`user_prompt_submit`, what
    Claude Code's `mcp_tool` handler calls once the server is connected): one server for them
    all, as in a session."""
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=str(SCRIPT), args=["mcp"], env={**env, "LOCAL_RECALL_ROOT": str(repo)}, cwd=repo
    )
    found: list[Decision] = []

    async def session() -> None:
        async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
            for i, text in enumerate(texts):
                started = time.perf_counter()
                result = await client.call_tool(
                    "user_prompt_submit", {"prompt": text, "prompt_id": f"hook-decision-{i}"}
                )
                output = result.content[0].text if result.content else ""  # type: ignore[union-attr]
                found.append(decision(output, time.perf_counter() - started))

    anyio.run(session)
    return found


def search_ranks(
    workdir: Path, prompts: Sequence[Prompt], labels: dict[str, dict[str, frozenset[str]]]
) -> list[int | None]:
    """Each positive's rank (from 0) of the first memory carrying its evidence in the search's
    own order (as a prompt is searched, no threshold); None: not among the 10 best."""
    from local_recall.search.embedders import MiniLMEmbedder
    from local_recall.search.query import SearchQuery

    ranks: list[int | None] = []
    opened: dict[str, Any] = {}
    for prompt in prompts:
        if prompt.kind != "positive":
            ranks.append(None)
            continue
        if prompt.store not in opened:
            opened[prompt.store] = locomo.open_store(workdir / prompt.store, MiniLMEmbedder())
        found = opened[prompt.store].query(
            SearchQuery(prompt.text, limit=10, min_score=0.0, prompt=True), sync=False
        )
        hits = [h.id for h in found.hits]
        store = labels[prompt.store]
        ranks.append(
            next(
                (i for i, m in enumerate(hits) if store.get(m, frozenset()) & prompt.evidence), None
            )
        )
    return ranks


def summarise(
    prompts: Sequence[Prompt],
    decisions: dict[str, list[Decision]],
    labels: dict[str, dict[str, frozenset[str]]],
    ranks: Sequence[int | None] = (),
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    positive = [r for p, r in zip(prompts, ranks, strict=False) if p.kind == "positive"]
    if positive:
        out["search_R@1"] = sum(r == 0 for r in positive) / len(positive)
        out["search_R@3"] = sum(r is not None and r < 3 for r in positive) / len(positive)
    for path, got in decisions.items():
        pos = [(p, d) for p, d in zip(prompts, got, strict=True) if p.kind == "positive"]
        neg = [(p, d) for p, d in zip(prompts, got, strict=True) if p.kind != "positive"]
        hit = [any(labels[p.store][m] & p.evidence for m in d.shown) for p, d in pos]
        reach = [
            hit_ or any(_evidence(labels[p.store], m) & p.evidence for m in d.pointers)
            for (p, d), hit_ in zip(pos, hit, strict=True)
        ]
        out[path] = {
            "evidence_injected": sum(hit) / max(1, len(pos)),
            "evidence_reached": sum(reach) / max(1, len(pos)),
            "negatives_full_text": sum(bool(d.shown) for _, d in neg) / max(1, len(neg)),
            "positives_injected": sum(d.injected for _, d in pos) / max(1, len(pos)),
            "negatives_injected": sum(d.injected for _, d in neg) / max(1, len(neg)),
            "foreign_injected": _share([d for p, d in neg if p.kind == "foreign"]),
            "generic_injected": _share([d for p, d in neg if p.kind == "generic"]),
            "tokens_positive_mean": statistics.fmean(d.tokens for _, d in pos) if pos else 0,
            "tokens_positive_p95": percentile([d.tokens for _, d in pos], 0.95),
            "tokens_negative_mean": statistics.fmean(d.tokens for _, d in neg) if neg else 0,
            "tokens_negative_p95": percentile([d.tokens for _, d in neg], 0.95),
            "seconds_p50": statistics.median(d.seconds for d in got),
        }
    if len(decisions) == 2:
        a, b = decisions.values()
        out["agreement"] = _agreement(a, b)
    if "fallback" in decisions:  # every warm path against the cold one
        for path, got in decisions.items():
            if path != "fallback":
                out[f"agreement_{path}_vs_fallback"] = _agreement(got, decisions["fallback"])
                out[f"same_memories_{path}_vs_fallback"] = sum(
                    x.shown == y.shown for x, y in zip(got, decisions["fallback"], strict=True)
                ) / max(1, len(got))
    out["positives"] = sum(p.kind == "positive" for p in prompts)
    out["negatives"] = sum(p.kind != "positive" for p in prompts)
    return out


def _evidence(labels: dict[str, frozenset[str]], prefix: str) -> frozenset[str]:
    """The evidence of the memory a pointer's short id names (a unique prefix)."""
    wanted = prefix.replace("-", "")
    return frozenset().union(
        *(ev for m, ev in labels.items() if m.replace("-", "").startswith(wanted))
    )


def _agreement(a: Sequence[Decision], b: Sequence[Decision]) -> float:
    return sum(x.injected == y.injected for x, y in zip(a, b, strict=True)) / max(1, len(a))


def _share(got: Sequence[Decision]) -> float:
    return sum(d.injected for d in got) / max(1, len(got))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="folder of LoCoMo conv-*.json files (default: $LOCOMO_DATA, else "
        "benchmarks/data/locomo-dev/ from `python benchmarks/locomo_data.py`)",
    )
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/local-recall-hook-decision"))
    parser.add_argument("--conversations", default="", help="e.g. conv-42,conv-43 (default: all)")
    parser.add_argument("--positives", type=int, default=24)
    parser.add_argument("--foreign", type=int, default=20)
    parser.add_argument("--generic", type=int, default=10)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument(
        "--paths",
        default="daemon,fallback",
        help="daemon (the command, warm), fallback (the command, no daemon), mcp (the MCP "
        "server's prompt hook, daemon warm)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="LOCAL_RECALL_X=V",
        help="a config override for the hook and the daemon, e.g. "
        "LOCAL_RECALL_HOOKS_PROMPT_MIN_SCORE=0.5 (repeatable)",
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    overrides = dict(item.split("=", 1) for item in args.set)
    args.data = data_dir(args.data)
    wanted = {c for c in args.conversations.split(",") if c}
    conversations = {
        path.stem: json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(args.data.glob("conv-*.json"))
        if not wanted or path.stem in wanted
    }
    prompts = prompts_for(conversations, args.positives, args.foreign, args.generic, args.seed)
    workdir: Path = args.workdir.absolute()
    labels: dict[str, dict[str, frozenset[str]]] = {}
    for name, conv in conversations.items():
        print(f"store {name} ...", flush=True)
        labels[name] = build_store(workdir / name, conv)
    ranks = search_ranks(workdir, prompts, labels)
    decisions: dict[str, list[Decision]] = {}
    notes: dict[str, int] = {}
    for path in args.paths.split(","):
        got: dict[int, Decision] = {}
        for name in conversations:
            repo = workdir / name
            env = hook_env(repo, PYTHONPATH=str(PROJECT), **overrides)
            daemon(repo, env, "stop")
            if path in ("daemon", "mcp"):
                daemon(repo, env, "start")
                wait_until_ready(repo)
            else:
                env = hook_env(
                    repo,
                    PYTHONPATH=str(PROJECT),
                    **overrides,
                    LOCAL_RECALL_HOOKS_START_DAEMON="false",
                )
            before = fallbacks(repo)
            mine = [i for i, prompt in enumerate(prompts) if prompt.store == name]
            if path == "mcp":
                answers = run_mcp(repo, [prompts[i].text for i in mine], env)
                got.update(zip(mine, answers, strict=True))
            else:
                got.update((i, run_hook(repo, prompts[i].text, env)) for i in mine)
            notes[f"{path}/{name}/in-process"] = fallbacks(repo) - before
            if path in ("daemon", "mcp"):
                daemon(repo, env, "stop")
        decisions[path] = [got[i] for i in range(len(prompts))]
        print(f"  {path}: done", flush=True)
    results = summarise(prompts, decisions, labels, ranks)
    results["in_process_searches"] = notes
    results["conversations"] = sorted(conversations)
    results["overrides"] = overrides
    print(json.dumps({k: v for k, v in results.items() if k != "in_process_searches"}, indent=1))
    if args.json:
        detail = [
            {
                **asdict(p),
                "evidence": sorted(p.evidence),
                **{k: asdict(v[i]) for k, v in decisions.items()},
            }
            for i, p in enumerate(prompts)
        ]
        args.json.write_text(json.dumps({"summary": results, "prompts": detail}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
