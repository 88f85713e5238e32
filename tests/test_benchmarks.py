"""The benchmark scripts still import against the library: they are not run by the suite (they
take minutes and real data), so a rename in local_recall broke two of them unnoticed once
(coding_bench.py, decision_fit.py). One process imports every script, without running it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
# A command hook stand-in that runs when loaded, and imports nothing but the standard library.
RUNS_WHEN_IMPORTED = "prompt_latency_client.py"

# Imports every benchmarks/*.py as a module (its `if __name__ == "__main__"` block not run) and
# prints {file: error} for those that fail.
_IMPORT_ALL = """
import importlib.util, json, sys
from pathlib import Path
here = Path(sys.argv[1])
sys.path.insert(0, str(here))
failed = {}
for path in sorted(here.glob("*.py")):
    if path.name == sys.argv[2]:
        continue
    name = f"benchmark_{path.stem}"
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except BaseException as error:
        failed[path.name] = f"{type(error).__name__}: {error}"
print(json.dumps(failed))
"""


def test_every_benchmark_script_imports() -> None:
    scripts = sorted(BENCHMARKS.glob("*.py"))
    assert len(scripts) >= 10  # the folder is there and holds the scripts
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_ALL, str(BENCHMARKS), RUNS_WHEN_IMPORTED],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    failed = json.loads(done.stdout.strip().splitlines()[-1])
    assert failed == {}, failed
