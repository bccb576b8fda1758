"""Games of MCTS-MAXN's rollout policy as BlokusZero training records (beyond the paper).

A network trained from scratch by self-play sees too few games on a CPU to learn a value: its
value head memorises the outcomes of a few hundred games (bench/BENCHMARKS.md). The rollout
policy of MCTS-MAXN (the largest piece that fits, at random; a uniformly random placement with
probability epsilon) plays a game in about a millisecond, so its games are nearly free. Each
game here keeps a few positions, each with two targets:

- policy: the rollout policy's own distribution at that position (1 - epsilon spread evenly
  over the legal placements of the largest size that fits, epsilon over all legal placements);
- value: the mean `utility` of `value_rollouts` further rollouts from that position, so the
  target is what MCTS-MAXN estimates with one noisy rollout, averaged (a single game outcome
  is mostly noise: its variance about a constant is 2.87 summed over the colours, the mean of
  16 rollouts' 1.04, of which about 0.18 is still noise).

AlphaGo started its networks the same way, from a fast policy's play, before self-play. A game
depends on its number and the seed only, so chunks and threads give the same records.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from numba import njit

from gameforge.engines.blokus.game import (
    CELLS,
    N_PLAYERS,
    PIECE_SIZES,
    STATE_SIZE,
    Tables,
    advance,
    legal_moves,
    new_state,
    place,
    scores,
    utility,
)
from gameforge.engines.blokus.mcts import ROLLOUT_EPSILON, mean_rollouts, rollout_move, seeded_rng
from gameforge.engines.blokus.selfplay import GameRecords
from gameforge.engines.blokus.zero import MAX_PLIES
from gameforge.engines.common.rng import uniform

# room for one position's legal placements (1,000 at most measured, never near this)
ROLLOUT_WIDEST = 2000


@njit(cache=True, nogil=True)
def _play_game(
    t: Tables,
    root: np.ndarray,
    epsilon: float,
    positions: int,
    value_rollouts: int,
    margin: float,
    rng: np.ndarray,
    plies: np.ndarray,
    pi_count: np.ndarray,
    value: np.ndarray,
    pi_move: np.ndarray,
    pi_weight: np.ndarray,
    final: np.ndarray,
) -> tuple[int, int]:
    """One game of the rollout policy from `root`; at `positions` of its plies drawn without
    replacement, the policy target (into pi_move / pi_weight, CSR by ply: pi_count[ply] entries,
    0 where not kept) and the value target (value[ply]; left as it is where not kept).
    Returns (plies, policy entries)."""
    n_placements = t.piece.shape[0]
    stamp = np.zeros(n_placements + 1, np.int64)
    moves = np.zeros(n_placements, np.int64)
    anchors = np.zeros(CELLS, np.int64)
    states = np.zeros((MAX_PLIES, STATE_SIZE), np.uint8)
    s = root.copy()  # colour 0 to move, as self-play records are replayed
    n = 0
    while True:
        m = rollout_move(s, t, stamp, moves, anchors, epsilon, rng)
        if m < 0:
            break
        states[n] = s
        plies[n] = m
        n += 1
        place(s, m, t)
        if not advance(s, t):
            break
    final[:] = s
    keep = np.zeros(n, np.bool_)
    for i in range(n - min(positions, n), n):  # Floyd's sampling: min(positions, n) of n
        j = int(uniform(rng) * (i + 1))
        if keep[j]:
            keep[i] = True
        else:
            keep[j] = True
    used = 0
    for i in range(n):
        pi_count[i] = 0
        if not keep[i]:
            continue
        k = legal_moves(states[i], t, stamp, moves, 1)
        largest = 0
        for a in range(k):
            largest = max(largest, t.size[moves[a]])
        n_largest = 0
        for a in range(k):
            if t.size[moves[a]] == largest:
                n_largest += 1
        for a in range(k):
            w = epsilon / k
            if t.size[moves[a]] == largest:
                w += (1.0 - epsilon) / n_largest
            pi_move[used + a] = moves[a]
            pi_weight[used + a] = w
        used += k
        pi_count[i] = k
        mean_rollouts(states[i], value_rollouts, t, margin, stamp, moves, anchors, rng, value[i])
    return n, used


@dataclass(frozen=True)
class RolloutTargets:
    """What `rollout_games` plays and records (see the module docstring)."""

    epsilon: float = ROLLOUT_EPSILON  # the rollout policy's random-placement share
    positions: int = 4  # plies kept per game, each with a policy and a value target
    value_rollouts: int = 16  # further rollouts averaged into each kept position's value
    margin: float = 0.0  # a finished game's value: 0 win/loss, m > 0 tanh(score margin / m)


def rollout_games(
    t: Tables,
    first: int,
    stop: int,
    seed: int,
    targets: RolloutTargets = RolloutTargets(),
    threads: int = 2,
) -> GameRecords:
    """Games first..stop-1 of the rollout policy as records with policy and value targets at
    `targets.positions` plies each; game g's stream is seeded_rng(seed, g)."""
    epsilon, positions = targets.epsilon, targets.positions
    value_rollouts, margin = targets.value_rollouts, targets.margin
    games = stop - first
    plies = np.zeros((games, MAX_PLIES), np.int64)
    counts = np.zeros((games, 2), np.int64)
    pi_count = np.zeros((games, MAX_PLIES), np.int64)
    value = np.full((games, MAX_PLIES, N_PLAYERS), np.nan)
    finals = np.zeros((games, STATE_SIZE), np.uint8)
    pi_move = np.zeros((games, positions * ROLLOUT_WIDEST), np.int64)
    pi_weight = np.zeros((games, positions * ROLLOUT_WIDEST))
    root = new_state()

    def one(g: int) -> None:
        n, used = _play_game(t, root, epsilon, positions, value_rollouts, margin,
                             seeded_rng(seed, first + g), plies[g], pi_count[g], value[g],
                             pi_move[g], pi_weight[g], finals[g])  # fmt: skip
        counts[g] = n, used

    with ThreadPoolExecutor(max(1, threads)) as pool:
        list(pool.map(one, range(games)))
    moves, pi_counts, ply_value, pm, pw = [], [], [], [], []
    out_scores = np.zeros((games, N_PLAYERS))
    out_z = np.zeros((games, N_PLAYERS))
    for g in range(games):
        n, used = counts[g]
        moves.append(plies[g, :n])
        pi_counts.append(pi_count[g, :n])
        ply_value.append(value[g, :n])
        pm.append(pi_move[g, :used])
        pw.append(pi_weight[g, :used])
        scores(finals[g], PIECE_SIZES, out_scores[g])
        utility(finals[g], PIECE_SIZES, 0.0, out_z[g])
    lengths = np.array([len(m) for m in moves], np.int64)
    return GameRecords(
        np.concatenate(moves).astype(np.int64),
        np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        np.concatenate([[0], np.cumsum(np.concatenate(pi_counts))]).astype(np.int64),
        np.concatenate(pm).astype(np.int64),
        np.concatenate(pw).astype(np.float32),
        out_scores,
        out_z,
        np.concatenate(ply_value).astype(np.float32),
    )
