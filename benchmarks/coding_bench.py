"""The prompt hook's decision in real coding repositories, at ~25, ~500 and ~5,000 memories.

    .venv/bin/python benchmarks/coding_bench.py [--repos DIR] [--sizes 25,500,5000]
        [--projects pip,celery] [--split tune|held-out|all] [--style commit|user|both]
        [--workdir DIR] [--json OUT]
        [--hook SIZE[,SIZE]] [--hook-paths daemon,fallback] [--misses N] [--check SIZE]

Data (benchmarks/coding/, committed): per project, memories written by hand the way the
extractor writes them, from the project's real history (docs, changelog, commits); prompts a
developer would type there with the memory that answers each; in-domain prompts with no answer
(checked by hand against the store); and generic prompts (coding/generic.toml) that no memory
answers. Projects and generic prompts are split: `tune` may be looked at while developing the
decision, `held-out` is only measured, and reported apart. Two prompt styles (`--style`,
default commit): `commit`, written from the projects' commit subjects, and `user`
(coding/user/*.toml, generic.toml's `user`), written the way people report a problem or ask,
never in the memory's words; the user style is held out for every project and reported under
`user-held-out/SIZE`.

Stores: the hand-written memories (~25), then that project's own history (commits and changelog
entries turned into memories by coding_history.py, newest first) up to ~500 and ~5,000. The
history is read from a `git clone` of each project at the commit its data file pins, in
`--repos DIR` or $CODING_BENCH_REPOS (`DIR/pip`, `DIR/celery`, ...). Without a clone the
padded sizes are skipped and the run says so; the ~25 size needs nothing but this checkout.

Decision: what the prompt hook injects, through the hook's own code — the chit-chat filter
(`query_intent.has_nothing_to_look_up`), the search the daemon runs (`Recall.query`, the hook's
limit and `prompt_min_score`), and `hook_context.prompt_context` within the hook's budget.
`--hook SIZES` also runs the real `local-recall hook user-prompt-submit` process (daemon and/or
no-daemon paths) on those sizes and reports its agreement with the in-process decision.

Reported per split and size: R@5 and MRR@10 of the search (the answer among the 10 best, no
threshold), hit (the right memory injected in full), hit when search ranks it first, injection
on generic and on in-domain no-answer prompts, tokens per injected prompt (characters / 4).
`--misses N` lists up to N misses and false injections per split and size with the decision's
inputs (`local-recall why`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import coding_data  # noqa: E402
from coding_data import Item, ProjectData, Prompt  # noqa: E402

from local_recall.context.hook_answers import choose  # noqa: E402
from local_recall.context.hook_settings import HookSettings, load_hook_settings  # noqa: E402
from local_recall.context.notes import CHARS_PER_TOKEN  # noqa: E402
from local_recall.context.prompt import prompt_query, render_selection  # noqa: E402
from local_recall.context.service import hit_note  # noqa: E402
from local_recall.learning.learned import static  # noqa: E402
from local_recall.recall import Recall  # noqa: E402
from local_recall.search.limits import MAX_LIMIT  # noqa: E402
from local_recall.search.query import SearchQuery  # noqa: E402
from local_recall.search.query_intent import has_nothing_to_look_up  # noqa: E402
from local_recall.search.scoring import score_hit  # noqa: E402

SIZES = (25, 500, 5000)


@dataclass(frozen=True, slots=True)
class Outcome:
    ranked: tuple[str, ...]  # memory ids, best first (search, no threshold, the hook's limit)
    shown: tuple[str, ...]  # injected in full
    pointers: tuple[str, ...]
    tokens: int
    seconds: float
    top: tuple[tuple[str, float], ...] = ()  # (id, score) of the search's best, no threshold
    notes: tuple[Any, ...] = ()  # the hits the hook's tiers chose from (for coding_sessions.py)
    relevances: tuple[float, ...] = ()  # the relevance (before the decision's shift) of `top`


def hook_settings(recall: Recall) -> HookSettings:
    # LOCAL_RECALL_HOOKS_* of this process: a setting tried without editing a config
    overrides = {k: v for k, v in os.environ.items() if k.startswith("LOCAL_RECALL_")}
    return load_hook_settings(recall.layout, overrides)


def decide(recall: Recall, text: str, settings: HookSettings, *, use_index: bool = True) -> Outcome:
    """What the prompt hook injects for `text`: hooks.user_prompt_submit's steps, with the
    daemon's search (`QueryService.query`: the index, sync=False) done in this process."""
    started = time.perf_counter()
    query = prompt_query(text)
    limit = min(settings.search_limit, MAX_LIMIT)
    ranked: tuple[str, ...] = ()
    top: tuple[tuple[str, float], ...] = ()
    relevances: tuple[float, ...] = ()
    shown: tuple[str, ...] = ()
    pointers: tuple[str, ...] = ()
    context = ""
    kept: list[Any] = []
    if query is not None:
        every = recall.query(
            SearchQuery(query, limit=limit, min_score=0.0, prompt=True), sync=False
        )
        ranked = tuple(hit.id for hit in every.hits)
        top = tuple((hit.id, round(hit.score, 4)) for hit in every.hits[:10])
        relevances = tuple(
            round(score_hit(hit.signals), 4) if hit.signals else 0.0 for hit in every.hits[:10]
        )
        if not has_nothing_to_look_up(query) and settings.prompt_tokens > 0:
            result = recall.query(
                SearchQuery(
                    query,
                    limit=limit,
                    min_score=settings.tiers.search_floor,
                    prompt=True,
                    at_least=min(settings.tiers.at_least, limit),
                ),
                sync=False,
                use_index=use_index,  # False: the hook's no-daemon path (files + vector cache)
            )
            found = [hit_note(hit) for hit in result.hits]  # as the daemon's ContextService
            kept = [n for n in found if settings.inject_unreviewed or not n.unreviewed]
            # the hook's own selection (context/hook_answers.choose): the same filters, tiers
            # and question of whether the prompt asks something of this repository
            selection = choose(query, found, settings, settings.tiers, static(settings.learning))
            context = render_selection(selection, budget_tokens=settings.prompt_tokens)
            if context:
                shown = tuple(n.id for n in selection.shown)
                pointers = tuple(n.id for n in selection.pointers)
    return Outcome(
        ranked,
        shown,
        pointers,
        len(context) // CHARS_PER_TOKEN,
        time.perf_counter() - started,
        top,
        tuple(kept),
        relevances,
    )


