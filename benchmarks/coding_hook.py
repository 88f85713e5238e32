"""The coding benchmark through the real hook process (`local-recall hook user-prompt-submit`),
as Claude Code runs it: one new process per prompt, JSON on stdin, the repository's daemon
running (path "daemon") or not (path "fallback": the hook's in-process search)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import hook_decision


def run_prompts(repo: Path, texts: Sequence[str], path: str) -> list[hook_decision.Decision]:
    env = hook_decision.clean_env(repo)
    hook_decision.daemon(repo, env, "stop")
    if path == "daemon":
        hook_decision.daemon(repo, env, "start")
        hook_decision.wait_until_ready(repo)
    else:
        env = hook_decision.clean_env(repo, LOCAL_RECALL_HOOKS_START_DAEMON="false")
    try:
        return [hook_decision.run_hook(repo, text, env) for text in texts]
    finally:
        if path == "daemon":
            hook_decision.daemon(repo, env, "stop")


def summary(rows: Sequence[tuple[Any, hook_decision.Decision, Any]]) -> dict[str, Any]:
    """rows: (prompt, the hook process's decision, (prompt, in-process outcome, answers))."""
    pos = [(d, r) for p, d, r in rows if p.kind == "positive"]
    agree = [bool(d.injected) == bool(r[1].shown or r[1].pointers) for _, d, r in rows]
    same = [set(d.shown) == set(r[1].shown) for _, d, r in rows]

    def share(kind: str) -> float:
        got = [d.injected for p, d, _ in rows if p.kind == kind]
        return round(sum(got) / max(1, len(got)), 3)

    tokens = [d.tokens for _, d, _ in rows if d.injected]
    return {
        "hit": round(sum(bool(set(d.shown) & r[2]) for d, r in pos) / max(1, len(pos)), 3),
        "false_generic": share("generic"),
        "false_in_domain": share("negative"),
        "tokens_mean": round(statistics.fmean(tokens), 1) if tokens else 0,
        "agreement_with_in_process": round(sum(agree) / max(1, len(agree)), 3),
        "same_memories_shown": round(sum(same) / max(1, len(same)), 3),
        "seconds_p50": round(statistics.median(d.seconds for _, d, _ in rows), 3),
    }
