"""Stage `cfr`: exact curves, resume and extension bit-identical, abstraction, strategy queries."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from gameforge.artifacts import ArtifactStore, StoreError
from gameforge.engines.poker.cfr import FullWalkSolver
from gameforge.engines.poker.mccfr import SampledSolver
from gameforge.engines.poker.shipped_games import load_game
from gameforge.stages.base import StageError
from gameforge.stages.poker.cfr import CFRParams
from gameforge.stages.poker.strategy import StrategyView
from gameforge.stages.recompute import recompute_check
from gameforge.stages.runner import run_stage
from tests.poker_helpers import LEDUC, SHORT, CrashAfter, quiet


def _arrays(store, key, names=("regret", "strategy_sum")):
    meta = store.open(key).meta["arrays"]
    return {n: meta[n]["checksum"] for n in names}


def test_full_traversal_stage_records_the_exact_curve(store):
    """cfr+ through the stage: OpenSpiel's Leduc value at 100 iterations, in chips and mbb/g."""
    run = run_stage(
        "cfr", {"game": LEDUC, "algorithm": "cfr+", "iterations": 100}, store=store, log=quiet
    )
    art = store.open(run.key)
    summary = art.meta["summary"]
    assert summary["exploitability_chips"] == pytest.approx(0.013416, abs=1e-6)
    assert summary["exploitability_mbb_per_game"] == pytest.approx(13.416, abs=1e-3)
    its = np.asarray(art["curve_iteration"][:])
    assert its[0] == 1 and its[-1] == 100 and np.all(np.diff(its) > 0)
    curve = np.asarray(art["curve_exploitability"][:])
    assert curve[0] == pytest.approx(2.373611, abs=1e-6)
    strategy = np.asarray(art["average_strategy"][:])
    assert np.allclose(strategy.sum(axis=1), 1.0, atol=1e-6)
    assert summary["abstraction"] == "lossless"


@pytest.mark.parametrize("algorithm, iterations", [("chance", 30_000), ("public", 3_000)])
def test_sampled_run_killed_then_resumed_is_bit_identical(store, tmp_path, algorithm, iterations):
    """A sampled run killed mid-way resumes from its checkpoint to the same bits."""
    params = {
        "game": LEDUC,
        "algorithm": algorithm,
        "iterations": iterations,
        "batch": iterations // 15,
        "checkpoint_seconds": 0,
    }
    with pytest.raises(CrashAfter.Boom):
        run_stage("cfr", params, store=store, progress=CrashAfter(6), log=quiet)
    logs: list[str] = []
    resumed = run_stage("cfr", params, store=store, log=logs.append)
    assert any("resuming at iteration" in line for line in logs), logs
    clean_store = ArtifactStore(tmp_path / "clean")
    clean = run_stage("cfr", params, store=clean_store, log=quiet)
    assert resumed.key == clean.key
    a, b = store.open(resumed.key).meta["arrays"], clean_store.open(clean.key).meta["arrays"]
    a.pop("curve_seconds"), b.pop("curve_seconds")  # wall-clock time, the one thing that differs
    assert a == b


def test_extending_a_run_equals_running_longer(store):
    """Input `parent` continues 4,000 external-sampling iterations to 10,000: same bits."""
    base = {"game": LEDUC, "algorithm": "external", "evaluations": 3}
    short = run_stage("cfr", {**base, "iterations": 4_000}, store=store, log=quiet)
    logs: list[str] = []
    longer = {**base, "iterations": 10_000}
    extended = run_stage("cfr", longer, {"parent": short.key}, store=store, log=logs.append)
    direct = run_stage("cfr", longer, store=store, log=quiet)
    assert extended.key != direct.key  # a new artifact that records its parent
    assert any("continuing" in line for line in logs)
    assert _arrays(store, extended.key) == _arrays(store, direct.key)
    artifact = store.open(extended.key)
    assert artifact.inputs == {"parent": short.key}  # in the lineage
    assert artifact.meta["summary"]["parent_iterations"] == 4_000
    # a key prefix names the same parent: the same artifact, found in the store
    again = run_stage("cfr", longer, {"parent": short.key[:16]}, store=store, log=quiet)
    assert again.key == extended.key and again.cached
    with pytest.raises(StoreError, match="is an input of"):
        store.remove(short.key)  # a parent stays while a continuation needs it
    with pytest.raises(StageError, match="other settings"):
        chance = {**longer, "algorithm": "chance"}
        run_stage("cfr", chance, {"parent": short.key}, store=store, log=quiet)
    with pytest.raises(StageError, match="already has"):
        fewer = {**base, "iterations": 3_000}
        run_stage("cfr", fewer, {"parent": short.key}, store=store, log=quiet)


