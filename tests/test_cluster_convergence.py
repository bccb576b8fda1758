"""bench/cluster_convergence.py: the exploitability-by-cluster-count table is gathered from the
store's best responses exactly as the stages recorded them (two k, two continued solve lengths,
the tiny preset with fewer buckets). Slow: four exact best responses of the 6-rank deck."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from gameforge.artifacts import ArtifactStore
from tests.poker_helpers import quiet

pytestmark = pytest.mark.slow

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _script():  # type: ignore[no-untyped-def]
    """bench/cluster_convergence.py as a module."""
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(
        "cluster_convergence", BENCH / "cluster_convergence.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


# four exact best responses and their solves: 6-12 minutes on two cores shared with other work,
# too close to the suite's 900 s limit
@pytest.mark.timeout(1800)
def test_the_gathered_table_is_the_stored_best_responses(tmp_path):
    cc = _script()
    store = ArtifactStore(tmp_path / "store")
    args = argparse.Namespace(
        store=str(store.root), preset="tiny", k="4,6", abstraction_seeds="1", solve_seeds="0",
        lengths="4000,2000", algorithm="chance", precision="float32",
        set=["hsd-buckets.k=20", "ochs-buckets.k=20"],
    )  # fmt: skip
    cc.run(args, quiet)
    points = cc.gather(store)
    assert [(p.k, p.iterations) for p in points] == [(4, 2000), (4, 4000), (6, 2000), (6, 4000)]
    for p in points:
        br = store.open(p.best_response)
        solve = store.open(p.strategy)
        assert br.inputs["strategy"] == solve.key
        assert p.exploitability_mbb == br.meta["summary"]["exploitability_mbb_per_game"]
        assert (p.abstraction_seed, p.solve_seed, p.algorithm) == (1, 0, "chance")
        if p.iterations == 4000:  # continued from the shorter solve, not restarted
            shorter = next(q for q in points if (q.k, q.iterations) == (p.k, 2000))
            assert solve.inputs["parent"] == shorter.strategy
    cells = cc.summarise(points)
    expected = cc.table_lines([])  # the header
    for p in points:
        v = p.exploitability_mbb
        expected.append(f"| chance | {p.k} | {p.iterations:,} | 1 | {v:.1f} | {v:.1f}-{v:.1f} |")
    assert cc.table_lines(cells) == expected
    assert all(np.isnan(c.half_width) for c in cells)  # one seed: no interval, no ordering
    assert all("separated: none" in line for line in cc.order_lines(cells))
    cc.figure(cells, tmp_path / "curves.png", "test")
    assert (tmp_path / "curves.png").stat().st_size > 10_000
    # a later run given only longer lengths continues the longest stored solve below each
    solves = {(p.k, p.iterations): store.open(p.strategy) for p in points}
    four = solves[4, 4000]
    inputs = {n: four.inputs[n] for n in ("middle_buckets", "river_buckets")}
    asked = {n: four.params[n] for n in ("game", "algorithm", "seed", "evaluations")}
    stored = cc.stored_solves(store)
    for length, parent in ((8000, four.key), (3000, solves[4, 2000].key), (2000, None)):
        given = cc.chain_inputs(stored, {**asked, "iterations": length}, inputs, None)
        assert given.get("parent") == parent
    assert cc.chain_inputs(stored, {**asked, "iterations": 4000}, inputs, None) == four.inputs
    assert cc.chain_inputs(stored, {**asked, "iterations": 8000, "seed": 1}, inputs, None) == inputs
    again = ArtifactStore(store.root)
    cc.run(args, quiet)  # everything cached: the same points
    assert cc.gather(again) == points

    # the league between each k's longest solve, its order set beside exploitability's
    league_args = argparse.Namespace(
        store=str(store.root), preset="tiny", game=None, algorithm="chance",
        abstraction_seeds="1", solve_seeds="0", at=None,
        set=["league.hands_per_set=200", "league.sets=2", "league.aivat_hands=0"],
    )  # fmt: skip
    cc.play_league(league_args, quiet)
    (league_key,) = [k for k in store.keys() if k.startswith("league-")]  # noqa: SIM118
    league = store.open(league_key)
    longest = [p for p in points if p.iterations == 4000]
    assert [league.inputs[f"players.{i}"] for i in range(2)] == [p.strategy for p in longest]
    leagues = cc.stored_leagues(store, points)
    (line, *pairs) = cc.league_lines(leagues)
    head = (f"- league `{league_key}` (chance at 4,000 iterations, abstraction seed 1, solve "
            "seed 0, deal seed 1000, 400 hands a pairing): by the league ")  # fmt: skip
    assert line.startswith(head)
    ranked = sorted(longest, key=lambda p: p.exploitability_mbb)
    assert line.endswith(" < ".join(f"C{p.k} {p.exploitability_mbb:.1f}" for p in ranked))
    assert pairs == [f"  - {t}" for t in league.meta["summary"]["decided"]
                     + league.meta["summary"]["undecided"]]  # fmt: skip
    assert cc.pooled_league_lines(leagues) == []  # one seed pair: nothing to pool
    # --at plays the league at a shorter length every k reached
    cc.play_league(argparse.Namespace(**{**vars(league_args), "at": 2000}), quiet)
    (shorter,) = [lg for lg in cc.stored_leagues(store, points) if lg.key != league_key]
    assert [p.iterations for p in shorter.players] == [2000, 2000]
