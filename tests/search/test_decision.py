"""The store-aware inject / skip decision: pure functions pinned with literal examples, the
background file (written by the indexer, never trusted), and the wiring through a real store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from local_recall.search import decision as dec
from local_recall.search.background import (
    BACKGROUND_JSON,
    RECOMPUTE_BELOW,
    compute_background,
    needs_background,
    read_background,
    refresh_background,
    write_background,
)
from local_recall.search.background_probes import INSTRUCTIONS, PROBES, PROBES_VERSION
from local_recall.search.query_intent import Intent, has_nothing_to_look_up, prompt_intent
from tests.conftest import CliRunner

FP = "minilm:all-MiniLM-L6-v2-int8:384"
NAMED = Intent(names_code=1.0, instruction=0.0, deictic=0.0, generic=0.2)
VAGUE = Intent(names_code=0.0, instruction=1.0, deictic=1.0, generic=1.0)


def background(*tops: float, memories: int = 500) -> dec.Background:
    return dec.Background(tuple(sorted(tops)), memories, PROBES_VERSION, FP)


# --- the background's tail ------------------------------------------------------------------


def test_tail_is_the_smoothed_share_of_probes_reaching_a_relevance() -> None:
    found = background(0.1, 0.2, 0.3, 0.4)
    assert found.tail(0.35) == pytest.approx(1.5 / 5)  # one probe of four reaches 0.35
    assert found.tail(0.05) == pytest.approx(4.5 / 5)  # all of them
    assert found.tail(0.9) == pytest.approx(0.5 / 5)  # none: never 0
    assert found.tail(0.3) == pytest.approx(2.5 / 5)  # reaching counts ties


def test_background_round_trips_and_refuses_anything_else() -> None:
    found = background(0.25, 0.5)
    assert dec.background_from_json(json.loads(json.dumps(found.to_json()))) == found
    good = found.to_json()
    for bad in (
        None,
        [],
        {**good, "tops": "0.5"},
        {**good, "tops": []},
        {**good, "tops": [0.1, True]},
        {**good, "tops": [0.1, 1.5]},
        {**good, "tops": [0.1] * 10_001},
        {**good, "memories": -1},
        {**good, "version": "1"},
        {**good, "embedder": 3},
    ):
        assert dec.background_from_json(bad) is None


# --- the decision -------------------------------------------------------------------------


def test_without_a_background_the_relevance_decides_alone() -> None:
    found = dec.decide([0.7, 0.2], None, NAMED)
    assert (found.probability, found.shift, found.tail) == (0.7, 0.0, None)
    assert dec.shifted(0.2, found) == 0.2


def test_no_hit_is_no_decision() -> None:
    found = dec.decide([], background(0.1), NAMED)
    assert found.probability == 0.0 and found.tail is None


def test_the_same_match_counts_for_less_in_a_store_where_unrelated_prompts_match_too() -> None:
    small = background(*[0.05] * 50, memories=25)  # nothing comes close to unrelated prompts
    large = background(*[0.6] * 50, memories=5000)  # everything does
    in_small = dec.decide([0.55, 0.2], small, NAMED)
    in_large = dec.decide([0.55, 0.2], large, NAMED)
    assert in_small.tail is not None and in_large.tail is not None
    assert in_small.tail < in_large.tail
    assert in_small.probability > in_large.probability


def test_the_probability_rises_with_relevance_and_margin_and_falls_for_vague_prompts() -> None:
    store = background(*[i / 100 for i in range(100)])
    p = [dec.decide([r, 0.1], store, NAMED).probability for r in (0.2, 0.5, 0.8)]
    assert p == sorted(p) and p[0] < p[-1]
    close = dec.decide([0.6, 0.59], store, NAMED).probability
    clear = dec.decide([0.6, 0.05], store, NAMED).probability
    assert clear > close
    assert dec.decide([0.6, 0.1], store, VAGUE).probability < clear


def test_shifted_scores_keep_the_order_and_give_the_best_hit_the_probability() -> None:
    store = background(*[i / 100 for i in range(100)])
    relevances = [0.8, 0.8, 0.5, 0.2, 0.0]
    found = dec.decide(relevances, store, NAMED)
    scores = [dec.shifted(r, found) for r in relevances]
    assert scores[0] == scores[1] == found.probability  # ties with the best share its score
    assert scores == sorted(scores, reverse=True)
    assert scores[-1] == 0.0  # no evidence stays no evidence
    up = dec.Decision(0.5, 0.3, 0.1, NAMED, 0.9, dec.logit(0.9) - dec.logit(0.5))
    assert dec.shifted(0.3, up, share=0.0) == pytest.approx(0.3)  # runners-up: no lift
    assert dec.shifted(0.3, up, share=1.0) > dec.shifted(0.3, up, share=0.5) > 0.3
    down = dec.Decision(0.5, 0.3, 0.9, VAGUE, 0.1, dec.logit(0.1) - dec.logit(0.5))
    assert dec.shifted(0.3, down) < dec.shifted(0.3, up, share=0.0)  # all of a cut


def test_decide_ranked_keeps_keys_and_order() -> None:
    scored, found = dec.decide_ranked([("a", 0.9), ("b", 0.4)], background(0.1, 0.2), NAMED)
    assert [k for k, _ in scored] == ["a", "b"] and scored[0][1] == found.probability
    assert found.relevance == 0.9 and found.runner_up == 0.4


def test_margin_is_capped_and_never_negative() -> None:
    assert dec.margin(0.9, 0.0) == dec.MARGIN_CAP
    assert dec.margin(0.5, 0.5) == 0.0
    assert 0 < dec.margin(0.7, 0.5) < dec.MARGIN_CAP


def test_fitted_weights_point_the_right_way() -> None:
    """relevance up, tail down (a more common match), margin up, vague prompts down."""
    _, relevance, tail, margin, *_ = dec.WEIGHTS
    assert relevance > 0 and tail < 0 and margin >= 0
    assert len(dec.WEIGHTS) == 1 + len(dec.inputs_vector(0.5, 0.1, 0.5, NAMED))
    assert 0.0 <= dec.RUNNER_UP_SHARE <= 1.0


# --- the prompt's intent --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "names_code", "instruction", "deictic"),
    [
        ("pip show raises ValueError: invalid literal", 1.0, 0.0, 0.0),
        ("why is _rebuild_lock global?", 1.0, 0.0, 0.0),
        ("run only tests/functional/test_install.py", 1.0, 0.0, 0.0),  # names a file
        ("add a docstring here", 0.0, 1.0, 1.0),
        ("what does --refresh-package do?", 1.0, 0.0, 0.0),
        ("upgrading to 2.1 broke this", 1.0, 0.0, 1.0),
        ("CancelledError in a hook", 1.0, 0.0, 0.0),
        ("explain this error", 0.0, 1.0, 1.0),
        ("how do we publish a release", 0.0, 0.0, 0.0),
        ("Open the file", 0.0, 1.0, 0.0),
    ],
)
def test_prompt_intent(prompt: str, names_code: float, instruction: float, deictic: float) -> None:
    found = prompt_intent(prompt)
    assert (found.names_code, found.instruction, found.deictic) == (
        names_code,
        instruction,
        deictic,
    )


def test_generic_share_is_the_share_of_generic_instruction_words() -> None:
    assert prompt_intent("fix a typo in the docstring").generic == 1.0
    assert prompt_intent("segfault parsing JSON on Alpine").generic == 0.0
    assert 0 < prompt_intent("add a test for the resolver backtracking").generic < 1


def test_probes_are_not_chat_the_filter_drops_and_not_duplicated() -> None:
    folded = [" ".join(p.lower().split()) for p in PROBES]
    assert len(set(folded)) == len(PROBES)
    # the filter never lets a probe through unsearched... except pure chat, which is fine:
    # a probe the filter drops would measure nothing, so only a few may be
    assert sum(has_nothing_to_look_up(p) for p in PROBES) <= 5
    assert set(INSTRUCTIONS) < set(PROBES)


def test_probes_are_kept_out_of_every_benchmark_prompt() -> None:
    """The background must not be tuned on what the benchmarks measure."""
    import tomllib

    root = Path(__file__).resolve().parents[2] / "benchmarks"
    measured: set[str] = set()
    for path in (root / "coding").glob("**/*.toml"):  # user/: the user-style prompts
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        for key in ("tune", "held_out", "user"):
            measured |= set(data.get(key, []))
        for key in ("prompt", "negative", "user_prompt", "user_negative"):
            measured |= {p["text"] for p in data.get(key, [])}
    text = (root / "generic_prompts.py").read_text(encoding="utf-8")
    measured |= set(json.loads(json.dumps(_string_literals(text))))

    def fold(prompt: str) -> str:
        return " ".join(prompt.lower().strip("?!. ").split())

    assert measured, "the benchmark prompts were not found"
    assert not {fold(p) for p in PROBES} & {fold(p) for p in measured}


def _string_literals(source: str) -> list[str]:
    import ast

    return [
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


# --- the background file ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("memories", "recorded", "expected"),
    [
        (25, 25, False),
        (26, 25, True),  # small stores: any change
        (5000, 5000, False),
        (5050, 5000, False),  # within 2 %
        (5200, 5000, True),
        (RECOMPUTE_BELOW + 10, RECOMPUTE_BELOW - 10, True),
    ],
)
def test_when_the_background_is_recomputed(memories: int, recorded: int, expected: bool) -> None:
    assert needs_background(background(0.1, memories=recorded), memories=memories, embedder=FP) is (
        expected
    )


@pytest.mark.parametrize(
    ("memories", "recorded", "expected"),
    [
        (26, 25, False),  # a search or an MCP save waits on this sync: only when far off
        (40, 25, True),
        (5200, 5000, False),
        (6000, 5000, False),
        (7000, 5000, True),
    ],
)
def test_a_sync_someone_waits_on_recomputes_only_a_far_off_background(
    memories: int, recorded: int, expected: bool
) -> None:
    found = background(0.1, memories=recorded)
    assert needs_background(found, memories=memories, embedder=FP, waiting=True) is expected
    assert needs_background(None, memories=memories, embedder=FP, waiting=True)


def test_another_embedder_or_probe_set_recomputes() -> None:
    found = background(0.1, memories=100)
    assert needs_background(found, memories=100, embedder="ollama:nomic-embed-text:768")
    old = dec.Background(found.tops, 100, PROBES_VERSION - 1, FP)
    assert needs_background(old, memories=100, embedder=FP)
    assert needs_background(None, memories=100, embedder=FP)


def test_compute_searches_every_probe_once(tmp_path: Path) -> None:
    asked: list[str] = []

    def best(probe: str) -> float:
        asked.append(probe)
        return 1.5 if probe == PROBES[0] else 0.25  # clamped into [0, 1]

    found = compute_background(best, memories=7, embedder=FP)
    assert asked == list(PROBES)
    assert found.tops[-1] == 1.0 and found.tops[0] == 0.25 and found.memories == 7
    write_background(tmp_path, found)
    assert read_background(tmp_path) == found


def test_refresh_writes_only_when_needed_and_never_raises(tmp_path: Path) -> None:
    calls = 0

    def best(_probe: str) -> float:
        nonlocal calls
        calls += 1
        return 0.1

    assert (
        refresh_background(tmp_path, None, memories=0, embedder=lambda: FP, best_relevance=best)
        is None
    )
    first = refresh_background(
        tmp_path, None, memories=10, embedder=lambda: FP, best_relevance=best
    )
    assert first is not None and calls == len(PROBES)
    again = refresh_background(
        tmp_path, first, memories=10, embedder=lambda: FP, best_relevance=best
    )
    assert again is first and calls == len(PROBES)

    def broken(_probe: str) -> float:
        raise OSError("disk full")

    kept = refresh_background(
        tmp_path, first, memories=11, embedder=lambda: FP, best_relevance=broken
    )
    assert kept is first


def test_a_planted_or_broken_background_reads_as_none(tmp_path: Path) -> None:
    write_background(tmp_path, background(0.1, 0.2))
    path = tmp_path / BACKGROUND_JSON
    good = json.loads(path.read_text())
    path.write_text(json.dumps({**good, "version": PROBES_VERSION + 1}))
    assert read_background(tmp_path) is None  # another probe set
    path.write_text("[" * 100_000)
    assert read_background(tmp_path) is None
    path.unlink()
    outside = tmp_path.parent / "outside-background.json"
    outside.write_text(json.dumps(good))
    path.symlink_to(outside)
    assert read_background(tmp_path) is None  # never followed
    assert read_background(tmp_path / "missing") is None


# --- the wiring: a real store, real LanceDB and MiniLM, both search paths, the CLI ------------


def test_the_indexer_writes_the_background_and_both_paths_decide_alike(repo: Path) -> None:
    from local_recall.recall import Recall
    from local_recall.search.query import SearchQuery
    from local_recall.settings import Settings
    from tests.conftest import clean_env

    recall = Recall.open(settings=Settings(root=repo, environ=clean_env()))
    recall.add("Run tests with make test", "Run the test suite with make test; it runs pytest.")
    recall.add("Release checklist", "Bump the version, tag, push the tag, publish the wheel.")
    recall.add("Vendored libraries", "Never patch src/_vendor by hand: re-vendor with a script.")
    recall.sync_index()
    state = recall.layout.state_dir
    found = read_background(state)
    assert found is not None and len(found.tops) == len(PROBES) and found.memories == 3
    for prompt in ("how do I run the tests?", "what is the capital of France?", "rename x to y"):
        warm = recall.query(SearchQuery(prompt, min_score=0.0), sync=False)
        cold = Recall.open(settings=Settings(root=repo, environ=clean_env())).query(
            SearchQuery(prompt, min_score=0.0), sync=False, use_index=False
        )
        assert warm.decision is not None and cold.decision is not None
        assert (warm.decision.tail is not None) == bool(warm.hits)  # no hit: nothing to decide
        best = [r.hits[0].score if r.hits else 0.0 for r in (warm, cold)]
        assert abs(best[0] - best[1]) < 1e-6, prompt  # the same numbers, the same decision
        assert (best[0] >= 0.5) == (prompt == "how do I run the tests?"), (prompt, best)
    # a sync with nothing new does not recompute it
    stamp = (state / BACKGROUND_JSON).stat().st_mtime_ns
    recall.sync_index()
    assert (state / BACKGROUND_JSON).stat().st_mtime_ns == stamp


def test_why_shows_the_decision_and_its_inputs(repo: Path, cli: CliRunner) -> None:
    from local_recall.recall import Recall
    from local_recall.settings import Settings
    from tests.conftest import clean_env

    Recall.open(settings=Settings(root=repo, environ=clean_env())).add(
        "Run tests with make test", "Run the test suite with make test; it runs pytest."
    )
    shown = cli("why", "how do I run the tests?")
    assert shown.returncode == 0, shown.stderr
    assert "background" in shown.stdout and "chance it answers the prompt" in shown.stdout
    assert "result: 1 in full" in shown.stdout and "Run tests with make test" in shown.stdout
    assert "no runner-up" in shown.stdout and "margin" not in shown.stdout  # plain words
    data = json.loads(cli("why", "how do I run the tests?", "--json").stdout)
    assert data["searched"] is True and data["background"]["probes"] == len(PROBES)
    assert data["decision"]["tail"] is not None and data["threshold"] == 0.5
    assert data["candidates"][0]["injected"] is True
    assert data["candidates"][0]["tier"] == "full" and data["candidates"][0]["tier_reason"]
    assert isinstance(data["best_reached_by"], int) and data["pointer_threshold"] == 0.0
    assert set(data["candidates"][0]["signals"]) >= {"cosine", "coverage", "fuzzy"}
    chat = json.loads(cli("why", "thanks!", "--json").stdout)
    assert chat["searched"] is False and chat["injected"] == [] and chat["reason"]
    unrelated = cli("why", "what is the capital of France?")
    assert "result: nothing shown" in unrelated.stdout


@pytest.mark.parametrize(
    ("shift", "floor"), [(0.0, 0.3), (1.5, 0.3), (-2.0, 0.3), (0.7, 0.5), (3.0, 0.05)]
)
def test_least_relevance_is_the_edge_of_reaching_the_floor(shift: float, floor: float) -> None:
    """The pruned scoring drops a runner-up below `least_relevance`: just above it the shifted
    score reaches the floor, just below it does not."""
    decision = dec.Decision(
        0.9, 0.2, 0.1, Intent(0, 0, 0, 0), dec.sigmoid(dec.logit(0.9) + shift), shift
    )
    edge = dec.least_relevance(floor, decision)
    assert dec.shifted(edge + 1e-6, decision) >= floor
    assert dec.shifted(edge - 1e-6, decision) < floor
    assert dec.least_relevance(0.0, decision) == 0.0
    assert dec.least_relevance(1.0, decision) == 1.0
