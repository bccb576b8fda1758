"""Every flow's stages at (reduced) tiny presets in one store: the plots' data and the
determinism check's two builds."""

from __future__ import annotations

from gameforge.artifacts import ArtifactStore
from gameforge.flows.pipeline import run_plan
from gameforge.flows.request import RunRequest
from gameforge.flows.specs import get_flow
from gameforge.games import GAMES, TestRun
from gameforge.stages.executor import Executor
from gameforge.stages.runner import run_stage


def quiet(_line: str) -> None:
    """Drop a log line."""


# Every game's reduced runs (its declaration's `test_runs`, overrides of a flow's tiny preset
# and the nodes to build), in the games' order. Two flows stop early, since their tiny presets
# take minutes on two cores: nlhe-cnn after generation 1 and blokus-zero after two of its ten
# iterations; their last stages (a league, the learning curve) are then run on what was built
# (`gathered_stages`).
TEST_RUNS: dict[str, TestRun] = {
    flow: run for game in GAMES for flow, run in game.test_runs.items()
}


def gathered_stages(store: ArtifactStore, runs: dict[str, dict]) -> None:
    """The last stages of the flows that stopped early, on what they built: the no-limit league
    with the one trained generation, the Blokus curve of two evaluations."""
    nlhe = get_flow("nlhe-cnn")
    league = nlhe.resolve("tiny", list(TEST_RUNS["nlhe-cnn"].overrides))["league"]
    run_stage(
        "nlhe-league", league, {"cnn.0": runs["nlhe-cnn"]["train-1"].key}, store=store, log=quiet
    )
    evals = {f"evals.{i}": runs["blokus-zero"][f"eval-{i + 1}"].key for i in range(2)}
    run_stage("blokus-curve", {}, evals, store=store, log=quiet)


def build_tiny_store(store: ArtifactStore, executor: Executor) -> None:
    """Every flow's stages at its game's test runs; best-response and lbr on Kuhn's solve and
    lbr on an abstract Hold'em solve, which no plain flow run makes."""
    runs = {}
    for name, test_run in TEST_RUNS.items():
        spec = get_flow(name)
        nodes = test_run.nodes
        runs[name] = run_plan(
            RunRequest(
                flow=name,
                preset="tiny",
                overrides=tuple(test_run.overrides),
                only=sorted({n for node in nodes for n in spec.upstream(node)}) or None,
            ),
            store,
            executor,
            log=quiet,
        )
    gathered_stages(store, runs)
    kuhn = store.open(runs["solve-lossless"]["cfr"].key)
    game = kuhn.params["game"]
    strategy = {"strategy": kuhn.key}
    run_stage("best-response", {"game": game}, strategy, store=store, executor=executor, log=quiet)
    run_stage("lbr", {"game": game, "deals": 200}, strategy, store=store, log=quiet)
    holdem = store.open(runs["lhe-league"]["cfr[k=4]"].key)
    run_stage(
        "lbr",
        {"game": holdem.params["game"], "deals": 100},
        {"strategy": holdem.key},
        store=store,
        log=quiet,
    )
