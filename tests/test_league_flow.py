"""Flow `lhe-league`: a sweep over opponent-cluster counts shares what it can, then a league."""

from __future__ import annotations

import numpy as np

from gameforge.flows.pipeline import run_plan
from gameforge.flows.request import RunRequest
from gameforge.flows.specs import get_flow
from tests.tiny_runs import TEST_RUNS

quiet = lambda _m: None  # noqa: E731


def test_league_flow_sweeps_and_shares_upstream(store):
    """Per-count stages run once per value, shared ones once; the league gathers every solve."""
    request = RunRequest(
        flow="lhe-league",
        preset="tiny",
        overrides=TEST_RUNS["lhe-league"].overrides,  # the tests' shared tiny run of it
    )
    results = run_plan(request, store, log=quiet)
    assert set(results) == {
        "river-hs",
        "hsd",
        "hsd-buckets",
        "opponent-clusters[k=4]",
        "opponent-clusters[k=6]",
        "ochs[k=4]",
        "ochs[k=6]",
        "ochs-buckets[k=4]",
        "ochs-buckets[k=6]",
        "cfr[k=4]",
        "cfr[k=6]",
        "league",
    }
    league = store.open(results["league"].key)
    summary = league.meta["summary"]
    assert summary["players"] == ["C4", "C6"]
    # the summary's claims, recomputed from the stored table: C6's row is its mbb/g against C4
    mbb = np.asarray(league["mbb_per_game"][:])
    ci = np.asarray(league["ci95"][:])
    assert np.array_equal(mbb, -mbb.T) and (np.diag(mbb) == 0).all()
    assert ci[0, 1] == ci[1, 0] > 0
    assert summary["hands_per_pairing"] == np.asarray(league["hands"][:])[0, 1] == 500 * 4
    assert summary["mean_mbb_per_game"] == [round(float(mbb[0, 1]), 3), round(float(mbb[1, 0]), 3)]
    # an order only where the head-to-head interval separates the two
    six_wins, four_wins = bool(mbb[1, 0] - ci[1, 0] > 0), bool(mbb[0, 1] - ci[0, 1] > 0)
    tiers = [["C6"], ["C4"]] if six_wins else [["C4"], ["C6"]] if four_wins else None
    by_mean = ["C6", "C4"] if mbb[1, 0] > 0 else ["C4", "C6"]  # one tier lists by mean
    assert summary["ranking"] == (tiers or [by_mean])
    claim = summary["more_clusters_rank_higher"]
    assert claim["holds"] == ("yes" if six_wins else "no" if four_wins else "undecided")
    sign = ">" if six_wins or four_wins else "vs"
    better, worse = ("C6", "C4") if mbb[1, 0] >= 0 else ("C4", "C6")
    cell = abs(mbb[1, 0])
    assert claim["evidence"] == [f"{better} {sign} {worse}: {cell:+.1f} ± {ci[1, 0]:.1f} mbb/g"]
    assert league.inputs == {
        "players.0": results["cfr[k=4]"].key,
        "players.1": results["cfr[k=6]"].key,
    }
    solve = store.open(results["cfr[k=6]"].key)
    assert solve.inputs["middle_buckets"] == results["hsd-buckets"].key  # shared, built once
    again = run_plan(request, store, log=quiet)
    assert all(r.cached for r in again.values())


def test_parallel_nodes_respect_dependencies_and_give_the_same_results():
    """With parallel_nodes=2 independent nodes run side by side (two at most), none starts
    before its inputs finished, and every node gets the same inputs as in a sequential run."""
    import threading
    import time
    from types import SimpleNamespace

    request = RunRequest(flow="hearts-falcon", preset="tiny")
    lock = threading.Lock()
    state = {"now": 0, "most": 0}
    finished: dict[str, float] = {}

    def fake(stage, values, inputs, **kwargs):
        content = repr((stage, sorted(values.items()), sorted(inputs.items())))
        key = f"{stage}-{abs(hash(content)):x}"
        started = time.monotonic()
        for up in inputs.values():
            assert finished[up] <= started  # inputs were committed before this node started
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(0.02)
        with lock:
            state["now"] -= 1
        finished[key] = time.monotonic()
        return SimpleNamespace(key=key, cached=False, seconds=0.02)

    sequential = run_plan(request, run_one=fake, log=lambda m: None)
    assert state["most"] == 1
    parallel = run_plan(
        request.model_copy(update={"parallel_nodes": 2}), run_one=fake, log=lambda m: None
    )
    assert state["most"] == 2
    assert list(parallel) == list(sequential)
    assert {n: r.key for n, r in parallel.items()} == {n: r.key for n, r in sequential.items()}


def test_a_stored_input_can_feed_one_sweep_variant():
    """`cfr[k=6].parent=KEY` continues only the k=6 solve; a bare `cfr.parent` feeds every
    variant; a variant the run does not make is refused before anything runs."""
    from types import SimpleNamespace

    import pytest

    from gameforge.flows.specs import stored_inputs
    from gameforge.stages.base import StageError

    spec = get_flow("lhe-league")
    request = RunRequest(flow="lhe-league", preset="tiny", overrides=("opponent-clusters.k=4,6",))
    fed: dict[str, dict[str, str]] = {}

    def fake(stage, values, inputs, label="", **kwargs):
        fed[label] = dict(inputs)
        return SimpleNamespace(key=f"{label}-key", cached=False, seconds=0.0)

    assert stored_inputs(spec, ["cfr[k=6].parent=cfr-six"]) == {"cfr[k=6]": {"parent": "cfr-six"}}
    six = request.model_copy(update={"stored_inputs": ("cfr[k=6].parent=cfr-six",)})
    run_plan(six, run_one=fake, log=quiet)
    assert fed["cfr[k=6]"]["parent"] == "cfr-six" and "parent" not in fed["cfr[k=4]"]
    assert fed["league"] == {"players.0": "cfr[k=4]-key", "players.1": "cfr[k=6]-key"}

    everyone = request.model_copy(update={"stored_inputs": ("cfr.parent=cfr-all",)})
    run_plan(everyone, run_one=fake, log=quiet)
    assert fed["cfr[k=4]"]["parent"] == fed["cfr[k=6]"]["parent"] == "cfr-all"

    fed.clear()
    with pytest.raises(StageError, match=r"no such variant \(it makes cfr\[k=4\], cfr\[k=6\]\)"):
        eight = request.model_copy(update={"stored_inputs": ("cfr[k=8].parent=cfr-eight",)})
        run_plan(eight, run_one=fake, log=quiet)
    assert fed == {}
    with pytest.raises(StageError, match=r"is named \[k=VALUE\]"):
        stored_inputs(spec, ["cfr[clusters=6].parent=x"])
    with pytest.raises(StageError, match="does not vary"):
        stored_inputs(spec, ["hsd-buckets[k=6].parent=x"])
