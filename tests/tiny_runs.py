"""Every flow's stages at (reduced) tiny presets in one store: the plots' data and the
determinism check's two builds."""

from __future__ import annotations

from gameforge.artifacts import ArtifactStore
from gameforge.flows.pipeline import run_plan
from gameforge.flows.request import RunRequest
from gameforge.flows.specs import get_flow
from gameforge.stages.executor import Executor
from gameforge.stages.runner import run_stage


def quiet(_line: str) -> None:
    """Drop a log line."""


# (flow, overrides of its tiny preset, the nodes it runs with their inputs; () for all).
# lhe-abstraction and lhe-solve are subsets of lhe-league's nodes. Two flows stop early, since
# their tiny presets take minutes on two cores: nlhe-cnn after generation 1 and blokus-zero
# after two of its ten iterations; their last stages (a league, the learning curve) are then
# run on what was built (`gathered_stages`).
TINY_RUNS: tuple[tuple[str, list[str], tuple[str, ...]], ...] = (
    (
        "lhe-league",
        ["opponent-clusters.k=4,6", "hsd-buckets.k=20", "ochs-buckets.k=20",
         "cfr.iterations=5000", "league.sets=4", "league.hands_per_set=500"],
        (),
    ),
    # the same abstraction as lhe-league's k=4 variant: only potential-buckets is new
    (
        "lhe-abstraction-pa",
        ["opponent-clusters.k=4", "hsd-buckets.k=20", "ochs-buckets.k=20",
         "potential-buckets.k=20"],
        (),
    ),
    ("solve-lossless", [], ()),  # Kuhn, CFR+: exact exploitability at every point
    ("nlhe-cnn", ["hands=240", "max_samples=400", "league.hands=60"], ("train-1",)),
    (
        "hearts-falcon",
        ["logs.games=100", "hearts-falcon.games=60", "hearts-falcon.checkpoints=0,30,60",
         "eval.games=8", "eval.sims=8", "eval.rank_matches=2"],
        (),
    ),
    (
        "blokus-zero",
        ["games=1", "parallel=1", "steps=2", "final_games=1", "mcts_sims=2", "rollout_mix=0"],
        ("eval-1", "eval-2"),
    ),
    ("blokus-bootstrap", [], ()),  # rollout games, pretraining, 2 self-play rounds, controls
)  # fmt: skip


def gathered_stages(store: ArtifactStore, runs: dict[str, dict]) -> None:
    """The last stages of the flows that stopped early, on what they built: the no-limit league
    with the one trained generation, the Blokus curve of two evaluations."""
    nlhe = get_flow("nlhe-cnn")
    overrides = next(o for name, o, _ in TINY_RUNS if name == "nlhe-cnn")
    league = nlhe.resolve("tiny", overrides)["league"]
    run_stage(
        "nlhe-league", league, {"cnn.0": runs["nlhe-cnn"]["train-1"].key}, store=store, log=quiet
    )
    evals = {f"evals.{i}": runs["blokus-zero"][f"eval-{i + 1}"].key for i in range(2)}
    run_stage("blokus-curve", {}, evals, store=store, log=quiet)


def build_tiny_store(store: ArtifactStore, executor: Executor) -> None:
    """Every flow's stages at the TINY_RUNS presets; best-response and lbr on Kuhn's solve and
    lbr on an abstract Hold'em solve, which no plain flow run makes."""
    runs = {}
    for name, overrides, nodes in TINY_RUNS:
        spec = get_flow(name)
        runs[name] = run_plan(
            RunRequest(
                flow=name,
                preset="tiny",
                overrides=tuple(overrides),
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