def test_sampling_variants_are_seeded_and_converge_on_leduc():
    """MCCFR: a seed fixes the run; both variants get Leduc below 0.15 chips in 200k deals."""
    game = load_game(LEDUC)
    exact = FullWalkSolver(game)
    for variant in ("chance", "external"):
        a = SampledSolver(game, variant=variant, seed=3)
        b = SampledSolver(game, variant=variant, seed=3)
        c = SampledSolver(game, variant=variant, seed=4)
        for s in (a, b, c):
            s.iterate(2_000)
        assert np.array_equal(a.regret, b.regret) and not np.array_equal(a.regret, c.regret)
        a.iterate(198_000)
        assert exact.exploitability(a.average_strategy()) < 0.15


@pytest.fixture(scope="module")
def short_solve(short_deck):
    """A 20,000-iteration solve of the short deck: 30 HSD buckets in the middle rounds, 30
    river buckets of the OCHS against 4 opponent clusters."""
    middle, river_b = short_deck.hsd_buckets(30), short_deck.ochs_buckets(4, 30)
    inputs = {"middle_buckets": middle.key, "river_buckets": river_b.key}
    store = short_deck.store
    solve = run_stage("cfr", {"game": SHORT, "iterations": 20_000}, inputs, store=store, log=quiet)
    return store, solve.key, inputs


def test_abstract_holdem_solve_layout_and_strategy_queries(short_solve):
    """On a bucketed short-deck Hold'em: infoset layout, lookups, and clear errors."""
    store, key, inputs = short_solve
    art = store.open(key)
    layout = art.meta["summary"]["layout"]
    assert layout["decisions_per_round"] == [8, 70, 630, 5670]
    assert layout["buckets_per_round"][1:] == [30, 30, 30]
    assert art.meta["summary"]["infosets"] == 8 * layout["buckets_per_round"][0] + 30 * 6370
    assert np.isnan(art["curve_exploitability"][:]).all()  # too big for an exact best response
    view = StrategyView(store, art)
    d = view.decision("7s7d", "", "")
    assert d.round == 0 and d.player == 1 and set(d.probabilities) == {"f", "c", "r"}
    assert sum(d.probabilities.values()) == pytest.approx(1.0, abs=1e-5)
    flop = view.decision("7s6d", "5s4c3h", "rc/c")
    assert flop.round == 1 and set(flop.probabilities) == {"c", "r"}  # no fold facing no bet
    same = view.decision("7h6c", "5h4s3d", "rc/c")  # a suit permutation: same bucket
    assert same.bucket == flop.bucket and same.probabilities == flop.probabilities
    with pytest.raises(StageError, match="shows 3 board cards"):
        view.decision("7s6d", "5s4c", "rc/c")
    with pytest.raises(StageError, match="illegal"):
        view.decision("7s6d", "", "rrrr")
    with pytest.raises(StageError, match="twice"):
        view.decision("7s6d", "7s4c3h", "rc/c")
    with pytest.raises(StageError, match="give both"):
        run_stage(
            "cfr",
            {"game": SHORT, "iterations": 10},
            {"middle_buckets": inputs["middle_buckets"]},
            store=store,
            log=quiet,
        )


def test_strategy_show_cli(short_solve):
    """`gameforge strategy show KEY --hand --board --history` prints the probabilities."""
    from gameforge.flows.cli import app

    store, key, _ = short_solve
    runner = CliRunner()
    args = ["strategy", "show", key[:12], "--store", str(store.root)]
    ok = runner.invoke(app, [*args, "--hand", "7s6d", "--board", "5s4c3h", "--history", "rc/c"])
    assert ok.exit_code == 0, ok.output
    assert "round 1" in ok.output and "raise/bet" in ok.output and "fold" not in ok.output
    bad = runner.invoke(app, [*args, "--hand", "As6d"])
    assert bad.exit_code == 2 and (
        "bad card 'As' for game holdem6.limit.2p.reverse_blinds: this game's deck has ranks "
        "234567, suits cdhs" in bad.output
    ), bad.output


def test_strategy_lbr_cli(short_solve):
    """`gameforge strategy lbr KEY --deals N` prints LBR's winnings and its one-sided bound."""
    from gameforge.flows.cli import app

    store, key, _ = short_solve
    result = CliRunner().invoke(
        app, ["strategy", "lbr", key, "--store", str(store.root), "--deals", "40"]
    )
    assert result.exit_code == 0, result.output
    assert "LBR wins" in result.output and "mbb/g" in result.output
    assert "one-sided" in result.output


FULL_TRAVERSAL = ("cfr", "cfr+")


