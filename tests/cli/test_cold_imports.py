"""A first `local-recall add` imports what it uses. YAKE picks the keywords without
networkx (its package import, all of networkx's algorithms, was ~0.37 s of a first add: YAKE
only uses a directed graph, `memory/keywords.CoOccurrenceGraph`), and redaction runs
detect-secrets' patterns without detect-secrets (its plugin registry, ~0.2 s:
`redaction/ds_rules._DS_TABLE`). Each in a fresh interpreter running the real CLI; the copies
are checked against the real packages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT, clean_env

# The CLI in this interpreter, then which of the heavy packages it left imported.
RUN_CLI = r"""
import json
import runpy
import sys

sys.argv = ["local-recall", *sys.argv[1:]]
try:
    runpy.run_module("local_recall", run_name="__main__")
except SystemExit as exit:
    code = exit.code
else:
    code = 0
heavy = [m for m in ("networkx", "detect_secrets", "requests") if m in sys.modules]
print(json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""
TOKEN = "ghp_" + "Zq4vR8mW2xT6bN1cK9pL3sD7fH5jG0aE1yU4"


def run_cli(repo: Path, *args: str) -> tuple[str, dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-c", RUN_CLI, *args],
        cwd=repo,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    last = done.stderr.strip().splitlines()[-1]
    return done.stdout, json.loads(last)


def test_a_first_add_imports_neither_networkx_nor_detect_secrets(repo: Path) -> None:
    body = (
        f"The deploy bot authenticates with {TOKEN} from the vault; the staging database "
        "is refreshed every Sunday night by the refresh_staging job."
    )
    out, seen = run_cli(repo, "add", "--subject", "Staging refresh", "--body", body)
    assert seen == {"code": 0, "heavy": []}
    memory_id = out.strip()
    text = (repo / "local-recall" / "episodic-memory" / f"{memory_id}.md").read_text()
    assert TOKEN not in text and "[REDACTED:github-token]" in text  # the patterns ran
    keywords = text.split("keywords:", 1)[1].split("\n---", 1)[0]
    assert "refresh_staging" in keywords and "staging database" in keywords  # YAKE ran
    _, listed = run_cli(repo, "list")
    assert listed == {"code": 0, "heavy": []}


KEYWORDS = r"""
import glob
import json
import sys

if sys.argv[1] == "networkx":
    import networkx  # loaded first: keywords.py then leaves YAKE on the real one
from local_recall.memory.keywords import extract_keywords

texts = []
for path in sorted(glob.glob(sys.argv[2] + "/docs/*.md")):
    texts += [p for p in open(path, encoding="utf-8").read().split("\n\n") if len(p) > 80]
keywords = [extract_keywords(t) for t in texts[:300]]
graph = sys.modules["yake.data.core"].nx.DiGraph.__module__
print(json.dumps({"graph": graph, "keywords": keywords}))
"""


def test_yake_picks_the_same_keywords_with_the_stand_in_graph_as_with_networkx() -> None:
    answers = {}
    for graph in ("networkx", "stand-in"):
        done = subprocess.run(
            [sys.executable, "-c", KEYWORDS, graph, str(REPO_ROOT)],
            env=clean_env(),
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        answers[graph] = json.loads(done.stdout)
    assert answers["networkx"]["graph"].startswith("networkx.")
    assert answers["stand-in"]["graph"] == "local_recall.memory.keywords"
    assert len(answers["networkx"]["keywords"]) == 300
    assert answers["stand-in"]["keywords"] == answers["networkx"]["keywords"]
