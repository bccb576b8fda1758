"""Stage `league`: round robin of solved strategies, variadic inputs, table and heat map."""

from __future__ import annotations

import numpy as np
import pytest

from gameforge.stages.base import StageError
from gameforge.stages.runner import run_stage

LEDUC = "leduc.limit.2p"
quiet = lambda _m: None  # noqa: E731


def test_league_ranks_longer_solves_higher(store, tmp_path):
    """CFR+ after 2, 20 and 400 iterations: an antisymmetric table, more iterations win."""
    keys = [
        run_stage(
            "cfr",
            {"game": LEDUC, "algorithm": "cfr+", "iterations": it, "evaluations": 0},
            store=store,
            log=quiet,
        ).key
        for it in (2, 20, 400)
    ]
    inputs = {f"players.{i}": k for i, k in enumerate(keys)}
    params = {"game": LEDUC, "hands_per_set": 20_000, "sets": 2}
    logs: list[str] = []
    league = run_stage("league", params, inputs, store=store, log=logs.append)
    art = store.open(league.key)
    mbb = np.asarray(art["mbb_per_game"][:])
    ci = np.asarray(art["ci95"][:])
    assert np.allclose(mbb, -mbb.T) and np.all(np.diag(mbb) == 0)
    assert mbb[2, 0] - ci[2, 0] > 0 and mbb[1, 0] - ci[1, 0] > 0  # beats the 2-iteration one
    summary = art.meta["summary"]
    # both longer solves beat the 2-iteration one beyond their intervals: it is a tier alone,
    # and the summary's decided/undecided comparisons are the table's own
    assert summary["ranking"][-1] == [summary["players"][0]]
    labels = summary["players"]
    decided = {(labels[i], labels[j]) for i in range(3) for j in range(3) if mbb[i, j] > ci[i, j]}
    stated = {tuple(line.split(":")[0].split(" > ")) for line in summary["decided"]}
    assert stated == decided and len(summary["decided"]) + len(summary["undecided"]) == 3
    assert summary["hands_per_pairing"] == 40_000
    assert sum(" vs " in line for line in logs) == 3
    assert sorted(art.inputs) == ["players.0", "players.1", "players.2"]
    assert set(store.show(keys[0])["dependents"]) == {league.key}
    from gameforge.flows.plots import plot

    assert plot(art, tmp_path / "league.png").startswith("ranking at 95%: ")
    # AIVAT for the row player (its strategy is known; Leduc's values exact) on the first 500
    # deals' plays, beside the plain result on them; the stored histories recompute the latter
    aivat_mean = np.asarray(art["aivat_mbb_per_game"][:])
    aivat_half = np.asarray(art["aivat_ci95"][:])
    plain_half = np.asarray(art["aivat_plain_ci95"][:])
    off = ~np.eye(3, dtype=bool)
    assert np.allclose(aivat_mean[off], -aivat_mean.T[off]) and np.isnan(np.diag(aivat_mean)).all()
    assert (aivat_half[off] < plain_half[off]).all()
    assert (np.asarray(art["aivat_hands"][:])[off] == 1000).all()
    assert all(v["narrower"] > 1 for v in summary["aivat"].values())
    ends = np.asarray(art["hand_ends"][:])
    assert ends.shape == (3, 500, 2)
    from gameforge.engines.poker.aivat import betting_of, match_hands, showdown_payoff
    from gameforge.engines.poker.shipped_games import load_game

    b = betting_of(load_game(LEDUC))
    hands, seats = match_hands(b, 0, ends[0])  # players 0 and 1
    chips = []
    for hand, seat in zip(hands, seats):
        state = b.start()
        for action in hand.actions:
            state = b.apply(state, action)
        pay = showdown_payoff(b, state, hand.hole, hand.board)
        chips.append(pay if seat == 0 else -pay)
    per_deal = np.asarray(chips, float).reshape(500, 2).mean(axis=1)
    assert per_deal.mean() * 1000 == pytest.approx(
        np.asarray(art["aivat_plain_mbb_per_game"][:])[0, 1]
    )
    # Same seed, same table: a rerun is a cache hit with the same key.
    assert run_stage("league", params, inputs, store=store, log=quiet).cached


def test_league_input_errors(store):
    """Variadic inputs: needs players, refuses unknown names and non-cfr artifacts."""
    key = run_stage(
        "cfr",
        {"game": LEDUC, "algorithm": "cfr", "iterations": 2, "evaluations": 0},
        store=store,
        log=quiet,
    ).key
    with pytest.raises(StageError, match="missing inputs players"):
        run_stage("league", {"game": LEDUC}, {}, store=store, log=quiet)
    with pytest.raises(StageError, match="unknown inputs player.0"):
        run_stage("league", {"game": LEDUC}, {"player.0": key}, store=store, log=quiet)
    with pytest.raises(StageError, match="at least two"):
        run_stage("league", {"game": LEDUC}, {"players.0": key}, store=store, log=quiet)
