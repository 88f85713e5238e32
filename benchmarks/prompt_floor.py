"""Where a prompt's time goes below what local-recall can cut (benchmarks/README.md,
"Where the floor is").

    .venv/bin/python benchmarks/prompt_floor.py answer [--repo DIR] [--prompts 120] [--pause 0.3]
    .venv/bin/python benchmarks/prompt_floor.py embed [--prompts 300] [--pause 0.02]
    .venv/bin/python benchmarks/prompt_floor.py command --launcher VENV/bin/local-recall \
        [--repo DIR] [--rounds 20]

`answer`: the warm prompt answer as the MCP server gives it (context/hook_answers.py over a
kept ContextService, the keyword index kept), in this process, one new prompt every `--pause`
seconds (a person's prompts come seconds apart: caches and thread pools go cold between them),
with the wall time of its parts (the query's embedding, the exact vector product, the relevance
of the candidates, ...), each summed over its calls and divided by the prompts.

`embed`: the MiniLM query alone under onnxruntime session options, each in a process of its
own (an idle session's spinning threads would charge their CPU to the others): 1 or 2
intra-op threads, thread spinning off (shipped) or on, and on with `force_spinning_stop`.
The pause between queries decides whether spinning threads are still spinning when the next
one comes; the idle CPU after the last query shows what the spinning costs.

`command`: a command hook's process (the first prompt of `claude -p`; every prompt of an agent
without our MCP server) against the floor of any Python process: `python -c pass`, with `-I -S`
(no site), and with the stdlib modules a JSON-over-socket client needs. The repository's daemon
must be running (`local-recall daemon start` in it; prompt_latency.py prepares the repository).

Prompts are made up from a word list, each one new (no cached query vector). `--repo`: the
repository prompt_latency.py builds, /tmp/local-recall-bench-prompt-5000 by default.
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's local_recall, whatever PYTHONPATH says

DEFAULT_REPO = Path("/tmp/local-recall-bench-prompt-5000")
WORDS = [
    "retry",
    "export",
    "cache",
    "parser",
    "websocket",
    "tls",
    "queue",
    "backoff",
    "lint",
    "schema",
    "migration",
    "auth",
    "token",
    "deploy",
    "docker",
    "upload",
    "cron",
    "index",
    "worker",
    "timeout",
]


def prompts(count: int) -> Iterator[str]:
    for i in range(count):
        a, b, c = WORDS[i % 20], WORDS[(i * 7 + 3) % 20], WORDS[(i * 11 + 5) % 20]
        yield f"How does the {a} {b} work when the {c} fails (case {i})?"


def p50(values: list[float]) -> str:
    return f"{statistics.median(values):.2f}"


# --- answer ------------------------------------------------------------------------------------


def answer(args: argparse.Namespace) -> None:
    from local_recall.context.hook_answers import prompt_answer
    from local_recall.context.hook_settings import read_hook_settings
    from local_recall.context.service import ContextService
    from local_recall.recall import Recall
    from local_recall.repo.layout import resolve_layout
    from local_recall.search import keyword_index, relevance_inputs, searcher, vector_cache
    from local_recall.search.embedders import minilm
    from local_recall.settings import Settings

    env = {k: v for k, v in os.environ.items() if not k.startswith("LOCAL_RECALL_")}
    env["LOCAL_RECALL_EXTRACTION_ENABLED"] = "false"
    recall = Recall.open(settings=Settings(root=args.repo, environ=env))
    recall.searcher.keep_keywords()
    context = ContextService(recall)
    layout = resolve_layout(args.repo, env)
    settings = read_hook_settings(layout, env)
    spent: dict[str, float] = collections.defaultdict(float)
    parts: list[tuple[Any, str, str]] = [
        (minilm.MiniLMEmbedder, "embed_query", "the query's embedding (MiniLM)"),
        (vector_cache.VectorCache, "nearest", "the exact vector product and its best rows"),
        (relevance_inputs.RelevanceInputs, "score_ready", "the relevance of the candidates"),
        (vector_cache.VectorCache, "cosines_of", "the candidates' exact cosines"),
        (keyword_index.KeywordIndex, "search", "the keyword index"),
        (searcher.Searcher, "run", "the whole search"),
    ]
    for owner, name, label in parts:
        setattr(owner, name, _timed(getattr(owner, name), label, spent))

    def once(i: int, text: str) -> tuple[float, float]:
        wall, cpu = time.perf_counter(), time.process_time()
        prompt_answer(
            text,
            settings,
            layout,
            context.prompt_notes,
            lambda level, message: None,
            session_id=f"floor-{i}-{time.time_ns()}",
            prompt_id="",
        )
        return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000

    for i, text in enumerate(prompts(10)):  # warm-up: the model, the caches, the index
        once(i, f"warm {text}")
    spent.clear()
    walls, cpus = [], []
    for i, text in enumerate(prompts(args.prompts)):
        time.sleep(args.pause)
        wall, cpu = once(i, text)
        walls.append(wall)
        cpus.append(cpu)
    print(f"answer, {args.prompts} prompts {args.pause} s apart, load {os.getloadavg()[0]:.2f}")
    print(
        f"whole answer: wall p50 {p50(walls)} ms (mean {statistics.fmean(walls):.2f}), "
        f"CPU p50 {p50(cpus)} ms (all threads)"
    )
    for _, _, label in parts:
        print(f"  {label}: {spent[label] / args.prompts * 1000:.2f} ms wall a prompt")


def _timed(function: Callable[..., Any], label: str, spent: dict[str, float]) -> Any:
    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[label] += time.perf_counter() - started

    return timed


# --- embed -------------------------------------------------------------------------------------

EMBED_VARIANTS = {
    "1 thread (spinning off)": ["1", "0", "0"],
    "2 threads, spinning off (shipped)": ["2", "0", "0"],
    "2 threads, spinning on": ["2", "1", "0"],
    "2 threads, spinning on, force_spinning_stop": ["2", "1", "1"],
}


def embed(args: argparse.Namespace) -> None:
    print(f"embed, {args.prompts} queries {args.pause} s apart, load {os.getloadavg()[0]:.2f}")
    for label, variant in EMBED_VARIANTS.items():
        done = subprocess.run(
            [sys.executable, __file__, "embed-one", *variant, str(args.prompts), str(args.pause)],
            capture_output=True,
            text=True,
            check=True,
        )
        print(f"  {label}: {done.stdout.strip()}")


def embed_one(threads: int, spin: bool, stop: bool, count: int, pause: float) -> None:
    import numpy as np
    import onnxruntime

    from local_recall.search.embedders.minilm import MiniLMEmbedder, installed_minilm_path

    tokenizer = MiniLMEmbedder(threads=1)._loaded().tokenizer
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
    if stop:
        options.add_session_config_entry("session.force_spinning_stop", "1")
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(
        str(installed_minilm_path()), options, providers=["CPUExecutionProvider"]
    )
    walls, cpus = [], []
    for i, text in enumerate(prompts(count + 5)):
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        feed["token_type_ids"] = np.zeros_like(ids)
        time.sleep(pause)
        wall, cpu = time.perf_counter(), time.process_time()
        session.run(["last_hidden_state"], feed)
        if i >= 5:
            walls.append((time.perf_counter() - wall) * 1000)
            cpus.append((time.process_time() - cpu) * 1000)
    idle = time.process_time()
    time.sleep(0.5)
    idle_ms = (time.process_time() - idle) * 1000
    print(
        f"wall p50 {p50(walls)} ms, CPU p50 {p50(cpus)} ms, CPU in the 0.5 s after: "
        f"{idle_ms:.1f} ms"
    )


# --- command -----------------------------------------------------------------------------------


def command(args: argparse.Namespace) -> None:
    launcher = Path(args.launcher)
    python = str(launcher.parent / "python")
    commands = {
        "python -c pass": [python, "-c", "pass"],
        "python -I -S -c pass": [python, "-I", "-S", "-c", "pass"],
        "python -I -S, import _socket, _json": [python, "-I", "-S", "-c", "import _socket, _json"],
        "python -I -S, import json, socket": [python, "-I", "-S", "-c", "import json, socket"],
        "local-recall hook user-prompt-submit": [str(launcher), "hook", "user-prompt-submit"],
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOCAL_RECALL_", "CLAUDE"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    got: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for round_, text in enumerate(prompts(args.rounds + 1)):
        payload = {
            "prompt": text,
            "session_id": f"floor-{round_}-{time.time_ns()}",
            "hook_event_name": "UserPromptSubmit",
            "cwd": str(args.repo),
        }
        for name, argv in commands.items():
            time.sleep(0.3)
            sample = _process(argv, json.dumps(payload).encode(), args.repo, env)
            if round_:
                got[name].append(sample)
    print(f"command, {args.rounds} rounds, load {os.getloadavg()[0]:.2f}")
    for name, samples in got.items():
        walls, cpus = [w for w, _ in samples], [c for _, c in samples]
        print(f"  {name}: wall p50 {p50(walls)} ms, CPU p50 {p50(cpus)} ms")


def _process(argv: list[str], stdin: bytes, cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, input=stdin, capture_output=True, cwd=cwd, env=env, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall * 1000, (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000


def main() -> int:
    if sys.argv[1:2] == ["embed-one"]:
        threads, spin, stop, count, pause = sys.argv[2:7]
        embed_one(int(threads), spin == "1", stop == "1", int(count), float(pause))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    one = sub.add_parser("answer")
    one.add_argument("--repo", type=Path, default=DEFAULT_REPO)
    one.add_argument("--prompts", type=int, default=120)
    one.add_argument("--pause", type=float, default=0.3)
    two = sub.add_parser("embed")
    two.add_argument("--prompts", type=int, default=300)
    two.add_argument("--pause", type=float, default=0.02)
    three = sub.add_parser("command")
    three.add_argument("--launcher", required=True)
    three.add_argument("--repo", type=Path, default=DEFAULT_REPO)
    three.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    {"answer": answer, "embed": embed, "command": command}[args.what](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