def prompts_of(project: ProjectData, style: str = "commit") -> list[Prompt]:
    found = list(coding_data.prompts_in(project, style))
    for each in coding_data.STYLES if style == "both" else (style,):
        generic = coding_data.generic_prompts(project.split, style=each)
        found += [Prompt(project.name, t, "generic", style=each) for t in generic]
    return found


def label(project: ProjectData, prompt: Prompt) -> str:
    """The split a prompt is reported under: `tune` / `held-out` for the commit style,
    `user-held-out` for the user style (held out for every project)."""
    split = coding_data.prompt_split(project, prompt)
    return split if prompt.style == "commit" else f"{prompt.style}-{split}"


def metrics(rows: Sequence[tuple[Prompt, Outcome, frozenset[str]]]) -> dict[str, Any]:
    """rows: (prompt, outcome, the memory ids that answer it)."""
    pos = [(p, o, a) for p, o, a in rows if p.kind == "positive"]
    ranks = [next((i for i, m in enumerate(o.ranked) if m in a), None) for _, o, a in pos]
    hits = [bool(set(o.shown) & a) for _, o, a in pos]
    first = [h for h, r in zip(hits, ranks, strict=True) if r == 0]
    injected = [o for _, o, _ in rows if o.shown or o.pointers]

    def share(kind: str) -> float | None:
        got = [bool(o.shown or o.pointers) for p, o, _ in rows if p.kind == kind]
        return round(sum(got) / len(got), 3) if got else None

    tokens = [o.tokens for o in injected]
    reach = [bool(set(o.shown) & a or set(o.pointers) & a) for _, o, a in pos]

    def full(kind: str) -> float | None:
        got = [bool(o.shown) for p, o, _ in rows if p.kind == kind]
        return round(sum(got) / len(got), 3) if got else None

    def spent(kinds: tuple[str, ...]) -> dict[str, float]:
        got = sorted(o.tokens for p, o, _ in rows if p.kind in kinds)
        if not got:
            return {"mean": 0.0, "p95": 0.0}
        return {
            "mean": round(statistics.fmean(got), 1),
            "p95": got[min(len(got) - 1, round(0.95 * (len(got) - 1)))],
        }

    return {
        "positives": len(pos),
        "negatives": sum(p.kind == "negative" for p, _, _ in rows),
        "generic": sum(p.kind == "generic" for p, _, _ in rows),
        "R@1": round(sum(r == 0 for r in ranks) / max(1, len(pos)), 3),
        "R@3": round(sum(r is not None and r < 3 for r in ranks) / max(1, len(pos)), 3),
        "R@5": round(sum(r is not None and r < 5 for r in ranks) / max(1, len(pos)), 3),
        "MRR@10": round(sum(1 / (r + 1) for r in ranks if r is not None) / max(1, len(pos)), 3),
        "hit": round(sum(hits) / max(1, len(pos)), 3),
        "reach": round(sum(reach) / max(1, len(pos)), 3),
        "false_full_generic": full("generic"),
        "false_full_in_domain": full("negative"),
        "tokens_answered": spent(("positive",)),
        "tokens_no_answer": spent(("negative", "generic")),
        "hit_when_first": round(sum(first) / max(1, len(first)), 3),
        "ranked_first": len(first),
        "injected_positive": round(sum(bool(o.shown) for _, o, _ in pos) / max(1, len(pos)), 3),
        "false_generic": share("generic"),
        "false_in_domain": share("negative"),
        "tokens_mean": round(statistics.fmean(tokens), 1) if tokens else 0,
        "tokens_p95": sorted(tokens)[min(len(tokens) - 1, round(0.95 * (len(tokens) - 1)))]
        if tokens
        else 0,
        "search_ms_p50": round(1000 * statistics.median(o.seconds for _, o, _ in rows), 1)
        if rows
        else 0,
    }


