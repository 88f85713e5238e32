"""Redaction: vendor tokens in every phrasing, false positives on real text, throughput.

    .venv/bin/python benchmarks/redaction.py [--sweep] [--fp DIR ...] [--speed] [--json OUT]
        [--lib DIR]   # import local_recall from DIR to compare, e.g. main exported with
                      # mkdir /tmp/main && git archive main local_recall | tar -x -C /tmp/main

- sweep: every format of tests/vendor_tokens.py in every phrasing through `redact_for_storage`;
  a placement is caught when no 12-character piece of the token is left. Printed per format
  and per phrasing.
- fp: every text or source file (SUFFIXES) under the folders given (default: this
  interpreter's site-packages), first 1 MB of each: findings by kind, with examples. Run it
  with `--lib` on the code before a change to see what the change adds.
- speed: CPU time (process time, so that other jobs on the machine count less) per MB of
  Python source and ordinary text without secrets, with a secret every ~3 KB, and of the dense
  corpus; median of 5 runs after one warm-up. On a shared machine CPU time still varies by
  ±30 %; docs/security.md also gives instruction counts (valgrind --tool=callgrind around one
  warm `redact`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import sysconfig
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SUFFIXES = {".py", ".md", ".rst", ".txt", ".json", ".jsonl", ".yaml", ".yml", ".toml", ".cfg",
            ".ini", ".js", ".mjs", ".cjs", ".ts", ".sh"}  # fmt: skip
PIECE = 12


def _leaked(token: str, text: str) -> bool:
    if len(token) <= PIECE:
        return token in text
    return any(token[i : i + PIECE] in text for i in range(0, len(token) - PIECE + 1, 4))


def sweep() -> dict[str, Any]:
    from local_recall.redaction.secrets import redact_for_storage
    from tests.vendor_tokens import FORMATS, PHRASINGS, placed

    missed: dict[str, list[str]] = {f.name: [] for f in FORMATS}
    for p in placed():
        if _leaked(p.token, redact_for_storage(p.text).text):
            missed[p.format.name].append(p.phrasing.name)
    total = len(FORMATS) * len(PHRASINGS)
    failed = sum(len(v) for v in missed.values())
    by_phrasing = Counter(name for names in missed.values() for name in names)
    print(f"\nsweep: {total - failed}/{total} placements caught; formats with a miss: "
          f"{sum(1 for v in missed.values() if v)}/{len(FORMATS)}")  # fmt: skip
    for name, phrasings in missed.items():
        if phrasings:
            print(f"  {name}: {len(phrasings)} missed ({', '.join(phrasings)})")
    for phrasing in PHRASINGS:
        n = by_phrasing[phrasing.name]
        print(f"  phrasing {phrasing.name!r}: {len(FORMATS) - n}/{len(FORMATS)}")
    return {
        "placements": total,
        "caught": total - failed,
        "formats": len(FORMATS),
        "formats_with_a_miss": sum(1 for v in missed.values() if v),
        "missed": {k: v for k, v in missed.items() if v},
        "by_phrasing": {p.name: len(FORMATS) - by_phrasing[p.name] for p in PHRASINGS},
    }


def false_positives(folders: list[Path]) -> dict[str, Any]:
    from local_recall.redaction.secrets import find_secrets

    kinds: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    files = size = 0
    started = time.process_time()
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file() or path.is_symlink():
                continue
            try:
                text = path.read_text("utf-8", errors="replace")[:1_000_000]
            except OSError:
                continue
            files += 1
            size += len(text)
            for f in find_secrets(text):
                kinds[f.kind] += 1
                value = text[f.start : f.end]
                shown = value[:6] + "…" + value[-3:] if len(value) > 12 else value
                examples.setdefault(f.kind, []).append(f"{path.name}:{f.line} {shown!r}")
    seconds = time.process_time() - started
    print(f"\nfalse positives: {sum(kinds.values())} findings in {files} files, "
          f"{size / 1e6:.1f} MB ({seconds:.0f} s CPU)")  # fmt: skip
    for kind, n in kinds.most_common():
        print(f"  {kind}: {n}   e.g. {'; '.join(examples[kind][:3])}")
    return {
        "files": files,
        "mb": round(size / 1e6, 1),
        "findings": sum(kinds.values()),
        "by_kind": dict(kinds.most_common()),
        "examples": {k: v[:10] for k, v in examples.items()},
    }


def _body(size: int, *, secrets_every: int) -> str:
    from tests.secret_corpus import ORDINARY, PLANTED

    parts: list[str] = []
    length = i = 0
    while length < size:
        parts.append(ORDINARY[i % len(ORDINARY)])
        if secrets_every and i % secrets_every == secrets_every - 1:
            parts.append(PLANTED[(i // secrets_every) % len(PLANTED)].text)
        length += len(parts[-1]) + 2
        i += 1
    return "\n\n".join(parts)[:size]


def _python_source(size: int) -> str:
    import json as module

    text = Path(module.__file__ or "").parent.joinpath("decoder.py").read_text("utf-8")
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    parts = [text]
    for path in sorted(stdlib.glob("*.py")):
        parts.append(path.read_text("utf-8", errors="replace"))
        if sum(map(len, parts)) > size:
            break
    return "\n".join(parts)[:size]


def speed() -> dict[str, Any]:
    from local_recall.redaction.secrets import redact
    from tests.secret_corpus import ORDINARY, PLANTED

    dense_unit = "\n\n".join([p.text for p in PLANTED] + ORDINARY) + "\n\n"
    inputs = {
        "1 MB Python source (stdlib), no secrets": _python_source(1_000_000),
        "1 MB ordinary snippets, no secrets": _body(1_000_000, secrets_every=0),
        "1 MB with a secret every ~3 KB": _body(1_000_000, secrets_every=40),
        "1 MB with a secret every ~190 bytes": (dense_unit * 400)[:1_000_000],
        "5 KB memory body": _body(5_000, secrets_every=40),
    }
    redact("warm up: load detect-secrets and compile the rules")
    results: dict[str, float] = {}
    print("\nthroughput (CPU ms per MB, median of 5):")
    for name, text in inputs.items():
        redact(text)  # the first scan of a text builds RE2's automata for its rules
        runs = []
        for _ in range(5):
            started = time.process_time()
            redact(text)
            runs.append(time.process_time() - started)
        per_mb = statistics.median(runs) * 1000 / (len(text) / 1e6)
        results[name] = round(per_mb, 1)
        print(f"  {name}: {per_mb:.0f} ms/MB ({statistics.median(runs) * 1000:.1f} ms)")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--fp", nargs="*", type=Path)
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--lib", type=Path, help="import local_recall from this folder")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    if args.lib:
        sys.path.insert(0, str(args.lib.resolve()))
    import local_recall

    print(f"local_recall from {Path(local_recall.__file__).parent}")
    everything = not (args.sweep or args.speed or args.fp is not None)
    out: dict[str, Any] = {}
    if args.sweep or everything:
        out["sweep"] = sweep()
    if args.fp is not None or everything:
        folders = args.fp or [Path(sysconfig.get_paths()["purelib"])]
        out["false_positives"] = false_positives(folders)
    if args.speed or everything:
        out["speed_ms_per_mb"] = speed()
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
