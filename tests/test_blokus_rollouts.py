"""Rollout-policy games as BlokusZero training records (gameforge.engines.blokus.rollouts and
the `blokus-rollouts` stage): the games replay legally from the empty board with colour 0 first
(as self-play records do), the policy target is exactly the rollout policy's distribution, the
value target is a mean of rollouts, and training reads it in the mover's order."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gameforge.artifacts import ArtifactStore
from gameforge.engines.blokus.game import CELLS, N_PLAYERS, OUT, new_state, tables
from gameforge.engines.blokus.mcts import mean_rollouts, rollout_move, seeded_rng
from gameforge.engines.blokus.rollouts import RolloutTargets, rollout_games
from gameforge.engines.blokus.selfplay import GameRecords, replay_planes, sample_batch
from gameforge.stages.runner import run_stage
from tests.blokus_helpers import engine_legal, outcome_of, score_of, step
from tests.resume_helpers import killed_run_resumes_alike

torch.set_num_threads(1)
QUIET = {"log": lambda m: None}
EPSILON = 0.25
TARGETS = RolloutTargets(epsilon=EPSILON, positions=5, value_rollouts=4)


def scratch() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rollout policy's scratch arrays: stamps, placements, anchor cells."""
    n = tables().n
    return np.zeros(n + 1, np.int64), np.zeros(n, np.int64), np.zeros(CELLS, np.int64)


@pytest.fixture(scope="module")
def games() -> GameRecords:
    return rollout_games(tables(), 0, 6, seed=3, targets=TARGETS, threads=1)


def test_rollout_games_replay_legally_with_the_rollout_policys_own_targets(games):
    """Every move is legal for the colour to move when the game is replayed from the empty
    board (colour 0 first); the game ends on its last move with the recorded scores; each game
    keeps 5 positions, and at each the policy target lists exactly the legal placements with
    weight (1 - epsilon) / n_largest + epsilon / n on the largest size that fits, epsilon / n
    on the others; the value target (a mean of 4 rollouts) is there exactly at those plies."""
    t = tables()
    rec = games
    assert rec.games == 6 and rec.ply_value.shape == (len(rec.moves), N_PLAYERS)
    for g in range(rec.games):
        s = new_state()
        a, b = int(rec.game_start[g]), int(rec.game_start[g + 1])
        kept = 0
        for k in range(a, b):
            legal = engine_legal(s)
            assert int(rec.moves[k]) in legal, (g, k - a)
            pm = rec.pi_move[rec.pi_start[k] : rec.pi_start[k + 1]]
            pw = rec.pi_weight[rec.pi_start[k] : rec.pi_start[k + 1]].astype(np.float64)
            if pm.size:
                kept += 1
                assert set(pm.tolist()) == legal and len(pm) == len(legal)
                sizes = t.size[pm]
                largest = sizes == sizes.max()
                want = EPSILON / len(pm) + largest * (1 - EPSILON) / largest.sum()
                np.testing.assert_allclose(pw, want, rtol=1e-6)
                value = rec.ply_value[k]
                assert np.isfinite(value).all() and (np.abs(value) <= 1).all()
                assert np.allclose(value * 4, np.round(value * 4))  # a mean of 4 outcomes
            else:
                assert np.isnan(rec.ply_value[k]).all()
            assert step(s, int(rec.moves[k])) == (k < b - 1)
        assert s[OUT : OUT + N_PLAYERS].all() and kept == 5
        assert np.array_equal(rec.scores[g], score_of(s))
        assert np.array_equal(rec.outcome[g], outcome_of(s))


def test_policy_target_is_what_the_rollout_policy_draws(games):
    """At a kept position, 4,000 draws of the rollout policy (epsilon 0.25) fall on the
    target's largest-size placements as often as the target says (within 4 standard errors),
    and only on placements the target lists."""
    t = tables()
    rec = games
    k = int(np.flatnonzero(np.diff(rec.pi_start) > 0)[7])
    g = int(np.searchsorted(rec.game_start, k, side="right") - 1)
    s = new_state()
    for j in range(int(rec.game_start[g]), k):
        step(s, int(rec.moves[j]))
    pm = rec.pi_move[rec.pi_start[k] : rec.pi_start[k + 1]]
    pw = rec.pi_weight[rec.pi_start[k] : rec.pi_start[k + 1]]
    largest = t.size[pm] == t.size[pm].max()
    stamp, buf, anchors = scratch()
    rng = seeded_rng(99, 0)
    draws = np.array([rollout_move(s, t, stamp, buf, anchors, EPSILON, rng) for _ in range(4000)])
    assert set(draws.tolist()) <= set(pm.tolist())
    p = float(pw[largest].sum())
    hit = float(np.isin(draws, pm[largest]).mean())
    assert abs(hit - p) < 4 * np.sqrt(p * (1 - p) / 4000) + 1e-9