def misses(
    rows: Sequence[tuple[Prompt, Outcome, frozenset[str]]], recall_of: dict[str, Recall], limit: int
) -> list[dict[str, Any]]:
    """The misses and false injections, each with the decision's inputs (`why`)."""
    from local_recall.cli.why import explain_prompt

    out = []
    for prompt, outcome, answers in rows:
        wrong = (prompt.kind == "positive" and not set(outcome.shown) & answers) or (
            prompt.kind != "positive" and (outcome.shown or outcome.pointers)
        )
        if not wrong or len(out) >= limit:
            continue
        recall = recall_of[prompt.project]
        out.append(
            {
                "project": prompt.project,
                "kind": prompt.kind,
                "prompt": prompt.text,
                "answer_rank": next(
                    (i + 1 for i, m in enumerate(outcome.ranked) if m in answers), None
                ),
                "why": explain_prompt(recall, prompt.text).to_text(),
            }
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    repos = os.environ.get("CODING_BENCH_REPOS")
    parser.add_argument("--repos", type=Path, default=Path(repos) if repos else None)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--projects", default="")
    parser.add_argument("--split", default="all", choices=("tune", "held-out", "all"))
    parser.add_argument("--style", default="commit", choices=(*coding_data.STYLES, "both"))
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/local-recall-coding-bench"))
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--hook", default="", help="sizes to also run the real hook process on")
    parser.add_argument("--hook-paths", default="daemon")
    parser.add_argument("--misses", type=int, default=0)
    parser.add_argument(
        "--fallback",
        action="store_true",
        help="also decide through the hook's no-daemon path (in process) and report agreement",
    )
    parser.add_argument(
        "--check",
        type=int,
        default=0,
        help="print the 3 best hits of every "
        "no-answer prompt and of positives whose answer is not first, at this size",
    )
    args = parser.parse_args(argv)
    workdir: Path = args.workdir.absolute()
    wanted = [n for n in args.projects.split(",") if n]
    projects = [
        p for p in coding_data.load_projects(wanted) if chosen_prompts(p, args.style, args.split)
    ]
    sizes = [int(s) for s in args.sizes.split(",") if s]
    hook_sizes = {int(s) for s in args.hook.split(",") if s}
    embedder = coding_data.CachingEmbedder(workdir / "embeddings.npz")
    results: dict[str, Any] = {"style": args.style, "sizes": {}, "absent": {}, "stores": {}}
    rows: dict[tuple[str, int], list[tuple[Prompt, Outcome, frozenset[str]]]] = {}
    hook_rows: dict[tuple[str, int, str], list[tuple[Prompt, Any, Any]]] = {}
    recalls: dict[tuple[str, int], dict[str, Recall]] = {}
    hook_settings_of: dict[tuple[str, int], HookSettings] = {}
    for project in projects:
        padding = coding_data.project_padding(project, args.repos, workdir / "history")
        if padding is None:
            results["absent"][project.name] = coding_data.clone_status(project, args.repos)
            print(
                f"{project.name}: history absent, padded sizes skipped — "
                f"{results['absent'][project.name]}",
                flush=True,
            )
        for size in sizes:
            if size > len(project.memories) and padding is None:
                continue
            chosen = chosen_prompts(project, args.style, args.split)
            recall, got = run_store(
                project, padding, size, workdir, embedder, results, chosen, args.fallback
            )
            for row in got:
                rows.setdefault((label(project, row[0]), size), []).append(row)
            for key in {(label(project, row[0]), size) for row in got}:
                recalls.setdefault(key, {})[project.name] = recall
                hook_settings_of[key] = hook_settings(recall)
            if size in hook_sizes:
                run_hook(project, recall, got, size, args.hook_paths.split(","), hook_rows)
            if args.check == size:
                check(project, recall, got)
    results["prompts"] = {
        f"{split}/{size}": [
            {
                "project": p.project,
                "kind": p.kind,
                "style": p.style,
                "text": p.text,
                "answer_rank": next((i + 1 for i, m in enumerate(o.ranked) if m in a), None),
                "hit": bool(set(o.shown) & a),
                "reach": bool(set(o.shown) & a or set(o.pointers) & a),
                "injected": len(o.shown) + len(o.pointers),
                "tokens": o.tokens,
                "top": [[int(m in a), score] for m, score in o.top],
                "relevance": list(o.relevances),
            }
            for p, o, a in got
        ]
        for (split, size), got in sorted(rows.items())
    }
    import coding_sessions

    for (split, size), got in sorted(rows.items()):
        entry = metrics(got)
        entry["sessions"] = coding_sessions.measure(got, hook_settings_of[(split, size)])
        if args.misses:
            entry["misses"] = misses(got, recalls[(split, size)], args.misses)
        results["sizes"][f"{split}/{size}"] = entry
    for (split, size, path), got in sorted(hook_rows.items()):
        import coding_hook

        results["sizes"][f"{split}/{size}"][f"hook_{path}"] = coding_hook.summary(got)
    print(json.dumps({k: v for k, v in results.items() if k != "prompts"}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


def chosen_prompts(project: ProjectData, style: str, split: str) -> list[Prompt]:
    """The project's prompts of `style` reported under `split` ("all": every one)."""
    return [
        p
        for p in prompts_of(project, style)
        if split in ("all", coding_data.prompt_split(project, p))
    ]


def run_hook(
    project: ProjectData,
    recall: Recall,
    got: Sequence[tuple[Prompt, Outcome, frozenset[str]]],
    size: int,
    paths: Sequence[str],
    hook_rows: dict[tuple[str, int, str], list[tuple[Prompt, Any, Any]]],
) -> None:
    """The same prompts through the real hook process, on each path."""
    import coding_hook

    for path in paths:
        decided = coding_hook.run_prompts(recall.root, [row[0].text for row in got], path)
        for row, d in zip(got, decided, strict=True):
            hook_rows.setdefault((label(project, row[0]), size, path), []).append((row[0], d, row))


def run_store(
    project: ProjectData,
    padding: Sequence[Any] | None,
    size: int,
    workdir: Path,
    embedder: coding_data.CachingEmbedder,
    results: dict[str, Any],
    prompts: Sequence[Prompt] | None = None,
    fallback: bool = False,
) -> tuple[Recall, list[tuple[Prompt, Outcome, frozenset[str]]]]:
    """Build (or reuse) the project's store of `size` memories and decide every prompt."""
    items = coding_data.store_items(project, padding, size)
    root = workdir / "stores" / f"{project.name}-{size}"
    started = time.perf_counter()
    recall, ids = coding_data.build_store(root, project.name, items, embedder)
    embedder.save()
    results["stores"][f"{project.name}-{size}"] = {
        "memories": len(items),
        "build_s": round(time.perf_counter() - started, 1),
    }
    print(f"{project.name}-{size}: {len(items)} memories", flush=True)
    settings = hook_settings(recall)
    got = []
    for prompt in prompts_of(project) if prompts is None else prompts:
        answers = frozenset(ids[a] for a in prompt.answers if a in ids)
        if prompt.kind == "positive" and not answers:
            continue  # its answer is a history item beyond this size
        outcome = decide(recall, prompt.text, settings)
        got.append((prompt, outcome, answers))
        if fallback:  # the hook's no-daemon path, in this process: the same decision?
            other = decide(recall, prompt.text, settings, use_index=False)
            same = bool(outcome.shown or outcome.pointers) == bool(other.shown or other.pointers)
            agree = results.setdefault("fallback_agreement", {}).setdefault(
                f"{label(project, prompt)}/{size}", [0, 0, 0]
            )
            agree[0] += same
            agree[1] += set(outcome.shown) == set(other.shown)
            agree[2] += 1
    _ITEMS[recall.root] = {ids[i.key]: i for i in items}
    return recall, got


_ITEMS: dict[Path, dict[str, Item]] = {}  # store → memory id → item, for `check`


def check(
    project: ProjectData, recall: Recall, rows: Sequence[tuple[Prompt, Outcome, frozenset[str]]]
) -> None:
    """For labelling by hand: what a no-answer prompt finds, and what outranks an answer."""
    by_id = _ITEMS[recall.root]
    for prompt, outcome, answers in rows:
        if prompt.kind == "generic":
            continue
        if prompt.kind == "positive" and outcome.ranked[:1] and outcome.ranked[0] in answers:
            continue
        print(f"\n[{prompt.kind}] {prompt.text}")
        for memory in outcome.ranked[:3]:
            item = by_id[memory]
            mark = "*" if memory in answers else " "
            print(f"  {mark} {item.key}: {item.subject[:100]}")
            print(f"      {' '.join(item.body.split())[:220]}")


if __name__ == "__main__":
    raise SystemExit(main())
