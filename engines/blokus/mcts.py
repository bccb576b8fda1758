"""MCTS-MAXN with Progressive History for four-player Blokus (the paper's baseline), in numba.

Every node keeps its visit count and the reward sum of each of the four colours (MAXN). At a node
where colour P moves, the child maximising

    w_P(i) / n(i) + C sqrt(ln n(parent) / n(i)) + (s_P(a) / n_P(a)) W / (n(i) - w_P(i) + 1)

is followed (Nijssen and Winands' Progressive History: s_P(a), n_P(a) are the reward sum and
count of placement a for colour P over every simulation so far, tree and rollout moves alike);
unvisited children come first, the one with the best history average first. A leaf is expanded
on its second visit (threshold 1). Rollouts are epsilon-greedy: with probability epsilon a
uniformly random legal move, otherwise a random legal move of the largest piece that fits. The
reward of a colour is 1 for the sole top score, 0.5 for a shared top score and 0 otherwise (the
paper: 1 win, 0 loss). The most visited root child is played, ties to the better mean.

Paper parameters: C = 0.2, W = 5, epsilon = 0.05.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from gameforge.engines.blokus.game import (
    CELLS,
    CORNER,
    FLAGS,
    N_PLAYERS,
    PIECE_SIZES,
    TO_MOVE,
    Tables,
    advance,
    is_legal,
    legal_moves,
    outcome,
    place,
    utility,
)
from gameforge.engines.common.rng import mix, uniform

MAX_PLIES = 84


class Tree:
    """Preallocated node arrays for one search of up to `capacity` nodes."""

    def __init__(self, capacity: int, n_moves: int) -> None:
        self.move = np.zeros(capacity, np.int64)
        self.visits = np.zeros(capacity, np.int64)
        self.reward = np.zeros((capacity, N_PLAYERS))
        self.first_child = np.zeros(capacity, np.int64)
        self.n_children = np.zeros(capacity, np.int64)
        self.stamp = np.zeros(n_moves + 1, np.int64)
        self.moves = np.zeros(n_moves, np.int64)


class History:
    """Progressive History tables of one searching player for one game: [colour, placement]."""

    def __init__(self, n_moves: int) -> None:
        self.total = np.zeros((N_PLAYERS, n_moves))
        self.count = np.zeros((N_PLAYERS, n_moves))


SAMPLE_TRIES = 48  # rejection-sampling draws per size class before enumerating it exactly


@njit(cache=True, nogil=True)
def _sample_class(
    s: np.ndarray,
    lo_size: int,
    hi_size: int,
    anchors: np.ndarray,
    n_anchors: int,
    t: Tables,
    rng: np.ndarray,
) -> int:
    """A uniformly random legal placement of lo_size..hi_size squares by rejection sampling,
    or -1 after `SAMPLE_TRIES` failed draws (which proves nothing).

    A draw is a uniform (anchor, placement in the anchor's list) pair; a placement covering k
    anchors is drawn k times as often, so a legal one is accepted with probability 1 / k.
    """
    cum = np.empty(n_anchors + 1, np.int64)  # cumulative segment widths over the anchors
    cum[0] = 0
    for i in range(n_anchors):
        c = anchors[i]
        cum[i + 1] = cum[i] + t.size_bound[c, lo_size] - t.size_bound[c, hi_size + 1]
    total = cum[n_anchors]
    if total == 0:
        return -1
    base = FLAGS + s[TO_MOVE] * CELLS
    m = -1
    for _ in range(SAMPLE_TRIES):
        u = int(uniform(rng) * total)
        i = int(np.searchsorted(cum, u, side="right")) - 1
        m = t.by_cell[t.size_bound[anchors[i], hi_size + 1] + u - cum[i]]
        if not is_legal(s, m, t):
            continue
        k = 0
        for j in range(5):
            d = t.cells[m, j]
            if d >= 0 and s[base + d] == CORNER:
                k += 1
        if k == 1 or uniform(rng) * k < 1.0:
            return m
    return -1


@njit(cache=True, nogil=True)
def rollout_move(
    s: np.ndarray,
    t: Tables,
    stamp: np.ndarray,
    moves: np.ndarray,
    anchors: np.ndarray,
    epsilon: float,
    rng: np.ndarray,
) -> int:
    """The epsilon-greedy rollout policy's placement for the colour to move, -1 if stuck.

    Exactly the policy of the module docstring; rejection sampling finds the move without
    listing every legal placement, and a size class is enumerated only when sampling fails.
    """
    base = FLAGS + s[TO_MOVE] * CELLS
    n_anchors = 0
    for c in range(CELLS):
        if s[base + c] == CORNER:
            anchors[n_anchors] = c
            n_anchors += 1
    if uniform(rng) < epsilon:
        m = _sample_class(s, 1, 5, anchors, n_anchors, t, rng)
        if m >= 0:
            return m
        n = legal_moves(s, t, stamp, moves, 1)
        return moves[int(uniform(rng) * n)] if n > 0 else -1
    for size in range(5, 0, -1):
        m = _sample_class(s, size, size, anchors, n_anchors, t, rng)  # fmt: skip
        if m >= 0:
            return m
        # No pentomino etc. fits unless enumeration finds one: larger classes are known empty.
        n = legal_moves(s, t, stamp, moves, size)
        if n > 0:
            return moves[int(uniform(rng) * n)]
    return -1


ROLLOUT_EPSILON = 0.05  # the random-placement share of MCTS-MAXN's rollouts (`mcts_move`)


@njit(cache=True, nogil=True)
def mean_rollouts(
    s0: np.ndarray,
    k: int,
    t: Tables,
    margin: float,
    stamp: np.ndarray,
    moves: np.ndarray,
    anchors: np.ndarray,
    rng: np.ndarray,
    out: np.ndarray,
) -> None:
    """out[c] = the mean final `utility` of colour c over k games played to the end from s0 (left
    as it is) with the rollout policy (epsilon `ROLLOUT_EPSILON`). The rollout value targets
    average many (`engines.blokus.rollouts`); BlokusZero's mixed leaf evaluation takes one."""
    s = s0.copy()
    z = np.zeros(N_PLAYERS)
    out[:] = 0.0
    for _ in range(k):
        s[:] = s0
        alive = True
        while alive:
            m = rollout_move(s, t, stamp, moves, anchors, ROLLOUT_EPSILON, rng)
            if m < 0:
                break
            place(s, m, t)
            alive = advance(s, t)
        utility(s, PIECE_SIZES, margin, z)
        for c in range(N_PLAYERS):
            out[c] += z[c] / k


@njit(cache=True, nogil=True)
def rewards(s: np.ndarray, out: np.ndarray) -> None:
    """MAXN rewards of a finished game: 1 sole winner, 0.5 shared top score, 0 otherwise."""
    outcome(s, PIECE_SIZES, out)
    for p in range(N_PLAYERS):
        out[p] = 0.5 * (out[p] + 1.0)


@njit(cache=True, nogil=True)
def search(
    root: np.ndarray,
    sims: int,
    c_uct: float,
    w_history: float,
    epsilon: float,
    t: Tables,
    move: np.ndarray,
    visits: np.ndarray,
    reward: np.ndarray,
    first_child: np.ndarray,
    n_children: np.ndarray,
    stamp: np.ndarray,
    moves: np.ndarray,
    hist_total: np.ndarray,
    hist_count: np.ndarray,
    rng: np.ndarray,
) -> int:
    """Run `sims` simulations from `root` (colour to move must have a move); return the most
    visited placement. Tree arrays are scratch; history tables are updated in place."""
    capacity = move.shape[0]
    s = root.copy()
    path = np.zeros(MAX_PLIES + 2, np.int64)  # tree nodes of this simulation
    played = np.zeros((MAX_PLIES + 1, 2), np.int64)  # (colour, placement) of every move
    r = np.zeros(N_PLAYERS)
    anchors = np.zeros(CELLS, np.int64)
    visits[0] = 0
    reward[0, :] = 0.0
    n_children[0] = -1
    used = 1
    for _ in range(sims):
        s[:] = root
        node = 0
        depth = 0
        n_played = 0
        path[0] = 0
        alive = True
        while alive:
            if n_children[node] < 0:
                if visits[node] == 0 and node != 0:
                    break  # a fresh leaf: roll out from here
                n = legal_moves(s, t, stamp, moves, 1)
                if used + n > capacity:
                    break
                first_child[node] = used
                n_children[node] = n
                for j in range(n):
                    c = used + j
                    move[c] = moves[j]
                    visits[c] = 0
                    reward[c, :] = 0.0
                    n_children[c] = -1
                used += n
            p = s[TO_MOVE]
            best = -1.0
            pick = first_child[node]
            log_n = np.log(max(visits[node], 1))
            for c in range(first_child[node], first_child[node] + n_children[node]):
                a = move[c]
                h = hist_total[p, a] / hist_count[p, a] if hist_count[p, a] > 0 else 0.5
                if visits[c] == 0:
                    v = 1e6 + h + 1e-6 * uniform(rng)
                else:
                    q = reward[c, p] / visits[c]
                    v = (
                        q
                        + c_uct * np.sqrt(log_n / visits[c])
                        + h * w_history / (visits[c] - reward[c, p] + 1.0)
                    )
                if v > best:
                    best = v
                    pick = c
            node = pick
            depth += 1
            path[depth] = node
            played[n_played, 0] = p
            played[n_played, 1] = move[node]
            n_played += 1
            place(s, move[node], t)
            alive = advance(s, t)
        while alive:
            p = s[TO_MOVE]
            m = rollout_move(s, t, stamp, moves,
                             anchors, epsilon, rng)  # fmt: skip
            played[n_played, 0] = p
            played[n_played, 1] = m
            n_played += 1
            place(s, m, t)
            alive = advance(s, t)
        rewards(s, r)
        for d in range(depth + 1):
            nd = path[d]
            visits[nd] += 1
            for q in range(N_PLAYERS):
                reward[nd, q] += r[q]
        for k in range(n_played):
            q = played[k, 0]
            hist_total[q, played[k, 1]] += r[q]
            hist_count[q, played[k, 1]] += 1.0
    # The most visited child; ties (common when sims < children) go to the best mean reward.
    me = root[TO_MOVE]
    best_child = first_child[0]
    for c in range(first_child[0], first_child[0] + n_children[0]):
        b = best_child
        if visits[c] > visits[b] or (
            visits[c] == visits[b] > 0 and reward[c, me] / visits[c] > reward[b, me] / visits[b]
        ):
            best_child = c
    return move[best_child]


def seeded_rng(seed: int, game: int) -> np.ndarray:
    """A counter-based random stream for game `game` of run `seed`."""
    key = (seed * 0x9E3779B97F4A7C15 + game) % 2**64  # wrapping in Python ints: no overflow
    return np.array([mix(np.uint64(key))], np.uint64)


@dataclass(frozen=True)
class SearchSettings:
    """MCTS-MAXN's constants: the UCT exploration C, the history weight W and the rollouts'
    random-placement share epsilon (defaults: the paper's)."""

    c_uct: float = 0.2
    w_history: float = 5.0
    epsilon: float = ROLLOUT_EPSILON


PAPER_SETTINGS = SearchSettings()


def mcts_move(
    state: np.ndarray,
    t: Tables,
    tree: Tree,
    history: History,
    sims: int,
    rng: np.ndarray,
    settings: SearchSettings = PAPER_SETTINGS,
) -> int:
    """MCTS-MAXN's placement for the colour to move in `state`."""
    return int(
        search(
            state,
            sims,
            settings.c_uct,
            settings.w_history,
            settings.epsilon,
            t,
            tree.move,
            tree.visits,
            tree.reward,
            tree.first_child,
            tree.n_children,
            tree.stamp,
            tree.moves,
            history.total,
            history.count,
            rng,
        )  # fmt: skip
    )
