"""The Monte Carlo (UCT) Hearts agent; games with every agent are `gameforge.engines.hearts.play`.

The Monte Carlo agent is the paper's: UCB1 over the cards the FALCON action set names for its
role (`gameforge.engines.hearts.actions`), each simulation dealing the unseen cards at random to the
players still to play in this trick (respecting known voids) and playing the trick out with the
rule-based agent; the reward is 1 - (points this player takes in the trick) / 16, 1 when another
player takes it. 200 simulations; the most visited card is played.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gameforge.engines.common.rng import uniform
from gameforge.engines.hearts.actions import (
    ALL_CARDS,
    N_ACTIONS,
    fallback_card,
    valid_actions,
)
from gameforge.engines.hearts.game import (
    RANDOM,
    RULE_BASED,
    legal_mask,
    rule_based_card,
    trick_points,
    trick_winner,
)

MONTE_CARLO = 2
KIND_NAMES = {"random": RANDOM, "rule-based": RULE_BASED, "monte-carlo": MONTE_CARLO}
UCB_C = 1.0  # rewards lie in [0, 1]


@njit(cache=True, nogil=True)
def _simulate_trick(
    first: int,
    hand: int,
    trick: np.ndarray,
    n: int,
    trick_no: int,
    broken: bool,
    played: int,
    voids: np.ndarray,
    me: int,
    leader: int,
    opts: np.ndarray,
    rng: np.ndarray,
    pool: np.ndarray,
    sim: np.ndarray,
) -> float:
    """Play `first` for `me`, deal the unseen cards to the later players, finish the trick."""
    unseen = ALL_CARDS & ~hand & ~played
    m = 0
    for c in range(52):
        if (unseen >> c) & 1:
            pool[m] = c
            m += 1
    for i in range(m - 1):  # shuffle
        j = i + int(uniform(rng) * (m - i))
        tmp = pool[i]
        pool[i] = pool[j]
        pool[j] = tmp
    taken = np.zeros(m, dtype=np.bool_)
    for i in range(n):
        sim[i] = trick[i]
    sim[n] = first
    size = 13 - trick_no
    for i in range(n + 1, 4):
        q = (leader + i) % 4
        given = 0
        opp = 0
        # Respect known voids first; if they cannot be met, fill with anything.
        for strict in (True, False):
            for k in range(m):
                if given == size:
                    break
                if taken[k]:
                    continue
                if strict and (voids[q] >> (pool[k] // 13)) & 1:
                    continue
                taken[k] = True
                given += 1
                opp |= 1 << pool[k]
        legal = legal_mask(opp, sim, i, trick_no, broken, opts)
        sim[i] = rule_based_card(legal, sim, i, played | (1 << first))
    if trick_winner(sim, leader) != me:
        return 1.0
    return 1.0 - min(trick_points(sim, 4), 16) / 16.0


@njit(cache=True, nogil=True)
def monte_carlo_card(
    hand: int,
    legal: int,
    trick: np.ndarray,
    n: int,
    trick_no: int,
    broken: bool,
    played: int,
    voids: np.ndarray,
    me: int,
    leader: int,
    opts: np.ndarray,
    sims: int,
    rng: np.ndarray,
) -> int:
    """UCT over the distinct cards the role's actions name (see the module docstring)."""
    named = np.empty(N_ACTIONS, dtype=np.int64)
    valid_actions(hand, legal, trick, n, played, voids, me, named)
    arms = np.empty(N_ACTIONS, dtype=np.int64)
    k = 0
    for a in range(N_ACTIONS):
        c = named[a]
        if c >= 0:
            seen = False
            for b in range(k):
                if arms[b] == c:
                    seen = True
            if not seen:
                arms[k] = c
                k += 1
    if k == 0:
        return fallback_card(legal)
    if k == 1:
        return arms[0]
    visits = np.zeros(k)
    total = np.zeros(k)
    pool = np.empty(52, dtype=np.int64)
    sim = np.empty(4, dtype=np.int64)
    for s in range(sims):
        if s < k:
            arm = s
        else:
            best = -1.0
            arm = 0
            log_n = np.log(s)
            for b in range(k):
                ucb = total[b] / visits[b] + UCB_C * np.sqrt(log_n / visits[b])
                if ucb > best:
                    best = ucb
                    arm = b
        r = _simulate_trick(
            arms[arm], hand, trick, n, trick_no, broken, played, voids, me, leader, opts, rng,
            pool, sim,
        )  # fmt: skip
        visits[arm] += 1
        total[arm] += r
    best_arm = 0
    for b in range(1, k):
        if visits[b] > visits[best_arm] or (
            visits[b] == visits[best_arm] and total[b] > total[best_arm]
        ):
            best_arm = b
    return arms[best_arm]
