"""The benchmark scripts still import against the library: they are not run by the suite (they
take minutes and real data), so a rename in local_recall broke two of them unnoticed once
(coding_bench.py, decision_fit.py). One process imports every script, without running it."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
# A command hook stand-in that runs when loaded, and imports nothing but the standard library.
RUNS_WHEN_IMPORTED = "prompt_latency_client.py"
# The scripts that fit constants: none may read the user-style prompts (held out everywhere).
FITS = ("decision_fit", "tier_fit", "relevance_fit")

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


# --- the coding benchmark's data -----------------------------------------------------------


def _benchmark(name: str) -> Any:
    """A benchmarks/ module, imported in this process (they put their folder on sys.path)."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    return importlib.import_module(name)


def _fold(text: str) -> str:
    return " ".join(text.lower().strip("?!. ").split())


def test_shared_run_finds_four_word_runs_whatever_the_case_and_punctuation() -> None:
    shared_run = _benchmark("coding_data").shared_run
    subject = "pip show crashed with ValueError when a distribution has no Metadata-Version"
    assert shared_run("Why: `pip show` Crashed with it?", subject) == "pip show crashed with"
    assert shared_run("pip show crashes with ValueError", subject) is None
    assert shared_run("no metadata version", subject) is None  # three words are allowed
    assert shared_run("it has no Metadata_Version", subject) is None  # `_` is part of a word
    assert shared_run("has no metadata-version", subject) == "has no metadata version"
    assert shared_run("a b c d e", "c d e f", words=3) == "c d e"


def test_user_style_prompts_load_and_answer_hand_written_memories() -> None:
    coding_data = _benchmark("coding_data")
    projects = coding_data.load_projects()
    assert {p.name for p in projects} == {"pip", "pydantic", "sqlalchemy", "celery", "scrapy"}
    every: list[str] = []
    for project in projects:
        ids = {m.key for m in project.memories}
        user = project.user_prompts
        assert {p.style for p in user} == {"user"}
        assert {p.style for p in project.prompts} == {"commit"}
        positives = [p for p in user if p.kind == "positive"]
        assert len(positives) >= 25, project.name
        assert sum(p.kind == "negative" for p in user) >= 12, project.name
        for prompt in positives:
            assert prompt.answers and prompt.answers <= ids, (project.name, prompt.text)
        # most hand-written memories are asked about
        assert len(set().union(*(p.answers for p in positives))) >= 0.8 * len(ids)
        every += [p.text for p in (*project.prompts, *user)]
    generic = coding_data.generic_prompts("held-out", style="user")
    assert len(generic) >= 35
    every += generic
    every += coding_data.generic_prompts("tune") + coding_data.generic_prompts("held-out")
    folded = [_fold(t) for t in every]
    duplicates = {t for t in folded if folded.count(t) > 1}
    assert not duplicates


def test_user_style_prompts_never_share_four_words_with_their_answers_subject() -> None:
    coding_data = _benchmark("coding_data")
    echoes = []
    for project in coding_data.load_projects():
        subjects = {m.key: m.subject for m in project.memories}
        for prompt in project.user_prompts:
            for answer in prompt.answers:
                run = coding_data.shared_run(prompt.text, subjects[answer])
                if run is not None:
                    echoes.append((prompt.text, answer, run))
    assert echoes == []


def test_user_style_prompts_are_held_out_and_never_reach_a_fit() -> None:
    coding_data = _benchmark("coding_data")
    coding_bench = _benchmark("coding_bench")
    tier_fit = _benchmark("tier_fit")
    import generic_prompts

    projects = coding_data.load_projects()
    user_texts = {p.text for project in projects for p in project.user_prompts}
    user_texts |= set(coding_data.generic_prompts("tune", style="user"))
    tuned = [p for p in projects if p.split == "tune"]
    assert tuned  # pip and pydantic: their commit-style prompts are tuned on
    for project in projects:
        for prompt in project.user_prompts:
            assert coding_data.prompt_split(project, prompt) == "held-out"
            assert coding_bench.label(project, prompt) == "user-held-out"
        # decision_fit.py reads fit_prompts and the `tune` generic list, nothing else
        assert not {p.text for p in coding_data.fit_prompts(project)} & user_texts
    assert all(coding_data.fit_prompts(p) for p in tuned)
    # ...and the fits read the coding prompts through fit_prompts only (relevance_fit.py not at all)
    fits = {n: (BENCHMARKS / f"{n}.py").read_text(encoding="utf-8") for n in FITS}
    assert "coding_data.fit_prompts(project)" in fits["decision_fit"]
    for name, source in fits.items():
        for reader in ("user_prompts", "prompts_in(", "style=", "coding/user", ".prompts"):
            assert reader not in source, (name, reader)
    assert "coding_data" not in fits["relevance_fit"]
    fitted = set(coding_data.generic_prompts("tune")) | set(generic_prompts.FIT)
    assert not {_fold(t) for t in fitted} & {_fold(t) for t in user_texts}
    # the default style runs what it ran before: commit-style prompts only
    default = coding_bench.prompts_of(tuned[0])
    assert {p.style for p in default} == {"commit"}
    assert {p.style for p in coding_bench.prompts_of(tuned[0], "both")} == {"commit", "user"}
    # tier_fit.py: a user-style prompt is never swept, even under a `tune` key
    top = [[1, 0.6]]
    run = {
        "prompts": {
            "tune/25": [
                {"kind": "positive", "style": "commit", "text": "a", "top": top},
                {"kind": "positive", "style": "user", "text": "b", "top": top},
            ],
            "user-held-out/25": [{"kind": "positive", "style": "user", "text": "c", "top": top}],
        }
    }
    assert [p["text"] for p in tier_fit.fit_prompts(run, "tune")["25"]] == ["a"]
    assert tier_fit.fit_prompts(run, "user-held-out") == {}
