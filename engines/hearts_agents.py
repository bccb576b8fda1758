"""Hearts games with every agent: random, rule-based, Monte Carlo (UCT) and logged play.

The Monte Carlo agent is the paper's: UCB1 over the cards the FALCON action set names for its
role (`engines.hearts_actions`), each simulation dealing the unseen cards at random to the
players still to play in this trick (respecting known voids) and playing the trick out with the
rule-based agent; the reward is 1 - (points this player takes in the trick) / 16, 1 when another
player takes it. 200 simulations; the most visited card is played.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engines.hearts import (
    HEARTS,
    PASSING,
    QUEEN_SPADES,
    RANDOM,
    RULE_BASED,
    apply_passing,
    deal,
    final_points,
    first_leader,
    legal_mask,
    random_card,
    rule_based_card,
    trick_points,
    trick_winner,
)
from engines.hearts_actions import (
    ALL_CARDS,
    N_ACTIONS,
    N_PERCEPTION,
    fallback_card,
    perception,
    valid_actions,
)
from engines.mccfr import _mix, _uniform

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
        j = i + int(_uniform(rng) * (m - i))
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


LOG_WIDTH = 5 + N_PERCEPTION  # game, seat, trick, position, card, then the perception values


@njit(cache=True, nogil=True)
def play_games(
    seed: int,
    first_game: int,
    kinds: np.ndarray,
    opts: np.ndarray,
    sims: int,
    points: np.ndarray,
    log: np.ndarray,
    qs_taker: np.ndarray,
) -> int:
    """Play games first_game.. (`points.shape[0]` of them) with `kinds[seat]`.

    Writes points[g, seat]. With a non-empty `log` (rows of `LOG_WIDTH` float32), every decision
    is logged as (game index in this call, seat, trick, position, card, perception...) and
    qs_taker[g] = (seat, trick) of who took Q♠; returns the number of log rows written.
    """
    hands = np.zeros(4, dtype=np.int64)
    trick = np.zeros(4, dtype=np.int64)
    taken = np.zeros(4, dtype=np.int64)
    voids = np.zeros(4, dtype=np.int64)
    feel = np.zeros(N_PERCEPTION)
    rng = np.zeros(1, dtype=np.uint64)
    rows = 0
    logging = log.shape[0] > 0
    for g in range(points.shape[0]):
        game = first_game + g
        deal(seed, game, hands)
        direction = opts[PASSING] if opts[PASSING] < 4 else (game % 4 + 1) % 4
        apply_passing(hands, direction)
        rng[0] = _mix(np.uint64(seed + 77) * np.uint64(0xD1B54A32D192ED03) + np.uint64(game))
        leader = first_leader(hands, opts)
        played = 0
        broken = False
        taken[:] = 0
        voids[:] = 0
        for t in range(13):
            for i in range(4):
                p = (leader + i) % 4
                legal = legal_mask(hands[p], trick, i, t, broken, opts)
                kind = kinds[p]
                if kind == RULE_BASED:
                    c = rule_based_card(legal, trick, i, played)
                elif kind == MONTE_CARLO:
                    c = monte_carlo_card(
                        hands[p], legal, trick, i, t, broken, played, voids, p, leader, opts,
                        sims, rng,
                    )  # fmt: skip
                else:
                    c = random_card(legal, rng)
                if logging:
                    perception(feel, hands[p], trick, i, t, played, broken, taken, voids, p, leader)
                    log[rows, 0] = g
                    log[rows, 1] = p
                    log[rows, 2] = t
                    log[rows, 3] = i
                    log[rows, 4] = c
                    log[rows, 5:] = feel
                    rows += 1
                if i > 0 and c // 13 != trick[0] // 13:
                    voids[p] |= 1 << (trick[0] // 13)
                trick[i] = c
                hands[p] &= ~(1 << c)
                played |= 1 << c
                if c // 13 == HEARTS or c == QUEEN_SPADES:
                    broken = True
            w = trick_winner(trick, leader)
            taken[w] += trick_points(trick, 4)
            if logging:
                for i in range(4):
                    if trick[i] == QUEEN_SPADES:
                        qs_taker[g, 0] = w
                        qs_taker[g, 1] = t
            leader = w
        final_points(taken, opts, points[g])
    return rows