@pytest.mark.parametrize(
    "settings",
    [
        {"algorithm": "cfr"},
        {"algorithm": "cfr+"},
        {"algorithm": "cfr", "averaging": 1.0},
        {"algorithm": "chance", "plus": True, "averaging": 1.0},
        {"algorithm": "external"},
        {"algorithm": "public", "plus": True, "averaging": 2.0},
        {"algorithm": "public", "averaging": 2.0, "discount_alpha": 1.5},
    ],
    ids=["cfr", "cfr+", "linear", "chance+", "external", "public+", "public-dcfr"],
)
def test_extending_a_solve_equals_solving_the_total_at_once(store, settings):
    """A run extended through `parent` ends with the same strategy sums as one run of the total
    length (the current strategy is re-derived from the parent's regrets, not reset)."""
    total = 40 if settings["algorithm"] in FULL_TRAVERSAL else 4000
    base = {"game": LEDUC, "evaluations": 0, **settings}
    parent = run_stage("cfr", {**base, "iterations": total // 2}, store=store, log=quiet).key
    extended = run_stage(
        "cfr", {**base, "iterations": total}, {"parent": parent}, store=store, log=quiet
    ).key
    at_once = run_stage(
        "cfr", {**base, "iterations": total}, store=ArtifactStore(store.root / "fresh"), log=quiet
    ).key
    fresh = ArtifactStore(store.root / "fresh").open(at_once)
    for name in ("strategy_sum", "regret", "average_strategy"):
        assert np.array_equal(np.asarray(store.open(extended)[name][:]), np.asarray(fresh[name][:]))


def test_the_discount_is_in_the_key_only_where_used():
    """Solves stored before discounted CFR existed keep their keys; a discount is part of the
    key; an algorithm without discounting refuses one."""
    plain = CFRParams(game=LEDUC, algorithm="public")
    assert "discount_alpha" not in plain.key_params()
    dcfr = CFRParams(game=LEDUC, algorithm="public", discount_alpha=1.5)
    assert dcfr.key_params()["discount_alpha"] == 1.5
    assert dcfr.key_params()["discount_beta"] == 0.0
    with pytest.raises(ValueError, match="public sampling"):
        CFRParams(game=LEDUC, algorithm="chance", discount_alpha=1.5)


def test_public_sampling_threads_change_neither_the_key_nor_the_bits(store, tmp_path):
    """`threads` is execution-only: a public solve in two threads has the one-thread solve's
    key and arrays."""
    params = {"game": LEDUC, "algorithm": "public", "plus": True, "averaging": 2,
              "iterations": 200}  # fmt: skip
    one = run_stage("cfr", {**params, "threads": 1}, store=store, log=quiet)
    other = ArtifactStore(tmp_path / "threads")
    two = run_stage("cfr", {**params, "threads": 2}, store=other, log=quiet)
    assert one.key == two.key
    for name in ("regret", "strategy_sum", "average_strategy"):
        a, b = store.open(one.key)[name][:], other.open(two.key)[name][:]
        assert np.array_equal(np.asarray(a), np.asarray(b))


def test_a_time_budget_stops_the_solve_where_a_recompute_and_a_counted_run_agree(store, tmp_path):
    """`seconds` solves for a wall-time budget: the run stops at the first kernel call past it
    (numba's start-up off the clock), records the iteration reached, and is the same solve as
    one of that many iterations; a recompute check replays it bit for bit; a continuation adds
    time."""
    budget = {"game": LEDUC, "algorithm": "chance", "iterations": None, "batch": 300}
    run = run_stage("cfr", {**budget, "seconds": 1.0}, store=store, log=quiet)
    summary = store.open(run.key).meta["summary"]
    assert summary["stopped_by"] == "time budget" and summary["budget_seconds"] == 1.0
    reached = summary["iterations"]
    assert summary["seconds"] >= 1.0
    curve = np.asarray(store.open(run.key)["curve_iteration"][:])
    assert curve[-1] == reached and reached > 1000
    # a point at 1,000 (chance sampling's default batch: not the execution-only batch) and
    # every doubling, then the stop
    doubling = 1000 * 2 ** np.arange(curve.size - 1)
    assert np.array_equal(curve[:-1], doubling[doubling < reached])
    counted_store = ArtifactStore(tmp_path / "counted")
    counted = run_stage("cfr", {**budget, "iterations": reached}, store=counted_store, log=quiet)
    mine, theirs = store.open(run.key), counted_store.open(counted.key)
    for name in ("regret", "strategy_sum", "average_strategy"):
        assert np.array_equal(np.asarray(mine[name][:]), np.asarray(theirs[name][:]))
    report = recompute_check(store, run.key, whole=True, log=quiet)
    assert report.passed and report.skipped == ["curve_seconds"], report.mismatches
    more = run_stage(
        "cfr",
        {**budget, "seconds": summary["seconds"] + 0.5},
        {"parent": run.key},
        store=store,
        log=quiet,
    )
    longer = store.open(more.key).meta["summary"]
    assert longer["iterations"] > reached and longer["parent_iterations"] == reached
    with pytest.raises(StageError, match="already solved for"):
        run_stage("cfr", {**budget, "seconds": 0.5}, {"parent": run.key}, store=store, log=quiet)


def test_a_time_budget_is_in_the_key_only_where_used():
    """Solves stored before budgets existed keep their keys; a run needs a cap or a budget;
    replaying is for budgeted runs and never changes the key."""
    assert "seconds" not in CFRParams(game=LEDUC).key_params()
    timed = CFRParams(game=LEDUC, iterations=None, seconds=60)
    assert timed.key_params()["seconds"] == 60 and timed.key_params()["iterations"] is None
    replayed = CFRParams(game=LEDUC, iterations=None, seconds=60, replay_iterations=1000)
    assert replayed.key_params() == timed.key_params()
    with pytest.raises(ValueError, match="needs a time budget"):
        CFRParams(game=LEDUC, iterations=None)
    with pytest.raises(ValueError, match="replays a run with a time budget"):
        CFRParams(game=LEDUC, replay_iterations=1000)


def test_a_budgeted_run_killed_then_resumed_keeps_its_clock(store):
    """A killed run with a time budget resumes with the seconds it had solved (from its
    checkpoint), stops by the budget, and a recompute replays the resumed build."""
    params = {
        "game": LEDUC, "algorithm": "external", "iterations": None, "seconds": 2.0,
        "batch": 200, "checkpoint_seconds": 0,
    }  # fmt: skip
    with pytest.raises(CrashAfter.Boom):
        run_stage("cfr", params, store=store, progress=CrashAfter(1, only="solve"), log=quiet)
    logs: list[str] = []
    resumed = run_stage("cfr", params, store=store, log=logs.append)
    assert any("resuming at iteration" in line for line in logs), logs
    summary = store.open(resumed.key).meta["summary"]
    assert summary["stopped_by"] == "time budget" and summary["seconds"] >= 2.0
    # the clock went on from the checkpoint's: the curve's times never go back
    seconds = np.asarray(store.open(resumed.key)["curve_seconds"][:])
    assert seconds.size > 3 and np.all(np.diff(seconds) >= 0), seconds
    assert recompute_check(store, resumed.key, whole=True, log=quiet).passed


def test_repairing_a_budgeted_solve_replays_it_and_keeps_its_dependents(store):
    """`artifacts repair --rebuild` of a solve a time budget stopped rebuilds it to the same
    iteration (the same arrays but for the wall-clock curve_seconds), so what was computed from
    it stays."""
    from gameforge.flows.repair import rebuild_key

    params = {"game": LEDUC, "algorithm": "chance", "iterations": None, "seconds": 0.5}
    solve = run_stage("cfr", params, store=store, log=quiet)
    before = dict(store.open(solve.key).meta["arrays"])
    user = run_stage("best-response", {"game": LEDUC}, {"strategy": solve.key}, store=store,
                     log=quiet)  # fmt: skip

    def run(stage: str, values: dict, inputs: dict) -> str:
        return run_stage(stage, values, inputs, store=store, log=quiet).key

    logs: list[str] = []
    assert rebuild_key(store, solve.key, run, logs.append, always=True) == [solve.key]
    after = store.open(solve.key).meta
    assert after["summary"]["stopped_by"] == "replayed to the recorded stop"
    assert after["execution"]["replay_iterations"] == after["summary"]["iterations"]
    before.pop("curve_seconds"), after["arrays"].pop("curve_seconds")
    assert after["arrays"] == before
    assert store.exists(user.key), logs  # its input's content did not change


def test_a_flow_run_applies_a_repairs_replay_to_the_node_it_names(store):
    """`run_plan(replays=...)` (what `run --repair` passes) gives the node whose key it names
    the execution parameters that repeat the stored build."""
    from gameforge.flows.pipeline import plan_keys, run_plan
    from gameforge.flows.request import RunRequest
    from gameforge.stages.executor import InProcessExecutor

    overrides = ("cfr.seconds=60", "cfr.iterations=none", "cfr.evaluations=0")
    request = RunRequest(flow="solve-lossless", overrides=overrides)
    resolved = request.resolve()
    key = plan_keys(resolved.spec, resolved.params)["cfr"]
    replays = {key: {"replay_iterations": 777}}
    replay = request.model_copy(update={"replays": replays})
    run_plan(replay, store, InProcessExecutor(), log=quiet)
    assert store.open(key).meta["summary"]["iterations"] == 777