def test_value_target_is_a_mean_of_rollouts_from_the_position(games):
    """A value target of 64 rollouts lies within 4 standard errors of 1,000 independent
    rollouts' mean from the same position, colour by colour."""
    t = tables()
    targets = RolloutTargets(epsilon=EPSILON, positions=1, value_rollouts=64)
    rec = rollout_games(t, 0, 1, seed=5, targets=targets, threads=1)
    k = int(np.flatnonzero(np.diff(rec.pi_start) > 0)[0])
    s = new_state()
    for j in range(k):
        step(s, int(rec.moves[j]))
    stamp, buf, anchors = scratch()
    outcomes = np.zeros((1000, N_PLAYERS))
    for i in range(1000):
        mean_rollouts(s, 1, t, 0.0, stamp, buf, anchors, seeded_rng(7, i), outcomes[i])
    mean, sd = outcomes.mean(axis=0), outcomes.std(axis=0)
    se = np.sqrt(sd**2 / 64 + sd**2 / 1000)
    assert (np.abs(rec.ply_value[k] - mean) <= 4 * se + 1e-9).all(), (rec.ply_value[k], mean)


def test_games_depend_on_their_number_only(games):
    """Games 2..3 played alone, on two threads, are games 2..3 of the six."""
    part = rollout_games(tables(), 2, 4, seed=3, targets=TARGETS, threads=2)
    a, b = int(games.game_start[2]), int(games.game_start[4])
    assert np.array_equal(part.moves, games.moves[a:b])
    np.testing.assert_array_equal(part.ply_value, games.ply_value[a:b])
    pa, pb = int(games.pi_start[a]), int(games.pi_start[b])
    np.testing.assert_array_equal(part.pi_weight, games.pi_weight[pa:pb])


def test_training_samples_take_the_positions_value_in_the_movers_order(games):
    """sample_batch's z at a kept position is its value target rotated to the mover, not the
    game's outcome; mixed with self-play records (no value targets) the latter keep theirs."""
    t = tables()
    rng_seed = 4
    planes, pi, z, legal = sample_batch(t, games, 16, np.random.default_rng(rng_seed), False)
    searched = np.flatnonzero(np.diff(games.pi_start) > 0)
    pick = searched[np.random.default_rng(rng_seed).integers(0, searched.size, 16)]
    g = np.searchsorted(games.game_start, pick, side="right") - 1
    movers = np.zeros(16, np.int64)
    rebuilt = np.zeros_like(planes)
    replay_planes(games.moves, games.game_start, g, pick - games.game_start[g], t, new_state(),
                  rebuilt, movers)  # fmt: skip
    np.testing.assert_array_equal(planes, rebuilt)
    order = (movers[:, None] + np.arange(N_PLAYERS)) % N_PLAYERS
    np.testing.assert_allclose(z, games.ply_value[pick[:, None], order])
    assert not np.allclose(z, games.outcome[g[:, None], order])
    plain = GameRecords(*(getattr(games, f) for f in ("moves", "game_start", "pi_start",
                                                       "pi_move", "pi_weight", "scores",
                                                       "outcome")))  # fmt: skip
    both = GameRecords.concat([plain, games])
    values = both.values_per_ply()
    n = len(games.moves)
    assert np.isnan(values[:n]).all() and np.array_equal(values[n:], games.ply_value, True)
    tail = both.last_games(6)
    np.testing.assert_array_equal(tail.ply_value, games.ply_value)
    assert tail.moves.tolist() == games.moves.tolist()


ROLLOUTS = {"games": 4, "positions": 3, "value_rollouts": 2, "chunk": 2, "threads": 1}


def test_rollouts_stage_resumes_and_feeds_training(tmp_path, monkeypatch):
    """blokus-rollouts killed after its first chunk resumes from it (one more chunk played)
    to the uninterrupted run's arrays; blokus-train takes it as a games input and trains a
    network with the convolutional policy head on it."""
    import gameforge.stages.blokus as stage
    from gameforge.stages.blokus import load_records

    store = ArtifactStore(tmp_path / "store")
    again, calls = killed_run_resumes_alike(
        monkeypatch, store, stage, "rollout_games", 2, "blokus-rollouts", ROLLOUTS
    )
    assert calls == 1
    rec = load_records(store.open(again.key))
    assert rec.games == 4 and np.isfinite(rec.ply_value[:, 0]).sum() == 12
    assert store.open(again.key).meta["summary"]["positions"] == 12
    train = {"blocks": 1, "filters": 8, "policy_head": "conv", "steps": 3, "batch": 8,
             "legal_softmax": True, "device": "cpu"}  # fmt: skip
    tr = run_stage("blokus-train", train, {"games.0": again.key}, store=store, **QUIET)
    art = store.open(tr.key)
    assert art.params["policy_head"] == "conv"
    assert np.asarray(art["weights.policy.bias"][...]).shape == (30_433,)
    assert np.isfinite(np.asarray(art["losses"][...])).all()
