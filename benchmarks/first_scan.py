"""A store's first scan (no catalog: a fresh clone) and a scan through the catalog, each in a new
process, optionally interleaved with other checkouts of local-recall.

    .venv/bin/python benchmarks/first_scan.py STORE [--rounds 3] [--code DIR ...] [--json OUT]

STORE is a repository root holding `local-recall/episodic-memory/` (e.g. a `--workdir` store of
scale.py, copied: its `local-recall/state/catalog-episodic.*` files are removed before each first
scan). `--code DIR`: a checkout whose `local_recall` the rounds also run (a git worktree of an
older commit), before this checkout's in every round, so that a machine's drift between rounds
falls on both. Prints one line per scan: which code, first or warm, memories, wall and CPU s.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

# run in a new interpreter: the scan's imports, its collector and its caches are its own
SCAN = """
import json, shutil, sys, time
from pathlib import Path
from local_recall.recall import Recall, Settings
root, first = Path(sys.argv[1]), sys.argv[2] == "first"
if first:
    for path in (root / "local-recall" / "state").glob("catalog-episodic.*"):
        path.unlink()
recall = Recall.open(settings=Settings(root=root, environ={}))
cpu, wall = time.process_time(), time.perf_counter()
scan = recall.scan()
print(json.dumps({"memories": len(scan.memories), "problems": len(scan.problems),
                  "wall_s": round(time.perf_counter() - wall, 2),
                  "cpu_s": round(time.process_time() - cpu, 2)}))
"""


def scan(code: Path, store: Path, kind: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run(
        [sys.executable, "-c", SCAN, str(store), kind],
        cwd=code,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return {"code": str(code), "scan": kind, **result}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--code", type=Path, action="append", default=[])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not (args.store / "local-recall" / "episodic-memory").is_dir():
        sys.exit(f"first_scan.py: {args.store} holds no local-recall/episodic-memory")
    rows = []
    for _ in range(args.rounds):
        for code in [*args.code, HERE]:
            for kind in ("first", "warm"):
                row = scan(code.resolve(), args.store, kind)
                print(json.dumps(row), flush=True)
                rows.append(row)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
